import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { serializeTag } from "../presenters/tag.ts";
import { optionalUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { int, limitParam, OFFSET } from "./params.ts";

/** Trends::TagsController's limits. */
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 20;

/**
 * Trending hashtags (Mastodon's Api::V1::Trends::TagsController, and the older /api/v1/trends
 * it answers too): offset paging with Link headers, `following` for a signed-in viewer.
 */
export function trendRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  const tags = async (c: { request: Request; set: any; body?: unknown }) => {
    const viewer = viewerId(optionalUser(ctx, c.request));
    const p = input(c);
    const limit = limitParam(p.limit, DEFAULT_LIMIT, MAX_LIMIT);
    const offset = int(p.offset, "offset", OFFSET) ?? 0;
    const found = await services.search.trendingTags(limit, offset);
    const path = new URL(c.request.url).pathname;
    const link = (at: number) => `${ctx.config.publicUrl}${path}?${new URLSearchParams({ limit: String(limit), offset: String(at) })}`;
    const links: string[] = [];
    if (found.length === limit && limit > 0) links.push(`<${link(offset + limit)}>; rel="next"`);
    if (offset > limit) links.push(`<${link(offset - limit)}>; rel="prev"`);
    if (links.length) c.set.headers.link = links.join(", ");
    const followed = viewer === null ? new Set<number>() : await services.tagFollows.followed(viewer, found.map((t) => t.id));
    return found.map((t) => serializeTag(urls, t, viewer, t.id !== null && followed.has(t.id)));
  };
  return new Elysia().get("/api/v1/trends/tags", tags).get("/api/v1/trends", tags);
}
