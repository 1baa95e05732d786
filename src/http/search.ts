import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError, notFound } from "../errors.ts";
import { serializeAccount } from "../presenters/account.ts";
import { serializeTag } from "../presenters/tag.ts";
import type { SearchType } from "../services/search.ts";
import { optionalUser, requireUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { bool, int, limitParam, OFFSET, str } from "./params.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { statusesJson } from "../presenters/status-json.ts";
import { jsonText } from "./render.ts";
import { MAX_HASHTAG_LENGTH } from "../text/format.ts";

const TYPES = new Set<string>(["accounts", "hashtags", "statuses"]);

/** Tag names need a letter (or an underscore) somewhere, as Mastodon's HASHTAG_NAME_RE. */
const TAG_NAME = /^[\p{L}\p{N}_·\u200c]*[\p{L}_·\u200c][\p{L}\p{N}_·\u200c]*$/u;

/**
 * The tag named in the path (the router has decoded it; a malformed escape leaves no
 * string); anything that cannot be a tag name is 404.
 */
function tagName(raw: unknown): string {
  if (typeof raw !== "string" || raw.length > MAX_HASHTAG_LENGTH || !TAG_NAME.test(raw)) throw notFound();
  return raw;
}

export function searchRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  return new Elysia()
    .get("/api/v2/search", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:search"));
      const p = input(c);
      const q = str(p.q, "q");
      if (q === undefined || q.trim() === "") throw new ApiError(400, "param is missing or the value is empty: q");
      const offset = str(p.offset, "offset");
      const resolve = bool(p.resolve, "resolve") === true;
      if (viewer === null && offset !== undefined && offset !== "") {
        throw new ApiError(401, "Search queries pagination is not supported without authentication");
      }
      if (viewer === null && resolve) throw new ApiError(401, "Search queries that resolve remote resources are not supported without authentication");
      const type = str(p.type, "type");
      if (type !== undefined && type !== "" && !TYPES.has(type)) return { accounts: [], statuses: [], hashtags: [] };
      const found = await services.search.search(viewer, q, {
        type: type ? (type as SearchType) : undefined,
        limit: limitParam(p.limit, 20),
        offset: int(offset, "offset", OFFSET) ?? 0,
        resolve,
        following: bool(p.following, "following") === true,
      });
      const accounts = JSON.stringify((await services.accounts.showMany(found.accounts)).map((a) => serializeAccount(urls, a)));
      const followed = viewer === null ? new Set<number>() : await services.tagFollows.followed(viewer, found.hashtags.map((t) => t.id));
      const hashtags = JSON.stringify(found.hashtags.map((t) => serializeTag(urls, t, viewer, t.id !== null && followed.has(t.id))));
      return jsonText(`{"accounts":${accounts},"statuses":${await statusesJson(services, urls, found.statuses, viewer)},"hashtags":${hashtags}}`);
    })
    .get("/api/v1/accounts/search", async (c) => {
      const auth = requireUser(ctx, c.request, "read:accounts");
      const p = input(c);
      const found = await services.search.findAccounts(auth.accountId, str(p.q, "q") ?? "", {
        limit: limitParam(p.limit, 40),
        offset: int(p.offset, "offset", OFFSET) ?? 0,
        following: bool(p.following, "following") === true,
        resolve: bool(p.resolve, "resolve") === true,
      });
      return (await services.accounts.showMany(found)).map((a) => serializeAccount(urls, a));
    })
    .get("/api/v1/tags/:name", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request));
      const tag = await services.search.tag(tagName(c.params.name));
      if (!tag) throw notFound();
      return serializeTag(urls, tag, viewer, viewer !== null && tag.id !== null && (await services.tagFollows.followed(viewer, [tag.id])).size > 0);
    })
    .post("/api/v1/tags/:name/follow", async (c) => {
      const auth = requireUser(ctx, c.request, "write:follows");
      return serializeTag(urls, await services.tagFollows.follow(auth.accountId, tagName(c.params.name)), auth.accountId, true);
    })
    .post("/api/v1/tags/:name/unfollow", async (c) => {
      const auth = requireUser(ctx, c.request, "write:follows");
      return serializeTag(urls, await services.tagFollows.unfollow(auth.accountId, tagName(c.params.name)), auth.accountId, false);
    })
    .get("/api/v1/followed_tags", async (c) => {
      const auth = requireUser(ctx, c.request, "read:follows");
      const page = pageParams(input(c), 100, 200);
      const rows = await services.tagFollows.list(auth.accountId, page);
      if (rows.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, { next: rows.length >= page.limit ? rows[rows.length - 1]!.cursor : null, prev: rows[0]!.cursor });
        if (link) c.set.headers.link = link;
      }
      return rows.map((r) => serializeTag(urls, r.tag, auth.accountId, true));
    });
}
