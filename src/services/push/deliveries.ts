import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { pushSubscriptions, type AccountRow, type NotificationRow, type PushSubscriptionRow, type StatusRow } from "../../db/schema.ts";
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
const SUBSCRIPTIONS_OF = `SELECT ${SUBSCRIPTION.columns} ${SUBSCRIPTION.from} WHERE account_id = ?`;

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
 *
 * On the database port (issue 31): sending (the wheel's job), `restore`, and `enqueue`, the
 * `within` listener of notification.created, awaited inside the notification's transaction.
 */
export class PushDeliveries {
  private inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** The deliveries `enqueue` wrote for a notification, put on the wheel once it commits (the event carries the same row to both). */
  private written = new WeakMap<NotificationRow, number[]>();
  /** Every push runs these: built once (src/db/port.ts). */
  private q;

  constructor(
    private port: DatabasePort,
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
    const t = port.tables;
    const orm = port.orm;
    const id = sql.placeholder("id");
    this.q = {
      subscription: orm.select().from(t.pushSubscriptions).where(eq(t.pushSubscriptions.id, id)).limit(1).prepare(),
      delivery: orm.select().from(t.pushDeliveries).where(eq(t.pushDeliveries.id, id)).limit(1).prepare(),
      notification: orm.select().from(t.notifications).where(eq(t.notifications.id, id)).limit(1).prepare(),
      account: orm.select().from(t.accounts).where(eq(t.accounts.id, id)).limit(1).prepare(),
      status: orm.select().from(t.statuses).where(eq(t.statuses.id, id)).limit(1).prepare(),
      locale: orm.select({ locale: t.users.locale }).from(t.users).where(eq(t.users.accountId, id)).limit(1).prepare(),
      follows: orm
        .select({ one: sql<number>`1` })
        .from(t.follows)
        .where(and(eq(t.follows.accountId, sql.placeholder("accountId")), eq(t.follows.targetAccountId, sql.placeholder("targetAccountId"))))
        .limit(1)
        .prepare(),
      remove: orm.delete(t.pushDeliveries).where(eq(t.pushDeliveries.id, id)).prepare(),
      retry: orm
        .update(t.pushDeliveries)
        .set({ attempts: sql.placeholder("attempts") as unknown as number, dueAt: sql.placeholder("dueAt") as unknown as number })
        .where(eq(t.pushDeliveries.id, id))
        .prepare(),
      waiting: orm.select({ id: t.pushDeliveries.id, dueAt: t.pushDeliveries.dueAt }).from(t.pushDeliveries).prepare(),
    };
  }

  /** Once a notification committed, its pushes are sent (the rows were written by `enqueue`, within it). */
  subscribe(events: EventBus): void {
    events.afterCommit("notification.created", (e) => this.committed(e.notification));
  }

  /** Inside the notification's transaction: one delivery per subscription that wants it. */
  async enqueue(n: NotificationRow): Promise<void> {
    // Most accounts have no subscription: known from memory, without a statement.
    if (!(await this.subscriptions.hasAny(n.accountId))) return;
    const ids: number[] = [];
    for (const raw of await this.port.values(SUBSCRIPTIONS_OF, [n.accountId])) {
      const s = SUBSCRIPTION.map(raw);
      const wanted = pushable(s, n);
      if (wanted === false || (wanted !== true && (await this.q.follows.execute({ accountId: wanted.accountId, targetAccountId: wanted.targetAccountId })).length === 0)) continue;
      const id = this.ids.next();
      await this.port.run("INSERT INTO push_deliveries (id, subscription_id, notification_id, attempts, due_at) VALUES (?, ?, ?, 0, ?)", [id, s.id, n.id, this.clock.now()]);
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
  async restore(): Promise<void> {
    for (const row of (await this.q.waiting.execute()) as { id: number; dueAt: number }[]) this.wheel.hold("push", row.id, row.dueAt);
  }

  /** Waits for the pushes being sent (the rest stay in the table for the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.inFlight]);
  }

  /** `pushable` with its follow looked up, if it needs one. */
  private async wants(s: PushSubscriptionRow, n: NotificationRow): Promise<boolean> {
    const wanted = pushable(s, n);
    if (typeof wanted === "boolean") return wanted;
    return (await this.q.follows.execute(wanted)).length > 0;
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    return work.finally(() => this.inFlight.delete(work));
  }

  private async send(id: number): Promise<void> {
    if (this.stopped) return;
    const [delivery] = (await this.q.delivery.execute({ id })) as DeliveryRow[];
    if (!delivery) return;
    const [subscription] = (await this.q.subscription.execute({ id: delivery.subscriptionId })) as PushSubscriptionRow[];
    const [notification] = (await this.q.notification.execute({ id: delivery.notificationId })) as NotificationRow[];
    // The notification was dismissed or withdrawn (an unfavourite), or the subscription changed
    // its mind: nothing to tell any more (Mastodon's worker checks pushable? when it runs, too).
    if (!subscription || !notification || !(await this.wants(subscription, notification))) return this.done(id);
    const payload = await this.payload(subscription, notification);
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
      return this.subscriptions.remove(subscription.id);
    }
    return this.retry(id, delivery.attempts + 1, status);
  }

  /** What the push tells, decided here (who sent it, which status, in which language), rendered by `render`. */
  private async payload(subscription: PushSubscriptionRow, n: NotificationRow): Promise<string | null> {
    const [from] = (await this.q.account.execute({ id: n.fromAccountId })) as AccountRow[];
    if (!from) return null;
    let status = n.statusId !== null ? (((await this.q.status.execute({ id: n.statusId })) as StatusRow[])[0] ?? null) : null;
    if (status?.reblogOfId != null) status = ((await this.q.status.execute({ id: status.reblogOfId })) as StatusRow[])[0] ?? status;
    const [user] = await this.q.locale.execute({ id: n.accountId });
    return this.render({
      accessToken: subscription.sealedToken ? this.seal.open(subscription.sealedToken) : null,
      locale: user?.locale || "en",
      notification: n,
      from,
      status,
    });
  }

  private async done(id: number): Promise<void> {
    await this.writes.run(async () => void (await this.q.remove.execute({ id })));
  }

  private async retry(id: number, attempts: number, status: number): Promise<void> {
    if (attempts > MAX_RETRIES) {
      log("warn", "push given up", { delivery: id, status });
      return this.done(id);
    }
    const dueAt = this.clock.now() + retryDelayMs(attempts);
    await this.q.retry.execute({ attempts, dueAt, id });
    if (!this.stopped) this.wheel.schedule("push", id, dueAt);
  }
}

/**
 * Web::PushSubscription#pushable?: the alert is on and the policy lets the sender through; for
 * the policies that depend on a follow, the follow to look up (by whoever calls: `enqueue`
 * synchronously, sending through the port).
 */
function pushable(s: PushSubscriptionRow, n: NotificationRow): boolean | { accountId: number; targetAccountId: number } {
  const alerts = JSON.parse(s.alerts) as Record<string, boolean>;
  if (alerts[n.type] !== true) return false;
  switch (s.policy) {
    case "none":
      return false;
    case "followed":
      return { accountId: n.accountId, targetAccountId: n.fromAccountId };
    case "follower":
      return { accountId: n.fromAccountId, targetAccountId: n.accountId };
    default:
      return true;
  }
}
