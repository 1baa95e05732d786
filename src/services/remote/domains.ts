import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { validationFailed } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import type { EventBus } from "../../infra/events.ts";
import { log } from "../../log.ts";
import { domainAndParents, hostOf, normalizeDomain, normalizeHost } from "../../net/domains.ts";
import type { GoneAccounts } from "./gone-accounts.ts";

/** A rule as the CLI lists it. */
export interface DomainRule {
  domain: string;
  createdAt: number;
}

/** A domain as the admin typed it, normalized, or Mastodon's validation error. */
export function domainRule(input: string | null | undefined): string {
  const checked = normalizeDomain(input);
  if ("error" in checked) throw validationFailed(checked.error === "blank" ? "Domain can't be blank" : "Domain is invalid");
  return checked.domain;
}

/**
 * Which servers this one federates with: the admin's domain blocks (Mastodon's DomainBlock
 * with severity suspend, matched on the domain and its subdomains) and, under WHITELIST_MODE,
 * the allow list (Mastodon's LIMITED_FEDERATION_MODE with DomainAllow, matched exactly),
 * outside which every domain is refused. `refuses()` is asked where federation meets the
 * outside and cannot wait: the inbox (before a signature is checked), each delivery just before
 * it is made, and every fetch (src/federation), several times a request. So it answers from a
 * copy of the rules kept in memory (a few hundred domains at most), read through the port at
 * start (`load`, awaited before anything is served; until then every host is refused). A rule
 * written here changes the copy once its write committed (never for one rolled back, with the
 * transaction of an admin's audit line around it); another process's is read again when told
 * (the `federation-domains` cache kind, moved by `federation.rules_changed`), and the command
 * line's on SQLite when the server sees another connection commit (forgetCached).
 */
export class FederationDomains {
  private localHost: string | null;
  /** The rules as last read, changed by what this process committed since; null until the first read. */
  private rules: { blocked: Set<string>; allowed: Set<string> } | null = null;
  /** Reads begun, and the last read or change applied: a read begun before a later change or read is dropped. */
  private reads = 0;
  private applied = 0;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
    private whitelistMode: boolean,
    /** This server's own host: never refused. */
    localHost: string,
    private gone: GoneAccounts,
  ) {
    this.localHost = normalizeHost(localHost);
  }

  /** Reads the rules (at start, and when another process or connection changed them). */
  async load(): Promise<void> {
    const read = ++this.reads;
    const domains = async (table: "domain_blocks" | "domain_allows") => new Set((await this.port.all<{ domain: string }>(`SELECT domain FROM ${table}`)).map((r) => r.domain));
    const blocked = await domains("domain_blocks");
    const allowed = this.whitelistMode ? await domains("domain_allows") : new Set<string>();
    if (read < this.applied) return;
    this.applied = read;
    this.rules = { blocked, allowed };
  }

  /** The rules may have changed elsewhere: read again in the background (a failure is logged, the copy kept). */
  reload(): void {
    this.load().catch((e) => log("error", "reading the federation domain rules failed", { error: String(e).split("\n")[0] }));
  }

  /**
   * Is federation with this host (or the host of this URL, or of this account domain) refused?
   * The host is normalized as rules are (hostOf): any spelling of a blocked domain is blocked.
   */
  refuses(urlOrHost: string | URL): boolean {
    const host = hostOf(urlOrHost);
    if (host === null) return true;
    if (host === this.localHost) return false;
    const rules = this.rules;
    if (rules === null) return true;
    if (this.whitelistMode) return !rules.allowed.has(host);
    return rules.blocked.size > 0 && domainAndParents(host).some((d) => rules.blocked.has(d));
  }

  /** A rule was written (in the calling flow's transaction, if any): the copy changes once it committed, and other processes are told. */
  private async changed(change: (rules: { blocked: Set<string>; allowed: Set<string> }) => void): Promise<void> {
    this.port.afterCommit(() => {
      // A read begun before this commit may not see it.
      this.applied = ++this.reads;
      if (this.rules) change(this.rules);
    });
    await this.events.emit({ type: "federation.rules_changed" });
  }

  /**
   * Suspends a domain, as Mastodon's BlockDomainService does with severity suspend: the rule
   * is kept, and every account stored from the domain or a subdomain goes as an account that
   * deleted itself goes (GoneAccounts: statuses, follows both ways, notifications). Nothing is
   * told to the domain: deliveries to it are refused from now on. Blocking again changes nothing.
   */
  block(input: string): Promise<{ domain: string; created: boolean; removedAccounts: number }> {
    // Checked before anything is awaited: a bad domain throws at once, as before the port.
    const domain = domainRule(input);
    return this.port.transaction(async () => {
      const created = (await this.port.run("INSERT INTO domain_blocks (id, domain, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [this.ids.next(), domain, this.clock.now()])) > 0;
      if (created) await this.changed((rules) => rules.blocked.add(domain));
      let removedAccounts = 0;
      for (const id of await this.accountsCoveredBy(domain)) {
        await this.gone.remove(id);
        removedAccounts++;
      }
      await this.forgetKeysOf(domain, (host) => domainAndParents(host).includes(domain));
      return { domain, created, removedAccounts };
    });
  }

  /** Lifts a suspension; the accounts it removed come back only when they are met again. */
  unblock(input: string): Promise<{ domain: string; removed: boolean }> {
    const domain = domainRule(input);
    return this.unblockChecked(domain);
  }

  private async unblockChecked(domain: string): Promise<{ domain: string; removed: boolean }> {
    const removed = (await this.port.run("DELETE FROM domain_blocks WHERE domain = ?", [domain])) > 0;
    if (removed) await this.changed((rules) => rules.blocked.delete(domain));
    return { domain, removed };
  }

  /** Puts a domain on the allow list (only read under WHITELIST_MODE). */
  allow(input: string): Promise<{ domain: string; created: boolean }> {
    const domain = domainRule(input);
    return this.allowChecked(domain);
  }

  private async allowChecked(domain: string): Promise<{ domain: string; created: boolean }> {
    const created = (await this.port.run("INSERT INTO domain_allows (id, domain, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [this.ids.next(), domain, this.clock.now()])) > 0;
    if (created && this.whitelistMode) await this.changed((rules) => rules.allowed.add(domain));
    return { domain, created };
  }

  /** Takes a domain off the allow list: under WHITELIST_MODE, it is refused from now on, its keys forgotten. */
  disallow(input: string): Promise<{ domain: string; removed: boolean }> {
    const domain = domainRule(input);
    return this.disallowChecked(domain);
  }

  private async disallowChecked(domain: string): Promise<{ domain: string; removed: boolean }> {
    return this.port.transaction(async () => {
      const removed = (await this.port.run("DELETE FROM domain_allows WHERE domain = ?", [domain])) > 0;
      if (removed && this.whitelistMode) {
        await this.changed((rules) => rules.allowed.delete(domain));
        await this.forgetKeysOf(domain, (host) => host === domain);
      }
      return { domain, removed };
    });
  }

  async list(): Promise<{ blocked: DomainRule[]; allowed: DomainRule[] }> {
    const rules = (table: "domain_blocks" | "domain_allows") => this.port.all<DomainRule>(`SELECT domain, created_at AS "createdAt" FROM ${table} ORDER BY domain`);
    return { blocked: await rules("domain_blocks"), allowed: await rules("domain_allows") };
  }

  /**
   * Drops the keys (and documents) Fedify keeps of a domain now refused: a kept key would go on
   * verifying the domain's signatures without being fetched again, and fetching it is what
   * refuses it. Read before this, or cached by a fetch that was under way, a refused domain's
   * key is read as absent all the same (src/federation/refusals.ts). `refused`: whether a host
   * is refused by the rule just written (the kept copy changes only once it committed).
   */
  private async forgetKeysOf(domain: string, refused: (host: string) => boolean): Promise<void> {
    // Fedify's cached keys and documents in its store (src/federation/kv.ts), keyed by the JSON
    // of ["_fedify", "publicKey", (…,) url] and ["_fedify", "remoteDocument", url].
    const cached = await this.port.all<{ key: string }>(
      `SELECT key FROM fedify_kv WHERE (key LIKE '["_fedify","publicKey",%' OR key LIKE '["_fedify","remoteDocument",%') AND key LIKE '%' || ? || '%'`,
      [domain],
    );
    for (const { key } of cached) {
      const url = (JSON.parse(key) as unknown[]).at(-1);
      const host = typeof url === "string" ? hostOf(url) : null;
      if (host !== null && refused(host)) await this.port.run("DELETE FROM fedify_kv WHERE key = ?", [key]);
    }
  }

  /** Stored remote accounts on the domain or one of its subdomains (few enough to read them all: an admin's rare act). */
  private async accountsCoveredBy(domain: string): Promise<number[]> {
    const stored = await this.port.all<{ id: number; domain: string }>("SELECT id, domain FROM accounts WHERE domain IS NOT NULL");
    return stored
      .filter((a) => {
        const host = hostOf(a.domain);
        return host !== null && domainAndParents(host).includes(domain);
      })
      .map((a) => a.id);
  }
}
