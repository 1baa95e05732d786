import type { SQL } from "bun";
import { log } from "../log.ts";
import type { EventBus } from "./events.ts";
import type { PgListener } from "./pg-listener.ts";

/** The channel every process LISTENs to for the others' cache invalidations. */
export const CACHES_CHANNEL = "rookery_caches";
/** Longer notifications are refused by PostgreSQL (8000 bytes); keys past this become "everything". */
const PAYLOAD_LIMIT = 7900;
/** The key that means every entry of a kind. */
export const EVERYTHING = "*";

/**
 * What a process keeps of the database and another process may make stale, one kind per cache
 * (consequences.ts `forgetKind` says which call forgets each):
 *
 * - `render`: the rendered statuses and their rows (RenderCache), keyed `s<id>`, `a<id>` (an
 *   account's statuses), or everything; the kept public pages follow its generation;
 * - `moderation`: who is in a block (AccountModeration); `domain-blocks`: who blocks domains;
 *   `filters`: the filters kept and compiled; `notification-policies`: the policies kept;
 * - `federation-domains`: the domains federation refuses (FederationDomains' rules);
 * - `tokens`: the access tokens looked up (TokenService), revoked or their account suspended;
 * - `database`: anything else keyed on the database's state (the kept instance and
 *   verify_credentials bytes: http/kept-json.ts), which moves with every other kind too.
 */
export const CACHE_KINDS = ["render", "moderation", "domain-blocks", "filters", "notification-policies", "federation-domains", "tokens", "database"] as const;
export type CacheKind = (typeof CACHE_KINDS)[number];

/**
 * A generation per cache kind, moved across processes by NOTIFY. A process that changed what a
 * cache holds forgets it in place as it does today, and `bump`s the kind (once committed): every
 * other process moves its generation of the kind and calls what forgets it (`on`), with the keys
 * named or everything. A cache may instead compare `generation(kind)` with the one it read
 * under, as the kept JSON does with SQLite's data_version.
 *
 * The bumps of one turn go in one statement (a notification per kind). Nothing is stored: a
 * notification missed while the listen connection was down cannot be read back, so on
 * reconnection every kind is moved and forgotten whole, which is what was missed at worst.
 */
export class PgCacheGenerations {
  private generations = new Map<CacheKind, number>();
  private forgets = new Map<CacheKind, ((keys: string[]) => void)[]>();
  private pending = new Map<CacheKind, Set<string>>();
  private flushing: Promise<void> | null = null;
  /** While what another process changed is applied here: a cache that tells of its invalidations must not bump them back. */
  private applying = false;

  constructor(
    private sql: SQL,
    private listener: PgListener,
    /** Names this process in its notifications, so that it skips its own. */
    private origin: string,
  ) {}

  async start(): Promise<void> {
    await this.listener.listen(CACHES_CHANNEL, (payload) => this.heard(payload), () => this.everything());
  }

  /**
   * The writes other processes must forget, once committed (the table in consequences.ts calls
   * this through the `processes` transport). The render cache's changes come through its own hook
   * (`renderKey` of each RenderCacheChange), and domain blocks and notification policies have
   * no event yet: their services would bump them.
   */
  subscribe(events: EventBus) {
    events.afterCommit("token.revoked", (e) => this.bump("tokens", e.accountId === null ? EVERYTHING : String(e.accountId)));
    // A suspension, an approval, a deletion by staff: the account's tokens stand differently.
    events.afterCommit("account.updated", (e) => this.bump("tokens", String(e.accountId)));
    events.afterCommit("account.deleted", (e) => this.bump("tokens", String(e.accountId)));
    events.afterCommit("filters.changed", () => this.bump("filters"));
    events.afterCommit("block.created", () => this.bump("moderation"));
    events.afterCommit("block.removed", () => this.bump("moderation"));
    events.afterCommit("federation.rules_changed", () => this.bump("federation-domains"));
  }

  /** What forgets a kind's entries (`keys`, or [EVERYTHING]) when another process bumped it; registered where the services are assembled. */
  on(kind: CacheKind, forget: (keys: string[]) => void): void {
    const list = this.forgets.get(kind);
    if (list) list.push(forget);
    else this.forgets.set(kind, [forget]);
  }

  /** This process's generation of a kind: it moves when another process changes what such a cache holds. */
  generation(kind: CacheKind): number {
    return this.generations.get(kind) ?? 0;
  }

  /** Tells the other processes that `kind` (its `key`, or all of it) changed; call it once the change committed. */
  bump(kind: CacheKind, key: string = EVERYTHING): void {
    if (this.applying) return;
    let keys = this.pending.get(kind);
    if (!keys) this.pending.set(kind, (keys = new Set()));
    keys.add(key);
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** Tells every process that every kind changed, from one that does not listen (a command that wrote): one statement. */
  static async everythingChanged(sql: SQL, origin: string): Promise<void> {
    const payloads = CACHE_KINDS.map((kind) => `${origin} ${kind} ${EVERYTHING}`);
    await sql`SELECT count(pg_notify(${CACHES_CHANNEL}, p)) FROM json_array_elements_text(${JSON.stringify(payloads)}::text::json) AS t(p)`;
  }

  /** Resolves once every bump so far is notified (tests, stopping). */
  async published(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    const payloads: string[] = [];
    for (const [kind, keys] of this.pending) {
      const list = keys.has(EVERYTHING) ? EVERYTHING : [...keys].join(",");
      const payload = `${this.origin} ${kind} ${list}`;
      payloads.push(Buffer.byteLength(payload) <= PAYLOAD_LIMIT ? payload : `${this.origin} ${kind} ${EVERYTHING}`);
    }
    this.pending.clear();
    try {
      await this.sql`SELECT count(pg_notify(${CACHES_CHANNEL}, p)) FROM json_array_elements_text(${JSON.stringify(payloads)}::text::json) AS t(p)`;
    } catch (e) {
      // The others keep what this process changed until their next reconnection; say so.
      log("error", "cache generations: notifying failed", { kinds: payloads.length, error: String(e).split("\n")[0] });
    }
    this.flushing = this.pending.size > 0 ? this.flush() : null;
  }

  /** `<origin> <kind> <keys, comma-separated, or *>` */
  private heard(payload: string) {
    const [origin, kind, keys] = payload.split(" ");
    if (origin === this.origin || !CACHE_KINDS.includes(kind as CacheKind)) return;
    this.moved(kind as CacheKind, (keys ?? EVERYTHING).split(","));
    // Whatever is keyed on the database's state as a whole moves with any kind.
    if (kind !== "database") this.moved("database", [EVERYTHING]);
  }

  /** Reconnected: what was missed is unknown, so every kind is moved and forgotten whole. */
  private everything() {
    for (const kind of CACHE_KINDS) this.moved(kind, [EVERYTHING]);
  }

  private moved(kind: CacheKind, keys: string[]) {
    this.generations.set(kind, this.generation(kind) + 1);
    this.applying = true;
    try {
      for (const forget of this.forgets.get(kind) ?? []) forget(keys);
    } catch (e) {
      log("error", "cache generations: forgetting failed", { kind, error: String(e).split("\n")[0] });
    } finally {
      this.applying = false;
    }
  }
}
