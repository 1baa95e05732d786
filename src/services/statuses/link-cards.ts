import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { log } from "../../log.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import { summarize } from "../../text/opengraph.ts";
import type { EventBus } from "../../infra/events.ts";
import type { GroupCommit } from "../../infra/group-commit.ts";
import type { RenderCache } from "./render-cache.ts";

/** Pages larger than this are not read further (the head is what counts). */
const MAX_PAGE_BYTES = 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;
/** A link whose page could not be read is tried again after a day, not on every post. */
const RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * The first link of a status's HTML that is neither a mention nor a hashtag (Mastodon's
 * FetchLinkCardService), nor a quote post's fallback link to what it quotes (shown as the quote).
 */
export function firstLink(html: string): string | null {
  for (const match of html.replace(/^<p class="quote-inline">.*?<\/p>/s, "").matchAll(/<a\s([^>]*)>/gi)) {
    const attrs = match[1]!;
    if (/class="[^"]*\b(mention|hashtag)\b/i.test(attrs) || /rel="[^"]*\btag\b/i.test(attrs)) continue;
    const href = /href="([^"]+)"/i.exec(attrs)?.[1]?.replace(/&amp;/g, "&");
    // The card's url, and the page fetched for it: http(s) only.
    const url = href ? httpUrlOrNull(href) : null;
    if (url) return url;
  }
  return null;
}

/**
 * Link previews: once a status with a link is stored, the linked page is fetched in the
 * background (bounded in time and size, through the public-address check), its OpenGraph read
 * into Mastodon's PreviewCard, kept per URL so that a link is fetched once, and set on every
 * status that asked for it. Statuses with media or a poll get none, as in Mastodon.
 */
export class LinkCards {
  private inFlight = new Map<string, Promise<string | null>>();
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private renderCache: RenderCache,
    /**
     * Where a card is set on its status: with the other writes of the same turn (posts above
     * all), not in a commit of its own per status.
     */
    private writes: GroupCommit,
    /** Downloads a page under a cap (OutgoingHttp.bytes in src/net/outgoing.ts, in the server). */
    private download: (url: string, maxBytes: number, timeoutMs: number) => Promise<Uint8Array>,
  ) {
  }

  private upsert(id: number, url: string, card: string | null, fetchedAt: number, failedAt: number | null): Promise<number> {
    return this.db.run(
      "INSERT INTO preview_cards (id, url, card, fetched_at, failed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (url) DO UPDATE SET card = excluded.card, fetched_at = excluded.fetched_at, failed_at = excluded.failed_at",
      [id, url, card, fetchedAt, failedAt],
    );
  }

  /** Link previews of new and edited statuses, fetched once they are stored. */
  subscribe(events: EventBus): void {
    for (const type of ["status.created", "status.updated"] as const) events.afterCommit(type, (e) => void this.forStatus(e.status));
  }

  /** Called once a status is stored or edited; resolves when its card, if any, is set. */
  forStatus(status: StatusRow): Promise<void> {
    if (status.reblogOfId !== null) return Promise.resolve();
    const url = status.hasMedia || status.hasPoll ? null : firstLink(status.contentHtml);
    if (!url) {
      // An edit that took the link (or added media) away takes the card too.
      return status.card !== null ? this.setCard(status.id, null) : Promise.resolve();
    }
    return this.cardOf(url).then((card) => {
      if (card === null || this.stopped) return;
      return this.setCard(status.id, card);
    });
  }

  private setCard(statusId: number, card: string | null): Promise<void> {
    return this.writes.run(async () => {
      await this.db.run("UPDATE statuses SET card = ? WHERE id = ?", [card, statusId]);
      this.renderCache.invalidateStatus(statusId);
    });
  }

  /** No fetch starts any more; resolves once the one under way is done (the database is closing). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.chain;
  }

  /** The card JSON for a URL: kept, or fetched once (one fetch per URL at a time, one page at a time). */
  private async cardOf(url: string): Promise<string | null> {
    const kept = await this.db.get<{ id: number; card: string | null; failed_at: number | null }>("SELECT id, card, failed_at FROM preview_cards WHERE url = ?", [url]);
    if (kept?.card) return kept.card;
    if (kept?.failed_at && this.clock.now() - Number(kept.failed_at) < RETRY_AFTER_MS) return null;
    // Nothing awaited from here to the map: a second call for the URL finds this one's fetch.
    const running = this.inFlight.get(url);
    if (running) return running;
    const next = this.chain.then(() => (this.stopped ? null : this.fetchCard(url, kept ? Number(kept.id) : undefined)));
    this.chain = next.catch(() => {});
    this.inFlight.set(url, next);
    return next.finally(() => this.inFlight.delete(url));
  }

  private async fetchCard(url: string, id: number | undefined): Promise<string | null> {
    const now = this.clock.now();
    try {
      const page = await this.download(url, MAX_PAGE_BYTES, FETCH_TIMEOUT_MS);
      if (this.stopped) return null;
      const summary = summarize(page, url);
      if (!summary.title) throw new Error("the page has no title");
      const provider = new URL(url);
      // REST::PreviewCardSerializer, in its key order.
      const card = JSON.stringify({
        url,
        title: summary.title.slice(0, 200),
        description: summary.description.slice(0, 500),
        language: summary.language,
        type: "link",
        author_name: summary.authorName.slice(0, 100),
        author_url: "",
        provider_name: summary.siteName.slice(0, 100) || provider.hostname,
        provider_url: "",
        html: "",
        width: summary.image ? summary.imageWidth : 0,
        height: summary.image ? summary.imageHeight : 0,
        image: summary.image,
        image_description: summary.imageDescription.slice(0, 500),
        embed_url: "",
        blurhash: null,
        published_at: summary.publishedAt && !Number.isNaN(Date.parse(summary.publishedAt)) ? new Date(summary.publishedAt).toISOString() : null,
        authors: [],
      });
      await this.upsert(id ?? this.ids.next(), url, card, now, null);
      return card;
    } catch (e) {
      log("info", "no link preview", { url, error: String(e).split("\n")[0] });
      if (!this.stopped) await this.upsert(id ?? this.ids.next(), url, null, now, now);
      return null;
    }
  }
}
