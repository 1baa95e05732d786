import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { accounts, follows, notifications, pushDeliveries, pushSubscriptions, statuses, users, type NotificationRow, type PushSubscriptionRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { log } from "../../log.ts";
import type { PushNotificationView } from "../../models/views.ts";
import type { EventBus } from "../../infra/events.ts";
import type { TimerWheel } from "../../infra/timer-wheel.ts";
import { OutgoingRefused } from "../../net/outgoing.ts";
import { base64Bytes, type PushSubscriptions } from "./subscriptions.ts";
import type { TokenSeal } from "./token-seal.ts";
import { buildPushRequest, type VapidSigner } from "./web-push.ts";

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
  ) {
    wheel.handle("push", (id) => this.track(this.send(Number(id))));
  }

  /** Once a notification committed, its pushes are sent (the rows were written by `enqueue`, within it). */
  subscribe(events: EventBus): void {
    events.afterCommit("notification.created", (e) => this.committed(e.notification));
  }

  /** Inside the notification's transaction: one delivery per subscription that wants it. */
  enqueue(n: NotificationRow): void {
    if (!this.subscriptions.hasAny(n.accountId)) return;
    for (const s of this.db.select().from(pushSubscriptions).where(eq(pushSubscriptions.accountId, n.accountId)).all()) {
      if (!this.pushable(s, n)) continue;
      this.db.insert(pushDeliveries).values({ id: this.ids.next(), subscriptionId: s.id, notificationId: n.id, attempts: 0, dueAt: this.clock.now() }).run();
    }
  }

  /** Once the notification committed: its deliveries, read back, go on the wheel (a rolled-back one has none). */
  committed(n: NotificationRow): void {
    if (!this.subscriptions.hasAny(n.accountId)) return;
    for (const { id } of this.db.select({ id: pushDeliveries.id }).from(pushDeliveries).where(eq(pushDeliveries.notificationId, n.id)).all()) {
      this.wheel.schedule("push", id, this.clock.now());
    }
  }

  /** At start: what was waiting when the server stopped. */
  restore(): void {
    for (const row of this.db.select({ id: pushDeliveries.id, dueAt: pushDeliveries.dueAt }).from(pushDeliveries).all()) {
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
    return !!this.db
      .select({ one: sql<number>`1` })
      .from(follows)
      .where(and(eq(follows.accountId, accountId), eq(follows.targetAccountId, targetAccountId)))
      .get();
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    return work.finally(() => this.inFlight.delete(work));
  }

  private async send(id: number): Promise<void> {
    if (this.stopped) return;
    const delivery = this.db.select().from(pushDeliveries).where(eq(pushDeliveries.id, id)).get();
    if (!delivery) return;
    const subscription = this.db.select().from(pushSubscriptions).where(eq(pushSubscriptions.id, delivery.subscriptionId)).get();
    const notification = this.db.select().from(notifications).where(eq(notifications.id, delivery.notificationId)).get();
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
    this.retry(id, delivery.attempts + 1, status);
  }

  /** What the push tells, decided here (who sent it, which status, in which language), rendered by `render`. */
  private payload(subscription: PushSubscriptionRow, n: NotificationRow): string | null {
    const from = this.db.select().from(accounts).where(eq(accounts.id, n.fromAccountId)).get();
    if (!from) return null;
    let status = n.statusId !== null ? (this.db.select().from(statuses).where(eq(statuses.id, n.statusId)).get() ?? null) : null;
    if (status?.reblogOfId != null) status = this.db.select().from(statuses).where(eq(statuses.id, status.reblogOfId)).get() ?? status;
    const user = this.db.select({ locale: users.locale, language: users.defaultLanguage }).from(users).where(eq(users.accountId, n.accountId)).get();
    return this.render({
      accessToken: subscription.sealedToken ? this.seal.open(subscription.sealedToken) : null,
      locale: user?.locale || "en",
      notification: n,
      from,
      status,
    });
  }

  private done(id: number): void {
    this.db.delete(pushDeliveries).where(eq(pushDeliveries.id, id)).run();
  }

  private retry(id: number, attempts: number, status: number): void {
    if (attempts > MAX_RETRIES) {
      log("warn", "push given up", { delivery: id, status });
      return this.done(id);
    }
    const dueAt = this.clock.now() + retryDelayMs(attempts);
    this.db.update(pushDeliveries).set({ attempts, dueAt }).where(eq(pushDeliveries.id, id)).run();
    if (!this.stopped) this.wheel.schedule("push", id, dueAt);
  }
}
