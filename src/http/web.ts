import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { serializeAccount } from "../presenters/account.ts";
import { statusesJson, statusJson } from "../presenters/status-json.ts";
import { EMBED_CSP, PAGE_CSP, STYLESHEET, STYLESHEET_PATH } from "../web/layout.ts";
import { escapeHtml } from "../text/format.ts";
import { cookie, SESSION_COOKIE } from "./oauth-forms.ts";
import { aboutPage, embedPage, profilePage, statusPage, tagPage, type AccountEntity, type StatusEntity } from "../web/pages.ts";
import { rssFeed } from "../web/rss.ts";
import { INSTANCE_DESCRIPTION } from "../services/instance-keys.ts";
import { htmlToText } from "../text/html-to-text.ts";
import { input } from "./input.ts";
import { int } from "./params.ts";
import { pageParams } from "./pagination.ts";
import { parseId } from "../ids.ts";

/**
 * Status pages as an anonymous reader gets them, kept while nothing rendered changed (the render
 * cache's generation, which moves with every status or account invalidation, replies and counts
 * included) and for at most the minute the pages tell caches to keep them anyway.
 */
interface Rendered {
  body: string;
  headers: Record<string, string>;
}

/** A kept status page, with the path's handle and the author it was made for. */
type KeptPage = Rendered & { handle: string; accountId: number };

class PageCache {
  private entries = new Map<number, KeptPage & { generation: number; at: number }>();
  constructor(
    private renderCache: { generation: number },
    private clock: { now(): number },
  ) {}

  get(statusId: number) {
    const entry = this.entries.get(statusId);
    if (!entry) return undefined;
    if (entry.generation !== this.renderCache.generation || this.clock.now() - entry.at > 60_000) {
      this.entries.delete(statusId);
      return undefined;
    }
    return entry;
  }

  /** `generation`: as read before the page's parts were, so a change meanwhile makes it stale at once. */
  set(statusId: number, page: KeptPage, generation: number) {
    if (this.entries.size >= 1_000) this.entries.delete(this.entries.keys().next().value as number);
    this.entries.set(statusId, { ...page, generation, at: this.clock.now() });
  }
}

/** The paths of a local status: its page, or its ActivityPub IRI. */
const STATUS_URL = /^\/(?:@([A-Za-z0-9_]+)|users\/([A-Za-z0-9_]+)\/statuses)\/(\d{1,19})$/;

/** `@name` of a local account, as the url of its profile spells it (and `.rss` for its feed). */
const HANDLE = /^@([A-Za-z0-9_]+)(\.rss)?$/;

/**
 * The public face: every `url` Rookery emits opens in a browser. `/@name` and `/@name/:id` as
 * server-rendered pages built from the same entities the API gives an anonymous reader (same
 * sanitized HTML, same visibility rule: public and unlisted only), no script. An ActivityPub
 * client asking for these URLs gets the actor or Note from Fedify instead (src/http/edge.ts).
 */
export function webRoutes(ctx: AppContext) {
  const { services, config } = ctx;
  const site = { title: config.instanceTitle, publicUrl: config.publicUrl };

  /**
   * A page, with a validator: an ETag of its bytes, so that a browser or proxy asking again with
   * If-None-Match gets 304 and no body while nothing on the page changed.
   */
  const page = (request: Request, body: string, activity: string | undefined) => respond(request, rendered(body, activity));
  /** A page's bytes with its headers, made once (kept with a cached page). */
  const rendered = (body: string, activity: string | undefined): Rendered => ({
    body,
    headers: {
      etag: `W/"${Bun.hash(body).toString(36)}"`,
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": PAGE_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      // The same URL answers ActivityPub clients with JSON: caches keep the two apart.
      vary: "Accept",
      // Members' pages (WHITELIST_MODE) are for this browser only.
      "cache-control": config.whitelistMode ? "private, max-age=60" : "public, max-age=60",
      ...(activity ? { link: `<${activity}>; rel="alternate"; type="application/activity+json"` } : {}),
    },
  });
  const respond = (request: Request, page: Rendered) => {
    const etag = page.headers.etag!;
    const matched = request.headers.get("if-none-match")?.split(",").some((t) => t.trim() === etag) ?? false;
    return new Response(matched ? null : page.body, { status: matched ? 304 : 200, headers: page.headers });
  };

  /**
   * WHITELIST_MODE: pages, like the API, are for signed-in members. A browser signed in (the web
   * session of /oauth/sign_in or of an app's authorization) reads them; anyone else gets 401 and
   * a link to sign in that comes back here. Null when the request may read the page.
   */
  const membersOnly = async (request: Request): Promise<Response | null> => {
    if (!config.whitelistMode || (await services.webSessions.accountFor(cookie(request, SESSION_COOKIE))) !== null) return null;
    const url = new URL(request.url);
    const signIn = `/oauth/sign_in?return_to=${encodeURIComponent(url.pathname + url.search)}`;
    return new Response(
      `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in required</title><link rel="stylesheet" href="${STYLESHEET_PATH}"></head><body><main id="main"><h1>Sign in required</h1><p>This server shows its posts to its members only.</p><p><a href="${escapeHtml(signIn)}">Sign in</a></p></main></body></html>`,
      { status: 401, headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": PAGE_CSP, "cache-control": "private, no-store" } },
    );
  };

  const rss = (body: string) =>
    new Response(body, { headers: { "content-type": "application/rss+xml; charset=utf-8", "cache-control": "public, max-age=60", "x-content-type-options": "nosniff" } });

  /** The local account behind `@name`, or 404. */
  const accountOf = async (handle: string) => {
    const name = HANDLE.exec(handle)?.[1];
    const account = name ? await services.accounts.getLocal(name) : undefined;
    if (!account || account.domain !== null || account.username.toLowerCase() !== name!.toLowerCase()) throw notFound();
    return account;
  };
  const parsed = <T>(json: string) => JSON.parse(json) as T;
  const statusPages = new PageCache(services.renderCache, ctx.clock);
  const browser = (request: Request) => (request.headers.get("accept") ?? "").includes("text/html");
  /** A local account's name, spelled exactly as its IRIs spell it. */
  const exactly = async (name: string) => (await accountOf(`@${name}`)).username === name;
  /** A status of the account behind `@name`, as an anonymous reader may see it; else 404. */
  const visibleOf = async (handle: string, id: string) => {
    if (handle.endsWith(".rss")) throw notFound();
    const account = await accountOf(handle);
    const row = await services.reader.visibleRow(parseId(id), null);
    if (row.accountId !== account.id) throw notFound();
    return row;
  };
  /**
   * A signed-in browser reads a status page as its member: one the author blocked gets 404, as
   * Mastodon's StatusPolicy answers it (the page itself stays the anonymous one: public and
   * unlisted only, the same bytes for everyone).
   */
  const seenByMember = async (request: Request, statusId: number) => {
    const member = await services.webSessions.accountFor(cookie(request, SESSION_COOKIE));
    if (member !== null) await services.reader.visibleRow(statusId, member);
  };
  const statusOf = async (handle: string, id: string) => {
    const row = await visibleOf(handle, id);
    const json = await statusJson(services, ctx.urls, row, null);
    if (json === null) throw notFound();
    return { row, json };
  };

  return new Elysia()
    .get(STYLESHEET_PATH, () => new Response(STYLESHEET, { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=86400" } }))
    // An actor's or Note's IRI opened in a browser: its page, as Mastodon redirects. Only for
    // browsers and the exact name: Fedify passes on to us what it does not serve, such as an
    // IRI it answered 404 (an unknown case, a private status), and an ActivityPub client must get that 404.
    .get("/users/:name", async (c) => {
      if (!browser(c.request) || !(await exactly(c.params.name))) throw notFound();
      return Response.redirect(`${config.publicUrl}/@${c.params.name}`, 302);
    })
    .get("/users/:name/statuses/:id", async (c) => {
      if (!browser(c.request) || !(await exactly(c.params.name))) throw notFound();
      return Response.redirect(`${config.publicUrl}/@${c.params.name}/${c.params.id}`, 302);
    })
    .get("/", async (c) => {
      const stats = await services.instanceInfo.stats();
      const about = (await services.instanceInfo.extendedDescription()).html;
      const rules = (await services.instanceInfo.rules()).map((r) => ({ text: r.text, hint: r.hint }));
      const body = aboutPage({ ...site, description: INSTANCE_DESCRIPTION, aboutHtml: about, rules, contactEmail: config.contactEmail, registrations: await services.registrations.mode(), users: stats.userCount, statuses: stats.statusCount });
      return page(c.request, body, undefined);
    })
    .get("/tags/:name", async (c) => {
      const closed = await membersOnly(c.request);
      if (closed) return closed;
      const raw = c.params.name;
      const feed = raw.endsWith(".rss");
      const tag = feed ? raw.slice(0, -4) : raw;
      const p = pageParams(input(c), 20, 40);
      const posts = await services.timelines.tag(null, tag, p, {});
      const statuses = parsed<StatusEntity[]>(await statusesJson(services, ctx.urls, posts.rows, null));
      const url = `${config.publicUrl}/tags/${encodeURIComponent(tag)}`;
      if (feed) return rss(rssFeed({ title: `#${tag}`, link: url, description: `Public posts with #${tag} on ${site.title}`, self: `${url}.rss` }, statuses));
      return page(c.request, tagPage(site, tag, statuses, posts.full && posts.last !== null ? `${url}?max_id=${posts.last}` : null), undefined);
    })
    .get("/:handle", async (c) => {
      const account = await accountOf(c.params.handle);
      const closed = await membersOnly(c.request);
      if (closed) return closed;
      const entity = parsed<AccountEntity>(JSON.stringify(serializeAccount(ctx.urls, await services.accounts.show(account))));
      if (c.params.handle.endsWith(".rss")) {
        // Public posts only, replies and boosts left out, as Mastodon's account feed.
        const posts = await services.timelines.account(null, account.id, { limit: 20 }, { excludeReplies: true, excludeReblogs: true });
        const statuses = parsed<StatusEntity[]>(await statusesJson(services, ctx.urls, posts.rows, null)).filter((s) => s.visibility === "public");
        const description = htmlToText(entity.note) || `Public posts from @${entity.acct}`;
        return rss(rssFeed({ title: `${entity.display_name || entity.username} (@${entity.acct})`, link: entity.url, description, self: `${entity.url}.rss`, image: entity.avatar }, statuses));
      }
      const p = pageParams(input(c), 20, 40);
      const posts = await services.timelines.account(null, account.id, p, {});
      const pinned = p.maxId === undefined && p.minId === undefined && p.sinceId === undefined ? (await services.timelines.account(null, account.id, { limit: 20 }, { pinned: true })).rows : [];
      const next = posts.full && posts.last !== null ? `${entity.url}?max_id=${posts.last}` : null;
      const body = profilePage(site, entity, parsed<StatusEntity[]>(await statusesJson(services, ctx.urls, pinned, null)), parsed<StatusEntity[]>(await statusesJson(services, ctx.urls, posts.rows, null)), next);
      return page(c.request, body, entity.uri);
    })
    // A featured hashtag's `url` (Mastodon's short_account_tag_url): the profile, only the posts with that tag.
    .get("/:handle/tagged/:tag", async (c) => {
      const account = await accountOf(c.params.handle);
      const closed = await membersOnly(c.request);
      if (closed) return closed;
      const entity = parsed<AccountEntity>(JSON.stringify(serializeAccount(ctx.urls, await services.accounts.show(account))));
      const tag = c.params.tag;
      const p = pageParams(input(c), 20, 40);
      const posts = await services.timelines.account(null, account.id, p, { tagged: tag });
      const here = `${entity.url}/tagged/${encodeURIComponent(tag)}`;
      const next = posts.full && posts.last !== null ? `${here}?max_id=${posts.last}` : null;
      return page(c.request, profilePage(site, entity, [], parsed<StatusEntity[]>(await statusesJson(services, ctx.urls, posts.rows, null)), next), entity.uri);
    })
    .get("/:handle/:id/embed", async (c) => {
      const closed = await membersOnly(c.request);
      if (closed) return closed;
      const { json } = await statusOf(c.params.handle, c.params.id);
      return new Response(embedPage(site, parsed<StatusEntity>(json)), {
        headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": EMBED_CSP, "x-content-type-options": "nosniff", "cache-control": "public, max-age=60" },
      });
    })
    .get("/api/oembed", async (c) => {
      if (await membersOnly(c.request)) throw notFound();
      const p = input(c);
      const url = typeof p.url === "string" ? p.url : "";
      const match = STATUS_URL.exec(url.startsWith(config.publicUrl) ? url.slice(config.publicUrl.length) : "");
      if (!match) throw notFound();
      const status = parsed<StatusEntity>((await statusOf(`@${match[1] ?? match[2]}`, match[3]!)).json);
      const width = int(p.maxwidth, "maxwidth", { min: 100, max: 1200 }) ?? 400;
      const embed = `${status.url}/embed`;
      // Mastodon's OEmbedSerializer, in its key order.
      return {
        type: "rich",
        version: "1.0",
        author_name: status.account.display_name || status.account.username,
        author_url: status.account.url,
        provider_name: config.domain,
        provider_url: `${config.publicUrl}/`,
        cache_age: 86400,
        html: `<iframe src="${escapeHtml(embed)}" class="mastodon-embed" style="max-width: 100%; border: 0" width="${width}" allowfullscreen="allowfullscreen"></iframe>`,
        width,
        height: null,
      };
    })
    .get("/:handle/:id", async (c) => {
      const closed = await membersOnly(c.request);
      if (closed) return closed;
      // A page kept for this very path skips the account's lookup: the status is still checked
      // as visible, and any change to it or its author moved the generation that kept the page.
      const handle = c.params.handle.toLowerCase();
      const id = parseId(c.params.id);
      const cached = id === null ? undefined : statusPages.get(id);
      if (cached && cached.handle === handle && (await services.reader.visibleRow(id, null)).accountId === cached.accountId) {
        await seenByMember(c.request, id!);
        return respond(c.request, cached);
      }
      const row = await visibleOf(c.params.handle, c.params.id);
      await seenByMember(c.request, row.id);
      const generation = services.renderCache.generation;
      const json = await statusJson(services, ctx.urls, row, null);
      if (json === null) throw notFound();
      const { ancestors, descendants } = await services.remoteThreads.context(row, null);
      const status = parsed<StatusEntity>(json);
      const thread = [...parsed<StatusEntity[]>(await statusesJson(services, ctx.urls, ancestors, null)), status, ...parsed<StatusEntity[]>(await statusesJson(services, ctx.urls, descendants, null))];
      const body = statusPage(site, status, thread.slice(0, ancestors.length), thread.slice(ancestors.length + 1));
      // Polls change with votes and time, which the render cache does not follow: never kept.
      const made = rendered(body, status.uri);
      if (!thread.some((s) => (s.reblog ?? s).poll)) statusPages.set(row.id, { ...made, handle, accountId: row.accountId }, generation);
      return respond(c.request, made);
    });
}
