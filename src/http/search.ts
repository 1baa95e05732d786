import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError, notFound } from "../errors.ts";
import { serializeAccount } from "../serializers/account.ts";
import { serializeTag } from "../serializers/tag.ts";
import type { SearchType } from "../services/search.ts";
import { optionalUser, requireUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { bool, int, str, type Params } from "./params.ts";
import { jsonText, statusesJson } from "./status-json.ts";

const TYPES = new Set<string>(["accounts", "hashtags", "statuses"]);

/** Rails' limit_param: the absolute value, at most twice the default. */
function limitParam(p: Params, defaultLimit: number): number {
  const raw = str(p.limit);
  return raw === undefined ? defaultLimit : Math.min(Math.abs(int(raw) ?? 0), defaultLimit * 2);
}

/** Tag names need a letter (or an underscore) somewhere, as Mastodon's HASHTAG_NAME_RE. */
const TAG_NAME = /^[\p{L}\p{N}_·\u200c]*[\p{L}_·\u200c][\p{L}\p{N}_·\u200c]*$/u;

export function searchRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  return new Elysia()
    .get("/api/v2/search", (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:search"));
      const p = input(c);
      const q = str(p.q);
      if (q === undefined || q.trim() === "") throw new ApiError(400, "param is missing or the value is empty: q");
      const offset = str(p.offset);
      const resolve = bool(p.resolve) === true;
      if (viewer === null && offset !== undefined && offset !== "") {
        throw new ApiError(401, "Search queries pagination is not supported without authentication");
      }
      if (viewer === null && resolve) throw new ApiError(401, "Search queries that resolve remote resources are not supported without authentication");
      const type = str(p.type);
      if (type !== undefined && type !== "" && !TYPES.has(type)) return { accounts: [], statuses: [], hashtags: [] };
      const found = services.search.search(viewer, q, {
        type: type ? (type as SearchType) : undefined,
        limit: limitParam(p, 20),
        offset: Math.max(0, int(offset) ?? 0),
        resolve,
        following: bool(p.following) === true,
      });
      const accounts = JSON.stringify(found.accounts.map((a) => serializeAccount(urls, a)));
      const hashtags = JSON.stringify(found.hashtags.map((t) => serializeTag(urls, t, viewer)));
      return jsonText(`{"accounts":${accounts},"statuses":${statusesJson(ctx, found.statuses, viewer)},"hashtags":${hashtags}}`);
    })
    .get("/api/v1/accounts/search", (c) => {
      const auth = requireUser(ctx, c.request, "read:accounts");
      const p = input(c);
      const found = services.search.accounts(auth.accountId, str(p.q) ?? "", {
        limit: limitParam(p, 40),
        offset: Math.max(0, int(p.offset) ?? 0),
        following: bool(p.following) === true,
      });
      return found.map((a) => serializeAccount(urls, a));
    })
    .get("/api/v1/tags/:name", (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request));
      let name: string;
      try {
        name = decodeURIComponent(c.params.name);
      } catch {
        throw notFound();
      }
      if (!TAG_NAME.test(name)) throw notFound();
      const tag = services.search.tag(name);
      if (!tag) throw notFound();
      return serializeTag(urls, tag, viewer);
    });
}
