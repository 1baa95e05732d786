import type { Database as Sqlite } from "bun:sqlite";
import { AsyncLocalStorage } from "node:async_hooks";
import { drizzle } from "drizzle-orm/sqlite-proxy";
import { afterCommitOf, type AfterCommit } from "../infra/after-commit.ts";
import { ConcurrentSavepointError, isThenable, type DatabasePort, type PortOrm, type Row } from "./port.ts";
import * as schema from "./schema.ts";

/** An open write transaction of the port: the connection is its until `done`. */
interface Tx {
  done: Promise<void>;
  release: () => void;
  /** How many savepoints are open inside it. */
  depth: number;
  heldAcrossTurn: boolean;
}

/** Where a flow stands: in `tx`, at savepoint depth `depth`. */
interface Frame {
  tx: Tx;
  depth: number;
}

/**
 * A transaction still open when the event loop turned: it awaited something other than the
 * database (a fetch, a timer), holding the one connection while other work waited for it. It is
 * rolled back.
 */
export class TransactionHeldAcrossTurnError extends Error {
  constructor() {
    super("a transaction stayed open across a turn of the event loop (it awaited something other than the database) and was rolled back");
  }
}

/**
 * The port over the one bun:sqlite connection. On one connection, every statement run while a
 * transaction is open is part of it, whoever runs it. So a port transaction is one critical
 * section (BEGIN IMMEDIATE ... COMMIT under a lock): the flow that opened it (found through
 * AsyncLocalStorage, savepoints included) runs its statements at once; a statement, builder or
 * transaction of any other flow waits until it ends, then runs against what was committed.
 * The statements themselves are synchronous (a few µs), so waiting is short, as long as work
 * inside a transaction awaits nothing but the database, which is checked: see
 * TransactionHeldAcrossTurnError.
 *
 * A transaction whose work returns without a promise commits before `transaction` returns
 * (GroupCommit's batches of synchronous work stay one synchronous run, as before the port).
 *
 * Reads outside a transaction share one read transaction until the event loop turns (see
 * `readFrom`): in WAL mode each statement on its own takes and releases the shared-memory read
 * lock (two system calls, about 3 µs, more than most of a page's statements cost), and a page
 * reads four to ten. A write never waits for it: it ends the read transaction first.
 */
export class SqlitePort implements DatabasePort {
  readonly dialect = "sqlite" as const;
  readonly tables = schema;
  readonly orm: PortOrm;
  private scope = new AsyncLocalStorage<Frame>();
  private open: Tx | null = null;
  private commits: AfterCommit;
  private savepoints = 0;
  /** The read transaction the reads of this turn share (`readFrom`), and whether its end is scheduled. */
  private reading = false;
  private endScheduled = false;
  private readonly endOfTurn = () => {
    this.endScheduled = false;
    try {
      this.endReads();
    } catch {
      // The connection was closed under it (a shutdown, a test): nothing is left to end.
    }
  };
  private dataVersion;
  private totalChanges;
  private begin: ReturnType<Sqlite["prepare"]>;
  private commitReads: ReturnType<Sqlite["prepare"]>;
  /** Whether a statement's text only reads (by its text, kept: the texts are the program's few). */
  private readsOnly = new Map<string, boolean>();

  /**
   * `shareReads`: false for a serving thread's read-only connection, whose requests must see the
   * main thread's commit as soon as it is told of it (docs/architecture.md, "Serving threads").
   */
  constructor(
    private sqlite: Sqlite,
    private shareReads = true,
  ) {
    this.commits = afterCommitOf(sqlite);
    this.begin = sqlite.prepare("BEGIN");
    this.commitReads = sqlite.prepare("COMMIT");
    this.dataVersion = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
    this.totalChanges = sqlite.query<{ c: number }, []>("SELECT total_changes() AS c");
    // drizzle's asynchronous SQLite driver, over the same statements and the same lock.
    this.orm = drizzle((text, params, method) => this.execute(text, params, method), { schema });
  }

  async all<T = Row>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    if (this.foreign()) await this.ready();
    this.readFrom(text);
    return this.sqlite.query(text).all(...(params as never[])) as T[];
  }

  async get<T = Row>(text: string, params: readonly unknown[] = []): Promise<T | undefined> {
    if (this.foreign()) await this.ready();
    this.readFrom(text);
    return (this.sqlite.query(text).get(...(params as never[])) ?? undefined) as T | undefined;
  }

  async values(text: string, params: readonly unknown[] = []): Promise<unknown[][]> {
    if (this.foreign()) await this.ready();
    this.readFrom(text);
    return this.sqlite.query(text).values(...(params as never[])) as unknown[][];
  }

  async run(text: string, params: readonly unknown[] = []): Promise<number> {
    if (this.foreign()) await this.ready();
    this.endReads();
    return this.sqlite.query(text).run(...(params as never[])).changes;
  }

  /**
   * Before a statement outside a port transaction: a read joins the read transaction of this
   * turn (begun here if none is open), anything else ends it, so that a write commits at once
   * as before. Other flows' reads in it are harmless: on one connection nothing else commits
   * while it is open (every write of this process ends it first), so they see what they would
   * have seen outside it. It ends when the loop turns, so it never holds a snapshot for long
   * (other processes' commits, the WAL's checkpoints).
   */
  private readFrom(text: string) {
    if (!this.shareReads || this.open !== null) return;
    let reads = this.readsOnly.get(text);
    if (reads === undefined) {
      reads = /^\s*\(?\s*(SELECT|WITH)\b/i.test(text) && !/\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(text);
      this.readsOnly.set(text, reads);
    }
    if (!reads) return this.endReads();
    if (this.reading || this.sqlite.inTransaction) return;
    this.begin.run();
    this.reading = true;
    this.commits.reading = true;
    if (!this.endScheduled) {
      this.endScheduled = true;
      setImmediate(this.endOfTurn);
    }
  }

  /**
   * Ends the shared read transaction, if one is open: before a write, a transaction, or when the
   * loop turns. A statement run on the connection itself (`DbHandle.sqlite`, outside the port)
   * that wrote while it was open joined it and commits here; what was queued after it runs now.
   */
  endReads() {
    if (!this.reading) return;
    this.reading = false;
    this.commits.reading = false;
    if (this.sqlite.inTransaction) {
      try {
        this.commitReads.run();
      } catch (e) {
        // Only such a write that joined it can fail to commit: it is undone, not left open.
        if (this.sqlite.inTransaction) this.sqlite.run("ROLLBACK");
        this.commits.discard(0);
        throw e;
      }
    }
    this.commits.committed();
  }

  changes(result: unknown): number {
    return (result as { changes?: number } | undefined)?.changes ?? 0;
  }

  /**
   * data_version moves when another connection (a command, a serving thread's writer) commits;
   * total_changes() counts this connection's writes (every row, even in a transaction rolled
   * back: only an extra rebuild). Two trivial statements, no table read.
   */
  generation(): string {
    return `${this.dataVersion.get()!.data_version}.${this.totalChanges.get()!.c}`;
  }

  readonly otherWriters = () => this.dataVersion.get()!.data_version;

  get inTransaction(): boolean {
    return this.open !== null && this.scope.getStore()?.tx === this.open;
  }

  afterCommit(task: () => void) {
    if (this.inTransaction) this.commits.queue(task);
    else this.commits.defer(task, false);
  }

  transaction<T>(work: () => Promise<T> | T): Promise<T> {
    try {
      return Promise.resolve(this.atomic(work));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** `transaction`, answering synchronously when `work` did and nothing had to wait (GroupCommit). */
  atomic<T>(work: () => Promise<T> | T): T | Promise<T> {
    const frame = this.scope.getStore();
    if (frame && frame.tx === this.open) return this.savepoint(frame, work);
    if (this.open) return this.ready().then(() => this.atomic(work));
    this.endReads();
    return this.outermost(work);
  }

  close(): Promise<void> {
    this.endReads();
    this.sqlite.close();
    return Promise.resolve();
  }

  private foreign(): boolean {
    return this.open !== null && this.scope.getStore()?.tx !== this.open;
  }

  /** Resolves once no transaction of another flow holds the connection. */
  private async ready(): Promise<void> {
    while (this.foreign()) await this.open!.done;
  }

  /** drizzle's callback: rows as arrays (one array for `get`); a write answers bun's changes as well (`changes`). */
  private async execute(text: string, params: unknown[], method: "run" | "all" | "values" | "get"): Promise<{ rows: any[] }> {
    if (this.foreign()) await this.ready();
    if (method === "run") this.endReads();
    else this.readFrom(text);
    // Through prepare (openDatabase caches its statements and counts them for the benchmarks).
    const statement = this.sqlite.prepare(text);
    if (method === "run") return { rows: [], ...statement.run(...(params as never[])) };
    const rows = statement.values(...(params as never[])) as unknown[][];
    return { rows: method === "get" ? (rows[0] as unknown[]) : rows };
  }

  private outermost<T>(work: () => Promise<T> | T): T | Promise<T> {
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tx: Tx = { done, release, depth: 0, heldAcrossTurn: false };
    const mark = this.commits.mark();
    this.sqlite.run("BEGIN IMMEDIATE");
    this.open = tx;
    let result: T | Promise<T>;
    try {
      result = this.scope.run({ tx, depth: 0 }, work);
    } catch (e) {
      this.rollback(tx, mark);
      throw e;
    }
    if (!isThenable(result)) {
      this.commit(tx, mark);
      return result;
    }
    // A statement of the port resolves within the same turn; an immediate runs only once the
    // loop turns, so it fires only for work that awaited something else.
    const turn = setImmediate(() => (tx.heldAcrossTurn = true));
    return result.then(
      (value) => {
        clearImmediate(turn);
        if (tx.heldAcrossTurn) {
          this.rollback(tx, mark);
          throw new TransactionHeldAcrossTurnError();
        }
        this.commit(tx, mark);
        return value;
      },
      (error) => {
        clearImmediate(turn);
        this.rollback(tx, mark);
        throw error;
      },
    );
  }

  private commit(tx: Tx, mark: number) {
    try {
      this.sqlite.run("COMMIT");
    } catch (e) {
      // A deferred constraint fails at COMMIT: the transaction is undone.
      this.rollback(tx, mark);
      throw e;
    }
    this.end(tx);
    this.commits.committed();
  }

  private rollback(tx: Tx, mark: number) {
    if (this.sqlite.inTransaction) this.sqlite.run("ROLLBACK");
    this.commits.discard(mark);
    this.end(tx);
  }

  private end(tx: Tx) {
    this.open = null;
    tx.release();
  }

  private savepoint<T>(frame: Frame, work: () => Promise<T> | T): T | Promise<T> {
    const tx = frame.tx;
    if (tx.depth !== frame.depth) throw new ConcurrentSavepointError();
    const name = `port_${++this.savepoints}`;
    const depth = ++tx.depth;
    const mark = this.commits.mark();
    this.sqlite.run(`SAVEPOINT ${name}`);
    const keep = () => {
      this.sqlite.run(`RELEASE ${name}`);
      tx.depth = depth - 1;
    };
    const undo = () => {
      this.sqlite.run(`ROLLBACK TO ${name}`);
      this.sqlite.run(`RELEASE ${name}`);
      this.commits.discard(mark);
      tx.depth = depth - 1;
    };
    let result: T | Promise<T>;
    try {
      result = this.scope.run({ tx, depth }, work);
    } catch (e) {
      undo();
      throw e;
    }
    if (!isThenable(result)) {
      keep();
      return result;
    }
    return result.then(
      (value) => {
        keep();
        return value;
      },
      (error) => {
        undo();
        throw error;
      },
    );
  }
}
