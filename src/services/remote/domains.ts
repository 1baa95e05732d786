import type { Statement } from "bun:sqlite";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import type { DatabasePort } from "../../db/port.ts";
import { validationFailed } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import { domainAndParents, hostOf, normalizeDomain, normalizeHost } from "../../net/domains.ts";
import type { GoneAccounts } from "./gone-accounts.ts";

/** Hosts whose verdict is kept at most (a few KB). */
const MAX_KEPT_VERDICTS = 4096;

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
 * outside: the inbox (before a signature is checked), each delivery just before it is made,
 * and every fetch (src/federation), several times a request. Its answers are kept per host
 * until the rules may have changed: a rule written here (block, unblock, allow, disallow), or
 * a commit by another connection (SQLite's data_version: the CLI blocks domains while the
 * server runs), so a block holds at once. Inside a transaction the tables are read as before:
 * the transaction may have changed a rule it could still roll back.
 */
export class FederationDomains {
  private q: {
    blocked: Statement<{ one: number }, [string]>;
    allowed: Statement<{ one: number }, [string]>;
    dataVersion: Statement<{ data_version: number }, []>;
  };
  private localHost: string | null;
  /** host -> refused, valid while neither `ruleWrites` nor data_version has moved. */
  private verdicts = new Map<string, boolean>();
  private verdictsFor = { dataVersion: -1, ruleWrites: -1 };
  /** Bumped by every rule written here, before it is written. */
  private ruleWrites = 0;

  constructor(
    private port: DatabasePort,
    /**
     * The synchronous connection, for `refuses`: asked synchronously wherever federation meets
     * the outside (fetches, deliveries, the inbox's edge, services not yet converted).
     */
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private whitelistMode: boolean,
    /** This server's own host: never refused. */
    localHost: string,
    private gone: GoneAccounts,
  ) {
    this.localHost = normalizeHost(localHost);
    const sqlite = db.$client;
    this.q = {
      blocked: sqlite.query("SELECT 1 AS one FROM domain_blocks WHERE domain IN (SELECT value FROM json_each(?)) LIMIT 1"),
      allowed: sqlite.query("SELECT 1 AS one FROM domain_allows WHERE domain IN (SELECT value FROM json_each(?)) LIMIT 1"),
      dataVersion: sqlite.query("PRAGMA data_version"),
    };
  }

  /**
   * Is federation with this host (or the host of this URL, or of this account domain) refused?
   * The host is normalized as rules are (hostOf): any spelling of a blocked domain is blocked.
   */
  refuses(urlOrHost: string | URL): boolean {
    const host = hostOf(urlOrHost);
    if (host === null) return true;
    if (host === this.localHost) return false;
    if (this.db.$client.inTransaction) return this.refusedByTables(host);
    const dataVersion = this.q.dataVersion.get()!.data_version;
    if (dataVersion !== this.verdictsFor.dataVersion || this.ruleWrites !== this.verdictsFor.ruleWrites) {
      this.verdicts.clear();
      this.verdictsFor = { dataVersion, ruleWrites: this.ruleWrites };
    }
    let refused = this.verdicts.get(host);
    if (refused === undefined) {
      refused = this.refusedByTables(host);
      // Bounded: a flood of distinct hosts costs a re-read, not memory.
      if (this.verdicts.size >= MAX_KEPT_VERDICTS) this.verdicts.clear();
      this.verdicts.set(host, refused);
    }
    return refused;
  }

  private refusedByTables(host: string): boolean {
    if (this.whitelistMode) return !this.q.allowed.get(JSON.stringify([host]));
    return !!this.q.blocked.get(JSON.stringify(domainAndParents(host)));
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
    this.ruleWrites++;
    return this.port.transaction(async () => {
      const created = (await this.port.run("INSERT INTO domain_blocks (id, domain, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [this.ids.next(), domain, this.clock.now()])) > 0;
      // Bumped again now the rule is written: a verdict read meanwhile (from the tables as they were) is not kept.
      this.ruleWrites++;
      let removedAccounts = 0;
      for (const id of await this.accountsCoveredBy(domain)) {
        await this.gone.remove(id);
        removedAccounts++;
      }
      await this.forgetKeysOf(domain);
      return { domain, created, removedAccounts };
    });
  }

  /** Lifts a suspension; the accounts it removed come back only when they are met again. */
  unblock(input: string): Promise<{ domain: string; removed: boolean }> {
    const domain = domainRule(input);
    this.ruleWrites++;
    return this.unblockChecked(domain);
  }

  private async unblockChecked(domain: string): Promise<{ domain: string; removed: boolean }> {
    const removed = (await this.port.run("DELETE FROM domain_blocks WHERE domain = ?", [domain])) > 0;
    this.ruleWrites++;
    return { domain, removed };
  }

  /** Puts a domain on the allow list (only read under WHITELIST_MODE). */
  allow(input: string): Promise<{ domain: string; created: boolean }> {
    const domain = domainRule(input);
    this.ruleWrites++;
    return this.allowChecked(domain);
  }

  private async allowChecked(domain: string): Promise<{ domain: string; created: boolean }> {
    const created = (await this.port.run("INSERT INTO domain_allows (id, domain, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [this.ids.next(), domain, this.clock.now()])) > 0;
    this.ruleWrites++;
    return { domain, created };
  }

  /** Takes a domain off the allow list: under WHITELIST_MODE, it is refused from now on, its keys forgotten. */
  disallow(input: string): Promise<{ domain: string; removed: boolean }> {
    const domain = domainRule(input);
    this.ruleWrites++;
    return this.disallowChecked(domain);
  }

  private async disallowChecked(domain: string): Promise<{ domain: string; removed: boolean }> {
    const removed = (await this.port.run("DELETE FROM domain_allows WHERE domain = ?", [domain])) > 0;
    this.ruleWrites++;
    await this.forgetKeysOf(domain);
    return { domain, removed };
  }

  async list(): Promise<{ blocked: DomainRule[]; allowed: DomainRule[] }> {
    const rules = (table: "domain_blocks" | "domain_allows") => this.port.all<DomainRule>(`SELECT domain, created_at AS "createdAt" FROM ${table} ORDER BY domain`);
    return { blocked: await rules("domain_blocks"), allowed: await rules("domain_allows") };
  }

  /**
   * Drops the keys (and documents) Fedify keeps of a domain now refused: a kept key would go on
   * verifying the domain's signatures without being fetched again, and fetching it is what
   * refuses it. Read before this, or cached by a fetch that was under way, a refused domain's
   * key is read as absent all the same (src/federation/refusals.ts).
   */
  private async forgetKeysOf(domain: string): Promise<void> {
    // Fedify's cached keys and documents in its store (src/federation/kv.ts), keyed by the JSON
    // of ["_fedify", "publicKey", (…,) url] and ["_fedify", "remoteDocument", url].
    const cached = await this.port.all<{ key: string }>(
      `SELECT key FROM fedify_kv WHERE (key LIKE '["_fedify","publicKey",%' OR key LIKE '["_fedify","remoteDocument",%') AND key LIKE '%' || ? || '%'`,
      [domain],
    );
    for (const { key } of cached) {
      const url = (JSON.parse(key) as unknown[]).at(-1);
      if (typeof url === "string" && this.refuses(url)) await this.port.run("DELETE FROM fedify_kv WHERE key = ?", [key]);
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
