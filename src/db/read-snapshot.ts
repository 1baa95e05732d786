import type { Database, Statement } from "bun:sqlite";
import type { AfterCommit } from "../infra/after-commit.ts";

/**
 * The statements of one read in one transaction. Outside a transaction every statement is its
 * own: in WAL mode SQLite takes and releases a read lock on the shared-memory index for each,
 * two fcntl system calls, which cost more than most of the statements of a signed-in read
 * (about 2 µs a statement, more when the machine is busy). A read that runs four or five
 * statements in a row (the token, the page, the suspensions, the viewer's flags) takes the lock
 * once here, and sees one state of the database throughout.
 *
 * Meant for reads: a write inside it commits when it ends (thrown or not), and what the write
 * queued for after its commit runs then, as it would have run at once outside (AfterCommit).
 * `read` must be synchronous: the transaction is the connection's, and an await would let
 * other requests' statements into it.
 */
export class ReadSnapshot {
  private begin: Statement;
  private commit: Statement;

  constructor(
    private sqlite: Database,
    private afterCommit: AfterCommit,
  ) {
    this.begin = sqlite.prepare("BEGIN");
    this.commit = sqlite.prepare("COMMIT");
  }

  read<T>(read: () => T): T {
    // Inside a transaction already (a caller's, or a group commit's): its snapshot serves.
    if (this.sqlite.inTransaction) return read();
    this.begin.run();
    try {
      return read();
    } finally {
      if (this.sqlite.inTransaction) this.commit.run();
      this.afterCommit.committed();
    }
  }
}
