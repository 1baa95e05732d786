import type { Database } from "bun:sqlite";
import { afterCommitOf } from "./after-commit.ts";

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. A commit costs far more than the statements of a typical write (SQLite
 * writes every dirty page to the WAL), so writes that arrive in the same turn of the event
 * loop share one transaction. Each runs inside its own savepoint: a write that throws is
 * rolled back alone and its caller gets the error; the others commit together, and their
 * promises settle after the commit.
 *
 * Work runs synchronously inside the batch, so nothing else touches the database between
 * its statements. Nested transactions in the work become savepoints.
 *
 * What the work queued to happen after commit (events for streams) runs once the batch has
 * committed, before the promises settle; a write that rolled back takes its share with it.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private sqlite: Database) {}

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs everything queued now (also used at shutdown). */
  flush() {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const sqlite = this.sqlite;
    // Already inside a transaction (a caller wrapped us): just run in place.
    const outer = !sqlite.inTransaction;
    const commits = afterCommitOf(sqlite);
    const start = commits.mark();
    if (outer) sqlite.run("BEGIN IMMEDIATE");
    const done: { item: Pending; value: unknown }[] = [];
    for (const item of batch) {
      const mark = commits.mark();
      sqlite.run("SAVEPOINT group_item");
      try {
        const value = item.work();
        sqlite.run("RELEASE group_item");
        done.push({ item, value });
      } catch (error) {
        sqlite.run("ROLLBACK TO group_item");
        sqlite.run("RELEASE group_item");
        commits.discard(mark);
        item.reject(error);
      }
    }
    if (outer) {
      try {
        sqlite.run("COMMIT");
      } catch (error) {
        if (sqlite.inTransaction) sqlite.run("ROLLBACK");
        commits.discard(start);
        for (const d of done) d.item.reject(error);
        return;
      }
      commits.committed();
    }
    for (const d of done) d.item.resolve(d.value);
  }
}
