import type { Statement } from "bun:sqlite";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { accounts, notifications, pushSubscriptions, statuses, type AccountRow, type NotificationRow, type PushSubscriptionRow, type StatusRow } from "../../db/schema.ts";
import { rowReader } from "../../db/rows.ts";
import type { IdGenerator } from "../../ids.ts";
import { log } from "../../log.ts";
import type { PushNotificationView } from "../../models/views.ts";
import type { EventBus } from "../../infra/events.ts";
import type { GroupCommit } from "../../infra/group-commit.ts";
import type { TimerWheel } from "../../infra/timer-wheel.ts";
import { OutgoingRefused } from "../../net/outgoing.ts";
import { base64Bytes, type PushSubscriptions } from "./subscriptions.ts";
import type { TokenSeal } from "./token-seal.ts";
import { buildPushRequest, type VapidSigner } from "./web-push.ts";

const SUBSCRIPTION = rowReader(pushSubscriptions);
const NOTIFICATION = rowReader(notifications);
const ACCOUNT = rowReader(accounts);
const STATUS = rowReader(statuses);

interface DeliveryRow {
  id: number;
  subscriptionId: number;
  notificationId: number;
  attempts: number;
  dueAt: number;
}

/** Mastodon's Web::PushNotificationWorker retries 5 times (Sidekiq), then gives the push up. */
const MAX_RETRIES = 5;

/** Sends one request to a push service (the SSRF check lives in whoever builds this). */
export type PushPost = (endpoint: string, init: { headers: Record<string, string>; body: Uint8Array }) => Promise<Response>;

/** A push's payload as JSON text: the push presenter's work, handed in by whoever assembles the services. */
export type PushRenderer = (view: PushNotificationView) => string;

/** Sidekiq's backoff without its jitter, after the nth failed attempt: 15 s, 16 s, 31 s, 96 s, 271 s. */
function retryDelayMs(attempts: number): number {
  return ((attempts - 1) ** 4 + 15) * 1000;
}

/**
 * Web Push delivery (Mastodon's NotifyService push step and Web::PushNotificationWorker). Each
 * new notification that a subscription of its recipient wants (alerts and policy, as
 * Web::PushSubscription#pushable?) becomes a row of push_deliveries in the notification's own
 * transaction; once committed, the timer wheel sends it. A 2xx ends it; a 4xx other than 408 or
 * 429 means the push service forgot the subscription (404/410 above all): the subscription is
 * deleted, as Mastodon does; anything else is tried again later, five times. Delivery is at
 * least once: a crash between the push service's 2xx and the row's removal sends it again.
 */
export class PushDeliveries {
  private inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** The deliveries `enqueue` wrote for a notification, put on the wheel once it commits (the event carries the same row to both). */
  private written = new WeakMap<NotificationRow, number[]>();
  /** Every notification and every push runs these: prepared once, rows read without drizzle's mapping. */
  private q: {
    subscriptionsOf: Statement<unknown[], [number]>;
    subscription: Statement<unknown[], [number]>;
    insert: Statement<unknown, [number, number, number, number]>;
    delivery: Statement<DeliveryRow, [number]>;
    notification: Statement<unknown[], [number]>;
    account: Statement<unknown[], [number]>;
    status: Statement<unknown[], [number]>;
    user: Statement<{ locale: string | null; language: string | null }, [number]>;
    follows: Statement<{ one: number }, [number, number]>;
    remove: Statement<unknown, [number]>;
    retry: Statement<unknown, [number, number, number]>;
  };

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private wheel: TimerWheel,
    private render: PushRenderer,
    private seal: TokenSeal,
    private vapid: VapidSigner,
    private post: PushPost,
    private subscriptions: PushSubscriptions,
    /** Where a sent push's row is removed: with the other writes of its turn, not in a commit of its own per push. */
    private writes: GroupCommit,
  ) {
    wheel.handle("push", (id) => this.track(this.send(Number(id))));
    const sqlite = db.$client;
    this.q = {
      subscriptionsOf: sqlite.query(`SELECT ${SUBSCRIPTION.columns} ${SUBSCRIPTION.from} WHERE account_id = ?`),
      subscription: sqlite.query(`SELECT ${SUBSCRIPTION.columns} ${SUBSCRIPTION.from} WHERE id = ?`),
      insert: sqlite.query("INSERT INTO push_deliveries (id, subscription_id, notification_id, attempts, due_at) VALUES (?, ?, ?, 0, ?)"),
      delivery: sqlite.query("SELECT id, subscription_id AS subscriptionId, notification_id AS notificationId, attempts, due_at AS dueAt FROM push_deliveries WHERE id = ?"),
      notification: sqlite.query(`SELECT ${NOTIFICATION.columns} ${NOTIFICATION.from} WHERE id = ?`),
      account: sqlite.query(`SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE id = ?`),
      status: sqlite.query(`SELECT ${STATUS.columns} ${STATUS.from} WHERE id = ?`),
      user: sqlite.query("SELECT locale, default_language AS language FROM users WHERE account_id = ?"),
      follows: sqlite.query("SELECT 1 AS one FROM follows WHERE account_id = ? AND target_account_id = ?"),
      remove: sqlite.query("DELETE FROM push_deliveries WHERE id = ?"),
      retry: sqlite.query("UPDATE push_deliveries SET attempts = ?, due_at = ? WHERE id = ?"),
    };
  }

  /** Once a notification committed, its pushes are sent (the rows were written by `enqueue`, within it). */
  subscribe(events: EventBus): void {
    events.afterCommit("notification.created", (e) => this.committed(e.notification));
  }

  /** Inside the notification's transaction: one delivery per subscription that wants it. */
  enqueue(n: NotificationRow): void {
    if (!this.subscriptions.hasAny(n.accountId)) return;
    const ids: number[] = [];
    for (const raw of this.q.subscriptionsOf.values(n.accountId)) {
      const s = SUBSCRIPTION.map(raw);
      if (!this.pushable(s, n)) continue;
      const id = this.ids.next();
      this.q.insert.run(id, s.id, n.id, this.clock.now());
      ids.push(id);
    }
    if (ids.length > 0) this.written.set(n, ids);
  }

  /** Once the notification committed, its deliveries go on the wheel (a rolled-back one never gets here). */
  committed(n: NotificationRow): void {
    for (const id of this.written.get(n) ?? []) this.wheel.schedule("push", id, this.clock.now());
    this.written.delete(n);
  }

  /** At start: what was waiting when the server stopped. */
  restore(): void {
    for (const row of this.db.$client.query<{ id: number; dueAt: number }, []>("SELECT id, due_at AS dueAt FROM push_deliveries").all()) {
      this.wheel.schedule("push", row.id, row.dueAt);
    }
  }

  /** Waits for the pushes being sent (the rest stay in the table for the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Web::PushSubscription#pushable?: the alert is on and the policy lets the sender through. */
  private pushable(s: PushSubscriptionRow, n: NotificationRow): boolean {
    const alerts = JSON.parse(s.alerts) as Record<string, boolean>;
    if (alerts[n.type] !== true) return false;
    switch (s.policy) {
      case "none":
        return false;
      case "followed":
        return this.follows(n.accountId, n.fromAccountId);
      case "follower":
        return this.follows(n.fromAccountId, n.accountId);
      default:
        return true;
    }
  }

  private follows(accountId: number, targetAccountId: number): boolean {
    return this.q.follows.get(accountId, targetAccountId) !== null;
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    return work.finally(() => this.inFlight.delete(work));
  }

  private async send(id: number): Promise<void> {
    if (this.stopped) return;
    const delivery = this.q.delivery.get(id);
    if (!delivery) return;
    const subscription = this.read(this.q.subscription, SUBSCRIPTION.map, delivery.subscriptionId);
    const notification = this.read(this.q.notification, NOTIFICATION.map, delivery.notificationId);
    // The notification was dismissed or withdrawn (an unfavourite), or the subscription changed
    // its mind: nothing to tell any more (Mastodon's worker checks pushable? when it runs, too).
    if (!subscription || !notification || !this.pushable(subscription, notification)) return this.done(id);
    const payload = this.payload(subscription, notification);
    if (payload === null) return this.done(id);
    let status: number;
    let refused = false;
    try {
      const p256dh = base64Bytes(subscription.keyP256dh)!;
      const auth = base64Bytes(subscription.keyAuth)!;
      const request = await buildPushRequest(
        { endpoint: subscription.endpoint, p256dh: Buffer.from(p256dh).toString("base64url"), auth: Buffer.from(auth).toString("base64url"), standard: subscription.standard },
        payload,
        this.vapid,
      );
      const response = await this.post(subscription.endpoint, request);
      status = response.status;
      await response.body?.cancel();
    } catch (e) {
      status = 0;
      refused = e instanceof OutgoingRefused;
      log("warn", "push failed", { delivery: id, error: String(e) });
    }
    if (status >= 200 && status < 300) return this.done(id);
    // A 4xx other than 408/429 means the push service forgot it; an endpoint refused as private
    // (or not http) would be refused at every try: either way the subscription goes.
    if (refused || (status >= 400 && status < 500 && status !== 408 && status !== 429)) {
      log("info", "push subscription gone", { subscription: subscription.id, status });
      this.subscriptions.remove(subscription.id);
      return;
    }
    return this.retry(id, delivery.attempts + 1, status);
  }

  /** What the push tells, decided here (who sent it, which status, in which language), rendered by `render`. */
  private payload(subscription: PushSubscriptionRow, n: NotificationRow): string | null {
    const from = this.read<AccountRow>(this.q.account, ACCOUNT.map, n.fromAccountId);
    if (!from) return null;
    let status = n.statusId !== null ? (this.read<StatusRow>(this.q.status, STATUS.map, n.statusId) ?? null) : null;
    if (status?.reblogOfId != null) status = this.read<StatusRow>(this.q.status, STATUS.map, status.reblogOfId) ?? status;
    const user = this.q.user.get(n.accountId);
    return this.render({
      accessToken: subscription.sealedToken ? this.seal.open(subscription.sealedToken) : null,
      locale: user?.locale || "en",
      notification: n,
      from,
      status,
    });
  }

  private read<T>(statement: Statement<unknown[], [number]>, map: (r: unknown[]) => T, id: number): T | undefined {
    const raw = statement.values(id)[0];
    return raw === undefined ? undefined : map(raw);
  }

  private done(id: number): Promise<void> {
    return this.writes.run(() => void this.q.remove.run(id));
  }

  private retry(id: number, attempts: number, status: number): Promise<void> | undefined {
    if (attempts > MAX_RETRIES) {
      log("warn", "push given up", { delivery: id, status });
      return this.done(id);
    }
    const dueAt = this.clock.now() + retryDelayMs(attempts);
    this.q.retry.run(attempts, dueAt, id);
    if (!this.stopped) this.wheel.schedule("push", id, dueAt);
    return undefined;
  }
}
