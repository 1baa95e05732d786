import { randomBytes } from "node:crypto";
import type { Clock } from "../clock.ts";

/** Mastodon's AsyncRefresh::NEW_REFRESH_EXPIRATION and FINISHED_REFRESH_EXPIRATION. */
const RUNNING_FOR_MS = 24 * 60 * 60 * 1000;
const FINISHED_FOR_MS = 60 * 60 * 1000;

/** What `GET /api/v1_alpha/async_refreshes/:id` shows of one. */
export interface AsyncRefreshView {
  id: string;
  status: "running" | "finished";
  /** New results so far, when the work counts them (null otherwise, as Mastodon's). */
  resultCount: number | null;
}

interface Refresh extends AsyncRefreshView {
  key: string;
  expiresAt: number;
}

/**
 * Mastodon's AsyncRefresh: background work a client was told of (the `Mastodon-Async-Refresh`
 * header) and may ask about by its id until it is finished, then for an hour. Kept in memory
 * as Mastodon keeps it in Redis with an expiry: the work itself does not outlive the process.
 * Its id is random and names nothing; the key (`context:<status id>:refresh`) is what the work
 * is found by.
 */
export class AsyncRefreshes {
  private byKey = new Map<string, Refresh>();
  private byId = new Map<string, Refresh>();

  constructor(private clock: Clock) {}

  /** The refresh under `key` while it is not expired. */
  find(key: string): AsyncRefreshView | null {
    return this.live(this.byKey.get(key));
  }

  /** The refresh a client names by its id. */
  byPublicId(id: string): AsyncRefreshView | null {
    return this.live(this.byId.get(id));
  }

  /** Starts one under `key`: running, its results counted from zero when `countResults`. */
  create(key: string, options: { countResults: boolean }): AsyncRefreshView {
    this.sweep();
    const old = this.byKey.get(key);
    if (old) this.byId.delete(old.id);
    const refresh: Refresh = { key, id: randomBytes(18).toString("base64url"), status: "running", resultCount: options.countResults ? 0 : null, expiresAt: this.clock.now() + RUNNING_FOR_MS };
    this.byKey.set(key, refresh);
    this.byId.set(refresh.id, refresh);
    return { ...refresh };
  }

  increment(key: string, by = 1): void {
    const refresh = this.byKey.get(key);
    if (refresh && refresh.resultCount !== null) refresh.resultCount += by;
  }

  finish(key: string): void {
    const refresh = this.byKey.get(key);
    if (!refresh) return;
    refresh.status = "finished";
    refresh.expiresAt = this.clock.now() + FINISHED_FOR_MS;
  }

  private live(refresh: Refresh | undefined): AsyncRefreshView | null {
    if (!refresh || refresh.expiresAt <= this.clock.now()) return null;
    return { id: refresh.id, status: refresh.status, resultCount: refresh.resultCount };
  }

  /** Expired ones are forgotten when a new one starts: the maps hold live work and the last hour's. */
  private sweep(): void {
    const now = this.clock.now();
    for (const [key, refresh] of this.byKey) {
      if (refresh.expiresAt > now) continue;
      this.byKey.delete(key);
      this.byId.delete(refresh.id);
    }
  }
}
