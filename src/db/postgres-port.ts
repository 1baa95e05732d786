import { SQL } from "bun";
import { AsyncLocalStorage } from "node:async_hooks";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import { log } from "../log.ts";
import { ConcurrentSavepointError, type DatabasePort, type PortOrm, type Row } from "./port.ts";
import * as pg from "./schema-pg/index.ts";
import type * as schema from "./schema.ts";

type Orm = BunSQLDatabase<typeof pg>;

/** Where a flow stands: in a transaction on the reserved connection `sql`, at savepoint `depth`. */
interface Frame {
  sql: SQL;
  tx: { depth: number; tasks: (() => void)[] };
  depth: number;
}

export interface PostgresOptions {
  /** Connections in the pool (Bun.SQL's default otherwise). */
  max?: number;
}

/**
 * The port over PostgreSQL, with Bun's own client (Bun.SQL) and drizzle's bun-sql driver. A
 * transaction holds a connection of the pool (`sql.begin`) for as long as its work runs, so
 * transactions run side by side; nested ones are savepoints on that connection (`savepoint`).
 * Raw statements and builders find the current transaction's connection through
 * AsyncLocalStorage, as on SQLite; outside one they take any connection of the pool. drizzle
 * is given a client that sends each statement that way, so a builder prepared once (at
 * construction) also runs in whichever transaction executes it.
 *
 * int8 columns (ids, times, counts) come back as numbers: the client reads them as BigInt,
 * which raw statements turn into numbers (every id and time is below 2^53) and drizzle's
 * bigint columns in mode "number" too.
 */
export class PostgresPort implements DatabasePort {
  readonly dialect = "postgres" as const;
  readonly tables = pg as unknown as typeof schema;
  readonly orm: PortOrm;
  private client: SQL;
  private scope = new AsyncLocalStorage<Frame>();
  /** Writes of this process ended (a transaction, or a statement outside one that is no SELECT): `generation`. */
  private writes = 0;

  constructor(url: string, options: PostgresOptions = {}) {
    this.client = new SQL(url, { bigint: true, ...(options.max ? { max: options.max } : {}) });
    // drizzle's session runs every statement through `unsafe`; its own transaction() is not used.
    const routed = { unsafe: (text: string, params?: unknown[]) => this.counted(text, this.sql().unsafe(text, params)) } as unknown as SQL;
    this.orm = drizzle({ client: routed, schema: pg }) as Orm as unknown as PortOrm;
  }

  async all<T = Row>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    const rows = (await this.counted(text, this.sql().unsafe(positional(text), params as unknown[]))) as unknown as Row[];
    return rows.map(numbersInRow) as T[];
  }

  async get<T = Row>(text: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.all<T>(text, params))[0];
  }

  async values(text: string, params: readonly unknown[] = []): Promise<unknown[][]> {
    const rows = (await this.counted(text, this.sql().unsafe(positional(text), params as unknown[])).values()) as unknown[][];
    return rows.map((row) => row.map(number));
  }

  async run(text: string, params: readonly unknown[] = []): Promise<number> {
    return this.changes(await this.counted(text, this.sql().unsafe(positional(text), params as unknown[])));
  }

  /**
   * Counts every write of this process once it ended: a transaction's at its end, a statement's
   * outside one when it answered (after it, a document built before is built again; one built
   * while it ran may have read the rows before, and is too). Other processes' writes are not
   * seen here.
   */
  generation(): string {
    return String(this.writes);
  }

  /** The query, its end counted when it may have written outside a transaction (a transaction's are counted at its end). */
  private counted<Q extends { then: Promise<unknown>["then"]; values(): Promise<unknown> }>(text: string, query: Q): Q {
    if (this.scope.getStore() !== undefined || READ.test(text)) return query;
    const ended = <V>(value: V) => {
      this.writes++;
      return value;
    };
    const failed = (e: unknown) => {
      this.writes++;
      throw e;
    };
    return {
      then: (ok?: (v: unknown) => unknown, fail?: (e: unknown) => unknown) => query.then(ended, failed).then(ok, fail),
      values: () => query.values().then(ended, failed),
    } as unknown as Q;
  }

  changes(result: unknown): number {
    return (result as { count?: number } | undefined)?.count ?? 0;
  }

  get inTransaction(): boolean {
    return this.scope.getStore() !== undefined;
  }

  afterCommit(task: () => void) {
    const frame = this.scope.getStore();
    if (frame) frame.tx.tasks.push(task);
    else runTask(task);
  }

  async transaction<T>(work: () => Promise<T> | T): Promise<T> {
    const frame = this.scope.getStore();
    if (frame) return this.savepoint(frame, work);
    const tx = { depth: 0, tasks: [] as (() => void)[] };
    let value: T;
    try {
      value = (await this.client.begin((sql) => this.scope.run({ sql, tx, depth: 0 }, async () => work()))) as T;
    } finally {
      this.writes++;
    }
    for (const task of tx.tasks) runTask(task);
    return value;
  }

  atomic<T>(work: () => Promise<T> | T): Promise<T> {
    return this.transaction(work);
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private sql(): SQL {
    return this.scope.getStore()?.sql ?? this.client;
  }

  private async savepoint<T>(frame: Frame, work: () => Promise<T> | T): Promise<T> {
    const tx = frame.tx;
    if (tx.depth !== frame.depth) throw new ConcurrentSavepointError();
    const depth = ++tx.depth;
    const mark = tx.tasks.length;
    try {
      return (await (frame.sql as SQL & { savepoint(fn: (sql: SQL) => Promise<unknown>): Promise<unknown> }).savepoint((sql) =>
        this.scope.run({ sql, tx, depth }, async () => work()),
      )) as T;
    } catch (e) {
      tx.tasks.length = mark;
      throw e;
    } finally {
      tx.depth = depth - 1;
    }
  }
}

/** A statement that writes nothing (what `generation` need not count). */
const READ = /^\s*select\b/i;

/** `?` placeholders, numbered as PostgreSQL wants them; a `?` inside quotes is left alone. */
const numbered = new Map<string, string>();
export function positional(text: string): string {
  let out = numbered.get(text);
  if (out !== undefined) return out;
  out = "";
  let n = 0;
  let quote: string | null = null;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if (ch === "?") {
      out += `$${++n}`;
      continue;
    }
    out += ch;
  }
  if (numbered.size < 1000) numbered.set(text, out);
  return out;
}

function number(value: unknown): unknown {
  return typeof value === "bigint" ? Number(value) : value;
}

function numbersInRow(row: Row): Row {
  for (const key in row) {
    const value = row[key];
    if (typeof value === "bigint") row[key] = Number(value);
  }
  return row;
}

function runTask(task: () => void) {
  try {
    task();
  } catch (e) {
    // The data is committed whatever a transport does with the news (as AfterCommit on SQLite).
    log("error", "after-commit task failed", { error: String(e).split("\n")[0] });
  }
}
