import type { AppContext } from "../context.ts";
import type { NotificationRow, StatusRow } from "../db/schema.ts";
import { renderConversations } from "../presenters/conversation.ts";
import { notificationsJson } from "../presenters/notification.ts";
import { serializeAnnouncement } from "../presenters/announcement.ts";
import { log } from "../log.ts";
import type { DomainEvent, EventBus } from "../infra/events.ts";
import { mentionedIds } from "../models/mentions.ts";
import { FrameCache, type StreamHub, type Subscription } from "./hub.ts";
import { StatusPayloads } from "./payloads.ts";

/**
 * Public topics a status goes to: the public timelines (when not a reply to someone else) and
 * its hashtags; the `:local` ones for this server's statuses, `public:remote` for the others
 * (a remote status has its object IRI in `uri`).
 */
function publicTopics(row: StatusRow): string[] {
  if (row.visibility !== "public" || row.reblogOfId !== null) return [];
  const topics: string[] = [];
  const where = row.uri === null ? "local" : "remote";
  const replyToOther = row.inReplyToId !== null && row.inReplyToAccountId !== row.accountId;
  if (!replyToOther) {
    topics.push("public", `public:${where}`);
    if (row.hasMedia) topics.push("public:media", `public:${where}:media`);
  }
  for (const tag of JSON.parse(row.tags) as string[]) topics.push(`hashtag:${tag}`, ...(where === "local" ? [`hashtag:${tag}:local`] : []));
  return topics;
}

/** A quote's state changed, or the quote went: what its quoting status's readers see changed. */
function isQuoteChange(e: DomainEvent): e is Extract<DomainEvent, { type: "quote.accepted" | "quote.rejected" | "quote.revoked" | "quote.removed" }> {
  return e.type === "quote.accepted" || e.type === "quote.rejected" || e.type === "quote.revoked" || e.type === "quote.removed";
}

/** What streams hear of, after commit (and what the main thread passes on to serving threads: src/threads). */
export const STREAM_EVENTS = [
  "status.created",
  "status.updated",
  "status.deleted",
  "list.delivered",
  "notification.created",
  "notifications.merged",
  "conversation.updated",
  "filters.changed",
  "announcement.published",
  "announcement.deleted",
  "announcement.reaction",
  "quote.accepted",
  "quote.rejected",
  "quote.revoked",
  "quote.removed",
  "token.revoked",
] as const satisfies readonly DomainEvent["type"][];

/**
 * Turns what the services announce into stream events, per recipient: the only publisher
 * of the hub. Work is queued and done right after the request that caused it has answered,
 * in order, so a post never waits for its audience and a delete never overtakes its update.
 */
export class StreamFanout {
  private queue: DomainEvent[] = [];
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];
  /** The rest of a batch, while one of its deliveries waits on the database. */
  private delivering: Promise<void> | null = null;

  constructor(
    private ctx: AppContext,
    private hub: StreamHub,
  ) {}

  /** What streams hear of, after commit (registered by the table in src/services/consequences.ts). */
  subscribe(events: EventBus) {
    for (const type of STREAM_EVENTS) {
      // A revoked token's connections are closed at once, not behind the rendering queue.
      if (type === "token.revoked") events.afterCommit(type, (e) => this.hub.closeToken(e.tokenId));
      else events.afterCommit(type, (e) => this.enqueue(e));
    }
  }

  private enqueue(event: DomainEvent) {
    // Nobody is listening: nothing to render, nothing to keep.
    if (this.hub.connectionCount === 0) return;
    this.queue.push(event);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  /** Runs what is queued; also called directly by benchmarks and tests that want it now. */
  drain() {
    this.scheduled = false;
    // A batch still waiting on the database takes the queue when it ends: events keep their order.
    if (this.delivering) return;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) {
      for (const done of this.idleWaiters.splice(0)) done();
      return;
    }
    this.delivering = this.deliverBatch(batch).then(() => {
      this.delivering = null;
      this.drain();
    });
  }

  /** A batch: what vanished since it was announced read first (the rendering reads through the database port). */
  private async deliverBatch(batch: DomainEvent[]): Promise<void> {
    try {
      await this.deliverFrom(batch, 0, await this.vanished(batch));
    } catch (e) {
      log("error", "stream delivery failed", { error: String(e).split("\n")[0] });
    }
  }

  /**
   * Delivers a batch from `from` on, in order. A delivery that reads through the database port
   * (statuses, notifications, announcements) answers a promise, and the rest of the batch follows it.
   */
  private deliverFrom(batch: DomainEvent[], from: number, gone: Awaited<ReturnType<StreamFanout["vanished"]>>): Promise<void> | undefined {
    const failed = (event: DomainEvent, e: unknown) => log("error", "stream delivery failed", { event: event.type, error: String(e).split("\n")[0] });
    for (let i = from; i < batch.length; i++) {
      const event = batch[i]!;
      // A status deleted since it was announced is not announced now (rolled-back writes never are).
      if ((event.type === "status.created" || event.type === "status.updated" || event.type === "list.delivered") && gone.statuses.has(event.status.id)) continue;
      if (isQuoteChange(event) && gone.statuses.has(event.quote.statusId)) continue;
      if (event.type === "notification.created" && gone.notifications.has(event.notification.id)) continue;
      try {
        const pending = this.deliver(event);
        if (pending) return pending.catch((e) => failed(event, e)).then(() => this.deliverFrom(batch, i + 1, gone));
      } catch (e) {
        failed(event, e);
      }
    }
    return undefined;
  }

  /**
   * Resolves once everything announced so far has been handed to the connections (tests
   * await it, then send a marker down each connection, before checking that a stream
   * received nothing). Any later step added between an event and `conn.send` must keep
   * this promise pending until it is done, or such checks would pass too early.
   */
  async idle(): Promise<void> {
    while (this.scheduled || this.queue.length > 0 || this.delivering) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Of the statuses and notifications a batch announces, those no longer in the database: one query each. */
  private async vanished(batch: DomainEvent[]) {
    const statusIds = new Set<number>();
    const notificationIds = new Set<number>();
    for (const e of batch) {
      if (e.type === "status.created" || e.type === "status.updated" || e.type === "list.delivered") statusIds.add(e.status.id);
      else if (isQuoteChange(e)) statusIds.add(e.quote.statusId);
      else if (e.type === "notification.created") notificationIds.add(e.notification.id);
    }
    const { reader, notifications } = this.ctx.services;
    const present = new Set((await reader.rowsByIds([...statusIds])).map((r) => r.id));
    const presentNotes = await notifications.existing([...notificationIds]);
    return {
      statuses: new Set([...statusIds].filter((id) => !present.has(id))),
      notifications: new Set([...notificationIds].filter((id) => !presentNotes.has(id))),
    };
  }

  /** A reader's own copy; a render that fails costs that reader the event, not the others. */
  private async payloadFor(payloads: StatusPayloads, viewerId: number): Promise<string | null> {
    try {
      return await payloads.forViewer(viewerId);
    } catch (e) {
      log("error", "stream render failed", { status: payloads.row.id, error: String(e).split("\n")[0] });
      return null;
    }
  }

  private async notificationCreated(n: NotificationRow) {
    const topic = `notifications:${n.accountId}`;
    if (!this.hub.has(topic)) return;
    const { services, urls } = this.ctx;
    const [rendered] = await notificationsJson(services, urls, [n], await services.embeds.notifications([n], n.accountId), n.accountId);
    if (rendered) this.hub.publish(topic, "notification", rendered);
  }

  private deliver(event: DomainEvent): Promise<void> | void {
    switch (event.type) {
      case "status.created":
        // Fetched to fill a thread or a profile: old news, in no timeline's stream (the thread's reader asks again).
        if (event.backfill) return;
        return this.statusCreated(event.status, event.homeRecipients);
      case "status.updated":
        return this.statusUpdated(event.status, event.homeRecipients, event.listIds);
      case "list.delivered":
        return this.listDelivered(event.status, event.listIds);
      case "status.deleted":
        return this.statusDeleted(event.status, event.homeRecipients, event.listIds);
      case "notification.created":
        return this.notificationCreated(event.notification);
      case "conversation.updated": {
        const topic = `direct:${event.accountId}`;
        if (!this.hub.has(topic)) return;
        const { services, urls } = this.ctx;
        return (async () => {
          const row = await services.conversations.findRow(event.accountId, event.conversationId);
          if (!row) return;
          const [rendered] = await renderConversations(services, urls, [row], await services.embeds.conversations([row], event.accountId), event.accountId);
          this.hub.publish(topic, "conversation", JSON.stringify(rendered));
        })();
      }
      case "filters.changed":
        return this.hub.publish(`user:${event.accountId}`, "filters_changed", undefined);
      // Mastodon's UnfilterNotificationsWorker tells the notification streams, payload "1".
      case "notifications.merged":
        return this.hub.publish(`notifications:${event.accountId}`, "notifications_merged", "1");
      case "announcement.published":
        return this.announcementPublished(event.announcementId);
      case "announcement.reaction":
        return this.announcementReaction(event.announcementId, event.name);
      case "announcement.deleted":
        return this.toEveryUser("announcement.delete", String(event.announcementId));
      case "quote.accepted":
      case "quote.rejected":
      case "quote.revoked":
      case "quote.removed":
        return this.quoteChanged(event);
    }
  }

  /**
   * A quote accepted, refused, revoked or dropped after its quoting status went out: that status
   * again (`status.update`) to the streams it went to, so that clients show the quote's new
   * state, as Mastodon's RevokeQuoteService, Delete#revoke_quote, QuoteRequest and Accept run
   * DistributionWorker with `update`. Not when the quote was settled with the status itself.
   */
  private async quoteChanged(event: Extract<DomainEvent, { type: "quote.accepted" | "quote.rejected" | "quote.revoked" | "quote.removed" }>) {
    if ("withStatus" in event && event.withStatus) return;
    const { reader, homeFeed, lists } = this.ctx.services;
    const row = await reader.findRow(event.quote.statusId);
    if (!row) return;
    await this.statusUpdated(row, await homeFeed.holding(row.id), await lists.holding(row.id));
  }

  /** An edited status (or its quote's new state): `status.update` to the streams it went to. */
  private async statusUpdated(row: StatusRow, homeRecipients: number[], listIds: number[]) {
    await this.statusCreated(row, homeRecipients, "status.update");
    await this.listDelivered(row, listIds, "status.update");
  }

  /** Rendered once, for no viewer (no `read`, no `me`), as Mastodon's worker renders it. */
  private async announcementPublished(id: number) {
    const { announcements } = this.ctx.services;
    const row = (await announcements.all()).find((a) => a.id === id);
    if (!row) return;
    const [view] = await announcements.views([row], null);
    await this.toEveryUser("announcement", JSON.stringify(serializeAnnouncement(this.ctx.urls, view!)));
  }

  private async announcementReaction(id: number, name: string) {
    const count = await this.ctx.services.announcements.reactionCount(id, name);
    await this.toEveryUser("announcement.reaction", JSON.stringify({ name, count, announcement_id: String(id) }));
  }

  /** Announcements concern every local user: each user stream that is open hears it. */
  private async toEveryUser(event: string, payload: string) {
    const frames = new FrameCache(event);
    for (const id of await this.ctx.services.accounts.localIds()) {
      const topic = `user:${id}`;
      if (this.hub.has(topic)) this.hub.publish(topic, event, payload, frames);
    }
  }

  /** A new status (`update`), or an edited one (`status.update`) to the same readers. */
  private async statusCreated(row: StatusRow, homeRecipients: number[], event: "update" | "status.update" = "update") {
    let payloads: StatusPayloads | undefined;
    const get = () => (payloads ??= new StatusPayloads(this.ctx, row, event === "update"));
    // One frame cache for every reader of this status: most share one payload.
    const frames = new FrameCache(event);
    for (const recipient of homeRecipients) {
      const topic = `user:${recipient}`;
      if (!this.hub.has(topic)) continue;
      const json = await this.payloadFor(get(), recipient);
      if (json !== null) this.hub.publish(topic, event, json, frames);
    }
    const topics = publicTopics(row).filter((t) => this.hub.has(t));
    if (topics.length === 0) return;
    const p = get();
    // Each listening reader's copy rendered first (the reads are awaited), then sent to all at once.
    const ready = new Map<number | null, string | null>();
    for (const topic of topics) {
      for (const sub of [...this.hub.listeners(topic)]) {
        const viewer = sub.conn.accountId;
        if (ready.has(viewer)) continue;
        ready.set(viewer, await this.publicPayload(p, viewer));
      }
    }
    const payloadFor = (sub: Subscription) => ready.get(sub.conn.accountId) ?? null;
    for (const topic of topics) this.hub.publish(topic, event, payloadFor, frames);
  }

  /** A public or hashtag stream's reader's copy: none for readers who shun the author (see shunnedBy). */
  private async publicPayload(p: StatusPayloads, viewer: number | null): Promise<string | null> {
    try {
      if (viewer === null) return await p.anonymous();
      return (await p.shunnedBy(viewer)) ? null : await this.payloadFor(p, viewer);
    } catch (e) {
      log("error", "stream render failed", { status: p.row.id, error: String(e).split("\n")[0] });
      return null;
    }
  }

  private async listDelivered(row: StatusRow, listIds: number[], event: "update" | "status.update" = "update") {
    const streamed = listIds.filter((id) => this.hub.has(`list:${id}`));
    if (streamed.length === 0) return;
    const payloads = new StatusPayloads(this.ctx, row, event === "update");
    const frames = new FrameCache(event);
    for (const [listId, owner] of await this.ctx.services.lists.owners(streamed)) {
      const json = await this.payloadFor(payloads, owner);
      if (json !== null) this.hub.publish(`list:${listId}`, event, json, frames);
    }
  }

  /** `delete` wherever the status could have been seen. */
  private statusDeleted(row: StatusRow, homeRecipients: number[], listIds: number[]) {
    const id = String(row.id);
    const topics = new Set<string>();
    for (const r of homeRecipients) topics.add(`user:${r}`);
    for (const l of listIds) topics.add(`list:${l}`);
    if (row.reblogOfId === null) {
      for (const m of mentionedIds(row)) topics.add(`user:${m}`);
      if (row.visibility === "direct") for (const p of [row.accountId, ...mentionedIds(row)]) topics.add(`direct:${p}`);
      // Replies to others never went to the public streams, but saying so costs nothing.
      for (const topic of publicTopics({ ...row, inReplyToId: null })) topics.add(topic);
    }
    const frames = new FrameCache("delete");
    for (const topic of topics) this.hub.publish(topic, "delete", id, frames);
  }
}
