import { eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { type PushSubscriptionRow } from "../../db/schema.ts";
import { notFound, validationFailed } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import type { TokenSeal } from "./token-seal.ts";

/** Mastodon's Notification::TYPES that a subscription can ask alerts for. */
export const ALERT_TYPES = ["mention", "status", "reblog", "follow", "follow_request", "favourite", "poll", "update", "quote", "quoted_update", "admin.sign_up", "admin.report"] as const;
export const POLICIES = ["all", "followed", "follower", "none"] as const;

export interface SubscriptionInput {
  endpoint?: string;
  p256dh?: string;
  auth?: string;
  standard?: boolean;
}

export interface SubscriptionData {
  /** Alerts as the client sent them (unknown types are dropped, as Mastodon's permit does). */
  alerts?: Record<string, boolean>;
  policy?: string;
}

/**
 * Web Push subscriptions (Mastodon's Api::V1::Push::SubscriptionsController): one per access
 * token, a new POST replacing the old, kept until the token is revoked. The endpoint must be
 * https, or, with ALLOW_PRIVATE_ADDRESSES (tests, loopback set-ups), http too: deliveries refuse
 * private addresses anyway unless allowed. The keys are checked for what they must be (a P-256
 * public point and a 16-byte secret), so that a bad one is refused here, not at each delivery.
 *
 * On the database port (issue 31), the set of subscribed accounts too (read on first use).
 */
export class PushSubscriptions {
  /** Built once: the routes and each push's removal run them (src/db/port.ts). */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private allowHttp: boolean,
    private seal: TokenSeal,
  ) {
    const { pushSubscriptions: subs } = port.tables;
    const orm = port.orm;
    const ofToken = eq(subs.accessTokenId, sql.placeholder("tokenId"));
    this.q = {
      ofToken: orm.select().from(subs).where(ofToken).limit(1).prepare(),
      deleteOfToken: orm.delete(subs).where(ofToken).returning({ accountId: subs.accountId }).prepare(),
      deleteOne: orm.delete(subs).where(eq(subs.id, sql.placeholder("id"))).returning({ accountId: subs.accountId }).prepare(),
      anyOf: orm.select({ id: subs.id }).from(subs).where(eq(subs.accountId, sql.placeholder("accountId"))).limit(1).prepare(),
      update: orm
        .update(subs)
        .set({ alerts: sql.placeholder("alerts") as unknown as string, policy: sql.placeholder("policy") as unknown as string })
        .where(eq(subs.id, sql.placeholder("id")))
        .prepare(),
    };
  }

  /**
   * Accounts with at least one subscription, kept in memory: every new notification asks, and
   * most accounts have none (subscriptions change only through this class). Read through the port
   * on first use rather than at start: nothing has to remember to load it.
   */
  private subscribed: Set<number> | null = null;
  /** Subscriptions made so far, for `recheck`. */
  private added = 0;

  async hasAny(accountId: number): Promise<boolean> {
    return (this.subscribed ?? (await this.readSubscribed())).has(accountId);
  }

  private async readSubscribed(): Promise<Set<number>> {
    // A subscription made while the read was awaited may be missing from it: read again then.
    for (;;) {
      const added = this.added;
      const ids = (await this.port.values("SELECT DISTINCT account_id FROM push_subscriptions")).map((r) => Number(r[0]));
      if (this.subscribed) return this.subscribed;
      if (this.added === added) return (this.subscribed = new Set(ids));
    }
  }

  /** `token` is the subscribing access token itself, kept sealed for the payloads (see TokenSeal). */
  async subscribe(tokenId: number, token: string, accountId: number, input: SubscriptionInput, data: SubscriptionData): Promise<PushSubscriptionRow> {
    const errors: string[] = [];
    const endpoint = input.endpoint?.trim() ?? "";
    if (!endpoint) errors.push("Endpoint can't be blank");
    else if (!this.validEndpoint(endpoint)) errors.push("Endpoint is invalid");
    if (!input.p256dh) errors.push("Key p256dh can't be blank");
    else if (!isPoint(input.p256dh)) errors.push("Key p256dh is invalid");
    if (!input.auth) errors.push("Key auth can't be blank");
    else if (base64Bytes(input.auth)?.length !== 16) errors.push("Key auth is invalid");
    const policy = data.policy ?? "all";
    if (!(POLICIES as readonly string[]).includes(policy)) errors.push("Policy is not included in the list");
    if (errors.length > 0) throw validationFailed(...errors);
    const row: PushSubscriptionRow = {
      id: this.ids.next(),
      accessTokenId: tokenId,
      accountId,
      endpoint,
      keyP256dh: input.p256dh!,
      keyAuth: input.auth!,
      alerts: JSON.stringify(knownAlerts(data.alerts)),
      policy,
      standard: input.standard ?? false,
      sealedToken: this.seal.seal(token),
      createdAt: this.clock.now(),
    };
    const { pushSubscriptions: subs } = this.port.tables;
    // A new subscription replaces the token's old one (its deliveries go with it); once a year,
    // not worth preparing. Two subscribes of one token at once (PostgreSQL) both delete the old
    // one and both insert: the second takes the first's row over rather than failing on the
    // token's unique index, and answers it under the id it keeps.
    const { id: _id, accessTokenId: _token, ...replaced } = row;
    const [stored] = await this.port.transaction(async () => {
      await this.port.orm.delete(subs).where(eq(subs.accessTokenId, tokenId));
      return this.port.orm.insert(subs).values(row).onConflictDoUpdate({ target: subs.accessTokenId, set: replaced }).returning({ id: subs.id });
    });
    this.subscribed?.add(accountId);
    this.added++;
    return { ...row, id: stored!.id };
  }

  /** The token's subscription, or 404. */
  async show(tokenId: number): Promise<PushSubscriptionRow> {
    const [row] = (await this.q.ofToken.execute({ tokenId })) as PushSubscriptionRow[];
    if (!row) throw notFound();
    return row;
  }

  /** PUT: only the alerts and the policy change (all of `data` replaces what was there, as Mastodon's update!). */
  async update(tokenId: number, data: SubscriptionData): Promise<PushSubscriptionRow> {
    const row = await this.show(tokenId);
    const policy = data.policy ?? "all";
    if (!(POLICIES as readonly string[]).includes(policy)) throw validationFailed("Policy is not included in the list");
    const alerts = JSON.stringify(knownAlerts(data.alerts));
    await this.q.update.execute({ alerts, policy, id: row.id });
    return { ...row, alerts, policy };
  }

  /** DELETE /api/v1/push/subscription, and a revoked token's (token.revoked's `within` listener, in the revoking transaction). */
  async unsubscribe(tokenId: number): Promise<void> {
    const gone = (await this.q.deleteOfToken.execute({ tokenId })) as { accountId: number }[];
    for (const { accountId } of gone) await this.recheck(accountId);
  }

  /** The push service forgot it (4xx), or its endpoint can never be reached: gone. */
  async remove(id: number): Promise<void> {
    const gone = (await this.q.deleteOne.execute({ id })) as { accountId: number }[];
    for (const { accountId } of gone) await this.recheck(accountId);
  }

  private async recheck(accountId: number) {
    // A subscription added while this read was awaited may have been inserted after it: the
    // account stays in the set then (one too many costs `enqueue` a query; one too few, a push).
    const added = this.added;
    if ((await this.q.anyOf.execute({ accountId })).length === 0 && this.added === added) this.subscribed?.delete(accountId);
  }

  private validEndpoint(endpoint: string): boolean {
    // The URL parser drops tabs and newlines and escapes other controls: the endpoint stored
    // (and posted to at each delivery) would not be the one it accepted.
    if (CONTROL.test(endpoint)) return false;
    try {
      const url = new URL(endpoint);
      return url.protocol === "https:" || (this.allowHttp && url.protocol === "http:");
    } catch {
      return false;
    }
  }
}

/** C0 and C1 control characters and DEL. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function knownAlerts(alerts: Record<string, boolean> | undefined): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [type, on] of Object.entries(alerts ?? {})) if ((ALERT_TYPES as readonly string[]).includes(type)) out[type] = on;
  return out;
}

/** Base64 (url-safe or not, padded or not) to bytes; null when it is not base64. */
export function base64Bytes(value: string): Uint8Array | null {
  const normal = value.trim().replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/]*$/.test(normal)) return null;
  return new Uint8Array(Buffer.from(normal, "base64"));
}

/** An uncompressed P-256 point: 65 bytes starting with 4. */
function isPoint(value: string): boolean {
  const b = base64Bytes(value);
  return b !== null && b.length === 65 && b[0] === 4;
}
