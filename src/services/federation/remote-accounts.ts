import { isActor, Application, Service, type Actor } from "@fedify/fedify/vocab";
import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { accounts, statuses, type AccountRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";

const USERNAME_MAX = 255;

/**
 * Remote actors stored in the accounts table (domain set), keyed by their actor IRI and
 * upserted on every sight.
 * Not yet: the note (remote HTML needs sanitizing before clients render it), avatar and
 * header, fields, refresh when stale, the acct domain from WebFinger rather than the IRI's host.
 */
export class RemoteAccounts {
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
  ) {}

  /** Fetches and stores the actor of `user@domain` (WebFinger, then its document); set by src/federation. */
  resolver: ((username: string, domain: string, signal?: AbortSignal) => Promise<AccountRow | null>) | null = null;

  /** A remote account by its handle: the stored one, else resolved (when federation is on). */
  async lookup(username: string, domain: string, signal?: AbortSignal): Promise<AccountRow | null> {
    const stored = this.db
      .select()
      .from(accounts)
      .where(and(sql`lower(${accounts.username}) = ${username.toLowerCase()}`, sql`lower(${accounts.domain}) = ${domain.toLowerCase()}`))
      .get();
    if (stored) return stored;
    if (!this.resolver || !/^[A-Za-z0-9_.-]+$/.test(username) || !/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(domain)) return null;
    return this.resolver(username, domain, signal).catch(() => null);
  }

  /** A stored remote status by its IRI, with its author's actor IRI (to check who may change it). */
  statusByUri(uri: string): { id: number; authorUri: string | null } | undefined {
    return this.db
      .select({ id: statuses.id, authorUri: accounts.uri })
      .from(statuses)
      .innerJoin(accounts, eq(accounts.id, statuses.accountId))
      .where(eq(statuses.uri, uri))
      .get();
  }

  byUri(uri: string): AccountRow | undefined {
    return this.db.select().from(accounts).where(eq(accounts.uri, uri)).get();
  }

  /** Stores what the actor document says; null for something that is not a usable actor. */
  upsert(actor: Actor): AccountRow | null {
    if (!isActor(actor) || actor.id === null || actor.inboxId === null) return null;
    const uri = actor.id.href;
    const domain = actor.id.host.toLowerCase();
    const username = (actor.preferredUsername?.toString() ?? "").trim().slice(0, USERNAME_MAX);
    if (username === "" || /[\s@]/.test(username)) return null;
    const now = this.clock.now();
    const url = actor.url instanceof URL ? actor.url.href : (actor.url?.href?.href ?? null);
    const values = {
      username,
      domain,
      displayName: (actor.name?.toString() ?? "").slice(0, 1000),
      locked: actor.manuallyApprovesFollowers ?? false,
      bot: actor instanceof Service || actor instanceof Application,
      uri,
      url,
      inboxUrl: actor.inboxId.href,
      sharedInboxUrl: actor.endpoints?.sharedInbox?.href ?? null,
      followersUrl: actor.followersId?.href ?? null,
      fetchedAt: now,
    };
    const existing = this.byUri(uri);
    if (existing) {
      this.db.update(accounts).set(values).where(eq(accounts.id, existing.id)).run();
    } else {
      const createdAt = actor.published ? actor.published.epochMilliseconds : now;
      this.db
        .insert(accounts)
        .values({ id: this.ids.next(), createdAt, ...values })
        // Another actor took this name on that domain (a renamed account): the newer IRI wins.
        .onConflictDoUpdate({ target: [accounts.uri], set: values })
        .run();
    }
    return this.byUri(uri) ?? null;
  }
}
