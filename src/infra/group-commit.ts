import { isThenable, type DatabasePort } from "../db/port.ts";

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Done {
  item: Pending;
  value: unknown;
}

/**
 * Group commit. A commit costs far more than the statements of a typical write (SQLite
 * writes every dirty page to the WAL), so writes that arrive in the same turn of the event
 * loop share one transaction. Each runs inside its own savepoint: a write that throws is
 * rolled back alone and its caller gets the error; the others commit together, and their
 * promises settle after the commit.
 *
 * The batch is a transaction of the database port, each write a nested one (a savepoint).
 * Work that returns without a promise (every caller's today) runs synchronously, and so does
 * a batch made only of such work: on SQLite nothing else touches the connection between its
 * BEGIN IMMEDIATE and its COMMIT, exactly as before the port. Work that returns a promise
 * (a service converted to the port) is awaited in its savepoint before the next one begins.
 * Nested transactions in the work become savepoints.
 *
 * What the work queued to happen after commit (events for streams) runs once the batch has
 * committed, before the promises settle; a write that rolled back takes its share with it.
 *
 * On PostgreSQL each write is its own transaction, at once: there a batch bought nothing (the
 * server groups its WAL flushes itself) and cost much, its writes running one after another on
 * one connection, each in a savepoint (two more round trips), while the pool's other
 * connections and the other processes waited for nothing.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly batched: boolean;

  constructor(private db: Pick<DatabasePort, "atomic" | "dialect">) {
    this.batched = db.dialect !== "postgres";
  }

  run<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.batched) return Promise.resolve(this.db.atomic(work));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /**
   * Runs everything queued now (also used at shutdown): committed when this returns, unless some
   * work returned a promise (or another flow's transaction held the connection), then once the
   * promise it returns resolves. Inside a transaction (a caller wrapped us) the batch runs in
   * place, as a savepoint of it.
   */
  flush(): void | Promise<void> {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const done: Done[] = [];
    const failed = (error: unknown) => {
      for (const d of done) d.item.reject(error);
    };
    let outcome: void | Promise<void>;
    try {
      outcome = this.db.atomic(() => this.runItems(batch, 0, done));
    } catch (error) {
      // The COMMIT failed (a deferred constraint): nothing of the batch is kept.
      return failed(error);
    }
    if (isThenable(outcome)) return outcome.then(() => settle(done), failed);
    settle(done);
  }

  /** Runs the items from `from` on, each in its savepoint, synchronously for as long as the work is. */
  private runItems(batch: Pending[], from: number, done: Done[]): void | Promise<void> {
    for (let i = from; i < batch.length; i++) {
      const item = batch[i]!;
      let result: unknown;
      try {
        result = this.db.atomic(item.work);
      } catch (error) {
        item.reject(error);
        continue;
      }
      if (isThenable(result)) {
        return result.then(
          (value) => void done.push({ item, value }),
          (error) => item.reject(error),
        ).then(() => this.runItems(batch, i + 1, done));
      }
      done.push({ item, value: result });
    }
  }
}

function settle(done: Done[]) {
  for (const d of done) d.item.resolve(d.value);
}
