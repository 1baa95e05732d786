import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { serializeFilter, serializeFilterStatus, serializeKeyword, serializeV1Filter } from "../presenters/filter.ts";
import type { FilterInput, KeywordInput } from "../services/filters.ts";
import type { V1FilterInput } from "../services/filters-v1.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { bool, int, obj, pathId, SECONDS, str, strArray, type ParamValue, type Params } from "./params.ts";

const READ = ["read:filters"] as const;
const WRITE = ["write:filters"] as const;
/** Mastodon's DeprecationConcern for the v1 filters API (deprecated 2022-11-14). */
const DEPRECATION = "@1668384000";

/**
 * `expires_in`: absent leaves it, blank clears it, anything else is seconds from now read
 * as Ruby's to_i reads it ("abc" is 0: expired at once, as in Mastodon).
 */
function expiresIn(v: ParamValue | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  if (typeof v === "number") return int(v, "expires_in", SECONDS) ?? 0;
  const s = str(v, "expires_in");
  if (s === undefined || s.trim() === "") return null;
  return int(/^\s*[-+]?\d+/.exec(s)?.[0], "expires_in", SECONDS) ?? 0;
}

/** `keywords_attributes` as an array (`[][keyword]`, JSON) or an indexed hash (`[0][keyword]`). */
function keywordsParam(v: ParamValue | undefined): KeywordInput[] | undefined {
  if (v === undefined || v === null) return undefined;
  const entries = Array.isArray(v) ? v : Object.values(obj(v, "keywords_attributes")!);
  return entries.flatMap((entry) => {
    const o = obj(entry, "keywords_attributes");
    if (!o) return [];
    const k: KeywordInput = {};
    const id = str(o.id, "keywords_attributes[id]");
    if (id !== undefined && id !== "") k.id = parseId(id) ?? -1;
    const keyword = str(o.keyword, "keywords_attributes[keyword]");
    if (keyword !== undefined) k.keyword = keyword;
    const wholeWord = bool(o.whole_word, "keywords_attributes[whole_word]");
    if (wholeWord !== undefined) k.wholeWord = wholeWord;
    if (bool(o._destroy, "keywords_attributes[_destroy]")) k.destroy = true;
    return [k];
  });
}

function filterInput(p: Params): FilterInput {
  const out: FilterInput = {};
  const title = str(p.title, "title");
  if (title !== undefined) out.title = title;
  const context = strArray(p.context, "context");
  if (context !== undefined) out.context = context;
  const action = str(p.filter_action, "filter_action");
  if (action !== undefined) out.action = action;
  const expires = expiresIn(p.expires_in);
  if (expires !== undefined) out.expiresIn = expires;
  const keywords = keywordsParam(p.keywords_attributes);
  if (keywords !== undefined) out.keywords = keywords;
  return out;
}

function v1Input(p: Params): V1FilterInput {
  const out: V1FilterInput = {};
  const phrase = str(p.phrase, "phrase");
  if (phrase !== undefined) out.phrase = phrase;
  const context = strArray(p.context, "context");
  if (context !== undefined) out.context = context;
  const irreversible = bool(p.irreversible, "irreversible");
  if (irreversible !== undefined) out.irreversible = irreversible;
  const wholeWord = bool(p.whole_word, "whole_word");
  if (wholeWord !== undefined) out.wholeWord = wholeWord;
  const expires = expiresIn(p.expires_in);
  if (expires !== undefined) out.expiresIn = expires;
  return out;
}

/** Keyword and status filters (v2), and the per-keyword v1 API older clients fall back to. */
export function filterRoutes(ctx: AppContext) {
  const { services } = ctx;
  const filters = services.filters;
  return new Elysia()
    .get("/api/v2/filters", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      return (await filters.list(auth.accountId)).map(serializeFilter);
    })
    .post("/api/v2/filters", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      return serializeFilter(await filters.create(auth.accountId, filterInput(input(c))));
    })
    .get("/api/v2/filters/keywords/:id", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      return serializeKeyword(await filters.getKeyword(auth.accountId, pathId(c.params.id)));
    })
    .put("/api/v2/filters/keywords/:id", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      const p = input(c);
      return serializeKeyword(await filters.updateKeyword(auth.accountId, pathId(c.params.id), str(p.keyword, "keyword"), bool(p.whole_word, "whole_word")));
    })
    .delete("/api/v2/filters/keywords/:id", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      await filters.removeKeyword(auth.accountId, pathId(c.params.id));
      return {};
    })
    .get("/api/v2/filters/statuses/:id", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      return serializeFilterStatus(await filters.getStatus(auth.accountId, pathId(c.params.id)));
    })
    .delete("/api/v2/filters/statuses/:id", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      await filters.removeStatus(auth.accountId, pathId(c.params.id));
      return {};
    })
    .get("/api/v2/filters/:id", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      return serializeFilter(await filters.get(auth.accountId, pathId(c.params.id)));
    })
    .put("/api/v2/filters/:id", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      return serializeFilter(await filters.update(auth.accountId, pathId(c.params.id), filterInput(input(c))));
    })
    .delete("/api/v2/filters/:id", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      await filters.remove(auth.accountId, pathId(c.params.id));
      return {};
    })
    .get("/api/v2/filters/:id/keywords", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      return (await filters.get(auth.accountId, pathId(c.params.id))).keywords.map(serializeKeyword);
    })
    .post("/api/v2/filters/:id/keywords", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      const p = input(c);
      return serializeKeyword(await filters.addKeyword(auth.accountId, pathId(c.params.id), str(p.keyword, "keyword"), bool(p.whole_word, "whole_word")));
    })
    .get("/api/v2/filters/:id/statuses", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      return (await filters.get(auth.accountId, pathId(c.params.id))).statuses.map(serializeFilterStatus);
    })
    .post("/api/v2/filters/:id/statuses", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      return serializeFilterStatus(await filters.addStatus(auth.accountId, pathId(c.params.id), parseId(str(input(c).status_id, "status_id"))));
    })
    .group("/api/v1/filters", (v1) =>
      v1
        .onAfterHandle(({ set }) => {
          set.headers.deprecation = DEPRECATION;
        })
        .get("", async (c) => {
          const auth = requireUser(ctx, c.request, READ);
          return (await services.filtersV1.list(auth.accountId)).map((f) => serializeV1Filter(f.filter, f.keyword));
        })
        .post("", async (c) => {
          const auth = requireUser(ctx, c.request, WRITE);
          const f = await services.filtersV1.create(auth.accountId, v1Input(input(c)));
          return serializeV1Filter(f.filter, f.keyword);
        })
        .get("/:id", async (c) => {
          const auth = requireUser(ctx, c.request, READ);
          const f = await services.filtersV1.get(auth.accountId, pathId(c.params.id));
          return serializeV1Filter(f.filter, f.keyword);
        })
        .put("/:id", async (c) => {
          const auth = requireUser(ctx, c.request, WRITE);
          const f = await services.filtersV1.update(auth.accountId, pathId(c.params.id), v1Input(input(c)));
          return serializeV1Filter(f.filter, f.keyword);
        })
        .delete("/:id", async (c) => {
          const auth = requireUser(ctx, c.request, WRITE);
          await services.filtersV1.remove(auth.accountId, pathId(c.params.id));
          return {};
        }),
    );
}
