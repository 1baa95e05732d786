import { eq } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { pushSubscriptions, type PushSubscriptionRow } from "../../db/schema.ts";
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
 */
export class PushSubscriptions {
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private allowHttp: boolean,
    private seal: TokenSeal,
  ) {
    for (const row of db.selectDistinct({ accountId: pushSubscriptions.accountId }).from(pushSubscriptions).all()) this.subscribed.add(row.accountId);
  }

  /**
   * Accounts with at least one subscription, kept in memory: every new notification asks, and
   * most accounts have none (subscriptions change only through this class).
   */
  private subscribed = new Set<number>();

  hasAny(accountId: number): boolean {
    return this.subscribed.has(accountId);
  }

  /** `token` is the subscribing access token itself, kept sealed for the payloads (see TokenSeal). */
  subscribe(tokenId: number, token: string, accountId: number, input: SubscriptionInput, data: SubscriptionData): PushSubscriptionRow {
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
    this.db.transaction((tx) => {
      tx.delete(pushSubscriptions).where(eq(pushSubscriptions.accessTokenId, tokenId)).run();
      tx.insert(pushSubscriptions).values(row).run();
    });
    this.subscribed.add(accountId);
    return row;
  }

  /** The token's subscription, or 404. */
  show(tokenId: number): PushSubscriptionRow {
    const row = this.db.select().from(pushSubscriptions).where(eq(pushSubscriptions.accessTokenId, tokenId)).get();
    if (!row) throw notFound();
    return row;
  }

  /** PUT: only the alerts and the policy change (all of `data` replaces what was there, as Mastodon's update!). */
  update(tokenId: number, data: SubscriptionData): PushSubscriptionRow {
    const row = this.show(tokenId);
    const policy = data.policy ?? "all";
    if (!(POLICIES as readonly string[]).includes(policy)) throw validationFailed("Policy is not included in the list");
    const alerts = JSON.stringify(knownAlerts(data.alerts));
    this.db.update(pushSubscriptions).set({ alerts, policy }).where(eq(pushSubscriptions.id, row.id)).run();
    return { ...row, alerts, policy };
  }

  unsubscribe(tokenId: number): void {
    const gone = this.db.delete(pushSubscriptions).where(eq(pushSubscriptions.accessTokenId, tokenId)).returning({ accountId: pushSubscriptions.accountId }).all();
    for (const { accountId } of gone) this.recheck(accountId);
  }

  /** The push service forgot it (4xx), or its endpoint can never be reached: gone. */
  remove(id: number): void {
    const gone = this.db.delete(pushSubscriptions).where(eq(pushSubscriptions.id, id)).returning({ accountId: pushSubscriptions.accountId }).all();
    for (const { accountId } of gone) this.recheck(accountId);
  }

  private recheck(accountId: number) {
    if (!this.db.select({ id: pushSubscriptions.id }).from(pushSubscriptions).where(eq(pushSubscriptions.accountId, accountId)).limit(1).get()) this.subscribed.delete(accountId);
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
