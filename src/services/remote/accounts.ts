import { eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { accounts, type AccountRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { log } from "../../log.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { EventBus } from "../../infra/events.ts";
import { accountDomain } from "../../net/domains.ts";
import type { RemoteFetcher } from "./fetcher.ts";
import type { GoneAccounts } from "./gone-accounts.ts";
import type { RemoteActorInput } from "./inputs.ts";

/**
 * A remote username as Mastodon takes one (Account::USERNAME_ONLY_RE, checked on remote
 * accounts): ASCII letters, digits and underscores, with dots and hyphens only between them.
 * No homoglyphs, zero-width or direction-changing characters: `acct` must read as what it is.
 */
const REMOTE_USERNAME = /^[a-z0-9_]+([.-]+[a-z0-9_]+)*$/i;
/** Mastodon's Account::USERNAME_LENGTH_HARD_LIMIT. */
const USERNAME_MAX = 2048;
/** Mastodon's Account::STALE_THRESHOLD: a remote account fetched longer ago is fetched again when looked at. */
const STALE_AFTER_MS = 24 * 60 * 60 * 1000;
/** After a refetch that failed, the next waits this long: a server that is down is not asked on every view. */
const RETRY_AFTER_MS = 60 * 60 * 1000;

const ACCOUNT = rowReader(accounts);
/** What an actor document writes on its account's row. */
type RemoteAccountValues = Omit<typeof accounts.$inferInsert, "id" | "createdAt"> & { username: string; domain: string; createdAt?: number };
/**
 * Looked up for every incoming activity: raw SQL, whole rows read by rowReader (drizzle builds
 * and maps a whole accounts row for more than it costs to run the statement).
 */
const BY_URI = `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE uri = ?`;
const BY_HANDLE = `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE lower(username) = ? AND lower(domain) = ? LIMIT 1`;
const ID_BY_URI = "SELECT id FROM accounts WHERE uri = ?";
/** The row holding a username on a domain, as accounts_username_domain_lower reads it. */
const ID_BY_NAME = "SELECT id, uri FROM accounts WHERE lower(username) = ? AND lower(coalesce(domain, '')) = ?";
const STATUS_BY_URI = "SELECT s.id, a.uri FROM statuses s JOIN accounts a ON a.id = s.account_id WHERE s.uri = ?";

/**
 * Remote actors stored in the accounts table (domain set), keyed by their actor IRI and
 * upserted on every sight, with their profile as Mastodon shows it (read by
 * src/federation/inbound/profile.ts), and
 * fetched again in the background when looked at a day after the last fetch.
 * Not yet: the acct domain from WebFinger rather than the IRI's host, `group`, verification
 * of their links (rel=me).
 */
export class RemoteAccounts {
  constructor(
    private db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
    /** Domains this server does not federate with (blocked, or off the allow list): none of their accounts is looked up, fetched or stored. */
    private domains: { refuses(urlOrHost: string | URL): boolean },
    /** Fetches actors from their servers (null while federation is off: nothing is fetched). */
    private fetcher: RemoteFetcher | null,
    /** Removes an account whose actor is gone, as a Delete of it would. */
    private gone: Pick<GoneAccounts, "remove">,
  ) {}

  private refreshing = new Map<number, Promise<void>>();
  private failedAt = new Map<number, number>();
  private stopped = false;

  /** A remote account by its handle: the stored one (refreshed when stale), else resolved (when federation is on). */
  async lookup(username: string, typedDomain: string, signal?: AbortSignal): Promise<AccountRow | null> {
    // As accounts' domains are stored: `Example.COM.` finds the accounts of example.com.
    const domain = accountDomain(typedDomain);
    if (domain === null || this.domains.refuses(domain)) return null;
    const [row] = await this.db.values(BY_HANDLE, [username.toLowerCase(), domain]);
    const stored = row && ACCOUNT.map(row);
    if (stored) {
      this.refreshIfStale(stored);
      return stored;
    }
    const fetcher = this.fetcher;
    if (!fetcher || !/^[A-Za-z0-9_.-]+$/.test(username) || !/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(domain)) return null;
    // acct: lookups go through WebFinger, which Fedify always asks over https.
    return fetcher
      .actor(`acct:${username}@${domain}`, signal)
      .then((actor) => (actor ? this.upsert(actor) : null))
      .catch(() => null);
  }

  /**
   * Fetches a remote account's actor document again, in the background, when the last fetch is
   * more than a day old: the caller shows what is stored and never waits. One refetch per
   * account at a time; after a failed one, none for an hour. Local accounts are left alone.
   */
  refreshIfStale(account: AccountRow): void {
    if (account.domain === null || account.uri === null || this.fetcher === null || this.stopped || this.domains.refuses(account.domain)) return;
    const now = this.clock.now();
    if (account.fetchedAt !== null && now - account.fetchedAt < STALE_AFTER_MS) return;
    if (this.refreshing.has(account.id)) return;
    const failed = this.failedAt.get(account.id);
    if (failed !== undefined && now - failed < RETRY_AFTER_MS) return;
    const { id, uri } = account;
    const fetcher = this.fetcher;
    // Started on the next tick, so that it is on record before anything of it runs.
    const run = Promise.resolve()
      .then(() => fetcher.actor(uri))
      .then(async (actor) => {
        const row = actor && actor.uri === uri && !this.stopped ? await this.upsert(actor) : null;
        if (row) {
          this.failedAt.delete(id);
          return;
        }
        if (this.stopped) return;
        this.failedAt.set(id, this.clock.now());
        // Its own server says the actor is no more (404 or 410 at its IRI, asked once more to
        // know which failure this was): the account goes, as if the actor had sent its Delete.
        if (!actor && (await fetcher.gone(uri))) {
          log("info", "remote account gone (its actor answers 404 or 410); removed", { account: uri });
          await this.gone.remove(id);
        }
      })
      .catch((error: unknown) => {
        this.failedAt.set(id, this.clock.now());
        log("warn", "remote account refresh failed", { account: uri, error: String(error).split("\n")[0] });
      })
      .finally(() => this.refreshing.delete(id));
    this.refreshing.set(id, run);
  }

  /** Resolves once the refreshes under way are done (tests, and shutdown). */
  async idle(): Promise<void> {
    while (this.refreshing.size > 0) await Promise.allSettled([...this.refreshing.values()]);
  }

  /** No refresh starts any more, and nothing more is stored (the database is closing). */
  stop(): void {
    this.stopped = true;
  }

  /** A stored remote status by its IRI, with its author's actor IRI (to check who may change it). */
  async statusByUri(uri: string): Promise<{ id: number; authorUri: string | null } | undefined> {
    const [row] = await this.db.values(STATUS_BY_URI, [uri]);
    return row && { id: row[0] as number, authorUri: row[1] as string | null };
  }

  async byUri(uri: string): Promise<AccountRow | undefined> {
    const [row] = await this.db.values(BY_URI, [uri]);
    return row && ACCOUNT.map(row);
  }

  /**
   * Stores what the actor document says, as Mastodon's ActivityPub::ProcessAccountService
   * does; null for something that is not a usable actor. Rendered statuses of the account are
   * told (account.updated), so that they show the new profile.
   */
  async upsert(actor: RemoteActorInput): Promise<AccountRow | null> {
    if (actor.inboxUrl === null || this.domains.refuses(actor.uri)) return null;
    // Its IRI stands in for its profile page, and its inbox is where we post: http(s) only.
    const uri = httpUrlOrNull(actor.uri);
    const inboxUrl = httpUrlOrNull(actor.inboxUrl);
    if (uri === null || inboxUrl === null) return null;
    const iri = new URL(actor.uri);
    // Normalized as rules are (no trailing dot): the domain blocks of users compare with it.
    const domain = accountDomain(iri.host);
    if (domain === null) return null;
    // Refused, not cleaned: Mastodon does not save such an account (a refetch keeps the stored one).
    const username = actor.username.trim();
    if (username.length > USERNAME_MAX || !REMOTE_USERNAME.test(username)) return null;
    const profile = await actor.profile();
    // Federation stopped while the images were read: the database is closing.
    if (this.stopped) return null;
    const now = this.clock.now();
    const values: RemoteAccountValues = {
      username,
      domain,
      displayName: actor.displayName.slice(0, 1000),
      noteHtml: profile.noteHtml,
      fields: JSON.stringify(profile.fields),
      emojis: JSON.stringify(profile.emojis),
      avatarRemoteUrl: profile.avatarRemoteUrl,
      headerRemoteUrl: profile.headerRemoteUrl,
      locked: actor.locked,
      bot: actor.bot,
      discoverable: actor.discoverable,
      indexable: actor.indexable,
      ...(actor.publishedAt !== null ? { createdAt: actor.publishedAt } : {}),
      uri,
      url: profileUrl(actor.url, iri),
      inboxUrl,
      sharedInboxUrl: httpUrlOrNull(actor.sharedInboxUrl),
      followersUrl: httpUrlOrNull(actor.followersUrl),
      keyIds: JSON.stringify(actor.keyIds),
      fetchedAt: now,
    };
    // Two first sightings at once (an inbox retry while a search fetches the actor) both find
    // no row: the one whose insert finds the other's row written goes again, and updates it.
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        if (await this.db.transaction(() => this.write(uri, values, now))) break;
      } catch (error) {
        if (!isUniqueViolation(error) || attempt === 3) throw error;
      }
    }
    return (await this.byUri(uri)) ?? null;
  }

  /**
   * The actor's row written: the one at its IRI, else the one of its username on its domain,
   * else a new one. A stored name with a new IRI (the server reinstalled, moved to https, or the
   * name given to a new actor) is the same account to Mastodon (ProcessAccountService finds it by
   * its acct and writes the new IRI onto it): its row moves to the new IRI, follows and statuses
   * with it. False when no row was written: another task wrote one of that IRI or name meanwhile.
   */
  private async write(uri: string, values: RemoteAccountValues, now: number): Promise<boolean> {
    const t = this.db.tables.accounts;
    const [atIri] = await this.db.values(ID_BY_URI, [uri]);
    const [named] = atIri ? [] : await this.db.values(ID_BY_NAME, [values.username.toLowerCase(), values.domain.toLowerCase()]);
    const found = atIri ?? named;
    if (!found) {
      const inserted = await this.db.orm
        .insert(t)
        .values({ id: this.ids.next(), createdAt: now, ...values })
        .onConflictDoNothing();
      return this.db.changes(inserted) > 0;
    }
    const id = found[0] as number;
    if (named) log("info", "remote account's IRI changed: its row moves to the new one", { account: `${values.username}@${values.domain}`, from: String(named[1]), to: uri });
    // An actor renamed to a name another row of its domain still holds keeps its stored name:
    // that row is another IRI's, and a name is one account's (merging the two is not done).
    const username = sql`CASE WHEN EXISTS (SELECT 1 FROM accounts holder WHERE lower(holder.username) = ${values.username.toLowerCase()} AND lower(coalesce(holder.domain, '')) = ${values.domain.toLowerCase()} AND holder.id <> ${id}) THEN ${t.username} ELSE ${values.username} END`;
    await this.db.orm.update(t).set({ ...values, username }).where(eq(t.id, id));
    // Its within listeners (the render cache, tokens) are synchronous: they run inside this transaction.
    await this.events.emit({ type: "account.updated", accountId: id });
    return true;
  }
}

/** The actor's profile page, when on the actor's own host (Mastodon drops one elsewhere: a profile must not send people off to another site). */
function profileUrl(given: string | null, iri: URL): string | null {
  const url = httpUrlOrNull(given);
  if (url === null || new URL(url).hostname.toLowerCase() !== iri.hostname.toLowerCase()) return null;
  return url;
}
