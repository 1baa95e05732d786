import type { SqliteRemoteDatabase } from "drizzle-orm/sqlite-proxy";
import type * as schema from "./schema.ts";

/**
 * The database port (issue 31): what services use instead of bun:sqlite and drizzle's
 * synchronous API, so that the same service runs on SQLite and on PostgreSQL. Every call is
 * awaited. docs/architecture.md ("The database port") gives the rules; in short:
 *
 * - Raw statements take positional `?` parameters (the PostgreSQL adapter numbers them).
 * - Builders: `await port.orm.select()...` with the tables of `port.tables`. `.all()`, `.get()`
 *   and `.run()` on a builder are SQLite's alone: await the builder itself (and `limit(1)` then
 *   take `[0]` for one row), and count changed rows with `port.changes(result)`. A builder
 *   prepared once (`.prepare()`, with `sql.placeholder`s) runs with `.execute(values)`.
 * - `transaction(work)`: `work` is async; nested calls are savepoints; anything that uses the
 *   port inside `work` (the `within` listeners too) runs in that transaction without being
 *   given it, because the current transaction is found through AsyncLocalStorage. Inside a
 *   transaction, await only the port: on SQLite a transaction holds the one connection, and a
 *   transaction still open when the event loop turns is rolled back with an error.
 * - `afterCommit(task)`: after the outermost COMMIT of the current transaction, never after a
 *   rollback (of it, or of the savepoint that queued it); at once outside any transaction.
 */
export interface DatabasePort {
  readonly dialect: Dialect;
  /**
   * drizzle, for builders. Typed as SQLite's asynchronous drizzle over the SQLite tables: the
   * PostgreSQL schema is generated from the SQLite one and a test keeps them equal, so the
   * builders a service writes are the same on both (what differs is the dialect's to render).
   * Its statements run in the calling flow's transaction, prepared ones too.
   */
  readonly orm: PortOrm;
  /** The tables of this dialect (typed as SQLite's, see `orm`). */
  readonly tables: typeof schema;
  all<T = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  get<T = Row>(text: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Rows as arrays of values, in the order of the statement's columns. */
  values(text: string, params?: readonly unknown[]): Promise<unknown[][]>;
  /** Runs a write; answers how many rows it changed. */
  run(text: string, params?: readonly unknown[]): Promise<number>;
  transaction<T>(work: () => Promise<T> | T): Promise<T>;
  /**
   * `transaction` for src/infra's GroupCommit: on SQLite it answers synchronously when the work
   * did and nothing had to wait (a throw is then thrown, not a rejected promise), so a batch of
   * synchronous work stays one synchronous run. On PostgreSQL it is `transaction`.
   */
  atomic<T>(work: () => Promise<T> | T): T | Promise<T>;
  /** Whether the calling flow is inside a transaction of the port. */
  readonly inTransaction: boolean;
  afterCommit(task: () => void): void;
  /** The rows a builder's write changed (`await port.orm.update(...)`'s result). */
  changes(result: unknown): number;
  /**
   * A value that moves whenever committed data may have changed, by this process or any other
   * writer: what a document kept as bytes is keyed on (src/http/kept-json.ts). It may move with
   * nothing changed (a rebuild), never stay with something changed. Read it before the reads
   * of what is kept under it.
   */
  generation(): string | Promise<string>;
  /**
   * Another writer's commits, seen synchronously where they can be (SQLite's data_version, a
   * pragma of the connection: a command's commit moves it), for caches checked on every hit
   * (the tokens'). Null on PostgreSQL, where other processes tell their changes through the
   * cache generations (src/infra/pg-generations.ts).
   */
  readonly otherWriters: (() => number) | null;
  close(): Promise<void>;
}

export type Dialect = "sqlite" | "postgres";
export type Row = Record<string, unknown>;
export type PortOrm = SqliteRemoteDatabase<typeof schema>;

/** Whether DATABASE_URL names PostgreSQL (anything else is the embedded SQLite). */
export function isPostgresUrl(url: string | undefined): boolean {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url);
}

/**
 * A transaction's nested transactions (savepoints) run one after another: two open beside each
 * other on one connection would interleave their statements, and rolling back the first would
 * undo the second. The depth a frame saw must be the transaction's innermost.
 */
export class ConcurrentSavepointError extends Error {
  constructor() {
    super("two nested transactions of one transaction ran at the same time: await each before starting the next");
  }
}

export function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
