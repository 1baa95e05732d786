import type { Database } from "bun:sqlite";
import { log } from "../log.ts";

/**
 * Work that may only happen once the data written so far is durable: telling streams (and
 * later federation delivery and push) about a write. Such work is queued while the
 * connection is inside a transaction and run right after the outermost COMMIT; work queued
 * inside a savepoint that rolls back, or a transaction that rolls back, is dropped with it.
 * Outside any transaction every statement has already committed, so the work runs at once.
 *
 * There is one queue per connection, because the transaction belongs to the connection: the
 * database port (SqlitePort, which GroupCommit's batches go through too) marks the queue when a
 * transaction or savepoint begins, cuts it back to the mark when it rolls back, and runs it
 * after the outermost COMMIT. SQLite itself offers commit and rollback hooks, but bun:sqlite
 * does not expose them.
 */
export class AfterCommit {
  private pending: (() => void)[] = [];
  /**
   * The connection is in the database port's shared read transaction (SqlitePort's `readFrom`),
   * not a write's: work deferred now has nothing to wait for.
   */
  reading = false;

  constructor(private sqlite: Database) {}

  /**
   * Runs `task` after the current transaction commits; at once when there is none. The database
   * port says itself whether the calling flow is in a transaction (the connection may be in
   * another flow's, which the task must not wait for); the serving threads' render changes
   * (ServingThreads.renderChanged) ask the connection: any write transaction open on it, which
   * on one connection is the one whose write changed the rendering.
   */
  defer(task: () => void, inTransaction = this.sqlite.inTransaction && !this.reading) {
    if (inTransaction) this.pending.push(task);
    else runTask(task);
  }

  /** Queues `task` for the open transaction's commit (the port, which knows one is open). */
  queue(task: () => void) {
    this.pending.push(task);
  }

  /** Where the queue stands: a savepoint's start. */
  mark(): number {
    return this.pending.length;
  }

  /** The savepoint (or transaction) begun at `mark` rolled back: what it queued never happened. */
  discard(mark: number) {
    if (this.pending.length > mark) this.pending.length = mark;
  }

  /** The outermost transaction committed: runs everything it queued, in order. */
  committed() {
    // Tasks may open transactions of their own; those queue and run on their own commit.
    const tasks = this.pending;
    this.pending = [];
    for (const task of tasks) runTask(task);
  }
}

function runTask(task: () => void) {
  try {
    task();
  } catch (e) {
    // The data is committed whatever a transport does with the news; one failing must not
    // keep the others from hearing it.
    log("error", "after-commit task failed", { error: String(e).split("\n")[0] });
  }
}

const queues = new WeakMap<Database, AfterCommit>();

/** The after-commit queue of a connection (created on first use). */
export function afterCommitOf(sqlite: Database): AfterCommit {
  let queue = queues.get(sqlite);
  if (!queue) queues.set(sqlite, (queue = new AfterCommit(sqlite)));
  return queue;
}
