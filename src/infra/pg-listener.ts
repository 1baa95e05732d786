import { SQL } from "bun";

/**
 * One process's LISTEN connection to PostgreSQL, shared by what hears other processes (the
 * event relay, the cache generations). It is a client of its own, apart from the pool, for one
 * reason: Bun.SQL re-establishes a dropped listen connection and LISTENs again by itself, but
 * says nothing of it except through the client's `onclose` and `onconnect`, and what was notified while it was
 * down is gone. With a client that holds nothing but the listen connection, an `onconnect`
 * after an `onclose` is that reconnection, and each user is told so it can cover the gap.
 */
export class PgListener {
  private sql: SQL;
  private dropped = false;
  private reconnected: (() => void)[] = [];
  private subscriptions: SQL.ListenSubscription[] = [];

  constructor(url: string) {
    this.sql = new SQL(url, {
      max: 1,
      // Bun calls onconnect for the listen connection only when it comes back after a drop (onclose).
      onclose: () => {
        this.dropped = true;
      },
      onconnect: () => {
        if (!this.dropped) return;
        this.dropped = false;
        for (const cb of this.reconnected) cb();
      },
    });
  }

  /** Resolves once LISTEN on `channel` is in effect; `onReconnect` is called after each reconnection. */
  async listen(channel: string, onNotify: (payload: string) => void, onReconnect: () => void): Promise<void> {
    this.reconnected.push(onReconnect);
    this.subscriptions.push(await this.sql.listen(channel, onNotify));
  }

  async close(): Promise<void> {
    for (const s of this.subscriptions.splice(0)) await s.unlisten().catch(() => {});
    await this.sql.close().catch(() => {});
  }
}
