import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { serializeFeaturedTag } from "../presenters/featured-tag.ts";
import { serializeTag } from "../presenters/tag.ts";
import { optionalUser, requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { pathId, str } from "./params.ts";

/** Featured hashtags (Mastodon's Api::V1::FeaturedTagsController and its neighbours). */
export function featuredTagRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  const usernameOf = async (accountId: number) => (await services.accounts.get(accountId))?.username ?? "";
  return new Elysia()
    .get("/api/v1/featured_tags", async (c) => {
      const auth = requireUser(ctx, c.request, "read:accounts");
      const username = await usernameOf(auth.accountId);
      return (await services.featuredTags.list(auth.accountId, true)).map((f) => serializeFeaturedTag(urls, username, f));
    })
    .post("/api/v1/featured_tags", async (c) => {
      const auth = requireUser(ctx, c.request, "write:accounts");
      const created = await services.featuredTags.create(auth.accountId, str(input(c).name, "name"));
      return serializeFeaturedTag(urls, await usernameOf(auth.accountId), created);
    })
    .delete("/api/v1/featured_tags/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:accounts");
      await services.featuredTags.remove(auth.accountId, parseId(c.params.id));
      return {};
    })
    .get("/api/v1/featured_tags/suggestions", async (c) => {
      const auth = requireUser(ctx, c.request, "read:accounts");
      const suggested = await services.featuredTags.suggestions(auth.accountId);
      const followed = await services.tagFollows.followed(auth.accountId, suggested.map((t) => t.id));
      return suggested.map((t) => serializeTag(urls, t, auth.accountId, t.id !== null && followed.has(t.id)));
    })
    .get("/api/v1/accounts/:id/featured_tags", async (c) => {
      optionalUser(ctx, c.request);
      const account = await services.accounts.get(pathId(c.params.id));
      if (!account) throw notFound();
      return (await services.featuredTags.list(account.id)).map((f) => serializeFeaturedTag(urls, account.username, f));
    });
}
