import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { optionalUser, requireUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { pageParams } from "./pagination.ts";
import { bool, str, strArray } from "./params.ts";
import { renderTimeline } from "./render.ts";

/** Timelines, account statuses, bookmarks and favourites: 20 per page by default, 40 at most. */
export function timelineRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia()
    .get("/api/v1/timelines/home", async (c) => {
      const auth = requireUser(ctx, c.request, "read:statuses");
      const page = await services.timelines.home(auth.accountId, pageParams(input(c.request), 20, 40));
      return renderTimeline(ctx, c.request, page, auth.accountId, true, ["limit", "local"]);
    })
    .get("/api/v1/timelines/public", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const p = input(c.request);
      const local = bool(p.local, "local") === true;
      const page = await services.timelines.public(viewer, pageParams(p, 20, 40), { onlyMedia: bool(p.only_media, "only_media"), local, remote: bool(p.remote, "remote") === true && !local });
      return renderTimeline(ctx, c.request, page, viewer, true, ["limit", "local", "remote", "only_media"]);
    })
    .get("/api/v1/timelines/tag/:hashtag", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const p = input(c.request);
      const local = bool(p.local, "local") === true;
      const page = await services.timelines.tag(viewer, c.params.hashtag, pageParams(p, 20, 40), {
        any: strArray(p.any, "any"),
        all: strArray(p.all, "all"),
        none: strArray(p.none, "none"),
        onlyMedia: bool(p.only_media, "only_media"),
        remote: bool(p.remote, "remote") === true && !local,
      });
      return renderTimeline(ctx, c.request, page, viewer, true, ["limit", "local", "only_media"]);
    })
    .get("/api/v1/accounts/:id/statuses", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const accountId = parseId(c.params.id);
      const account = accountId === null ? undefined : await services.accounts.get(accountId);
      if (!account) throw notFound();
      // A signed-in reader opening a remote profile little known here has its posts fetched first
      // (for a moment at most); a local account's posts are all here.
      if (viewer !== null && account.domain !== null) await services.accountHistory.viewed(account.id);
      const p = input(c.request);
      const page = await services.timelines.account(viewer, account.id, pageParams(p, 20, 40), {
        pinned: bool(p.pinned, "pinned"),
        excludeReplies: bool(p.exclude_replies, "exclude_replies"),
        excludeReblogs: bool(p.exclude_reblogs, "exclude_reblogs"),
        onlyMedia: bool(p.only_media, "only_media"),
        tagged: str(p.tagged, "tagged"),
      });
      return renderTimeline(ctx, c.request, page, viewer, false, ["limit", "pinned", "exclude_replies", "exclude_reblogs", "only_media", "tagged"]);
    })
    .get("/api/v1/bookmarks", async (c) => {
      const auth = requireUser(ctx, c.request, "read:bookmarks");
      const page = await services.timelines.bookmarks(auth.accountId, pageParams(input(c.request), 20, 40));
      return renderTimeline(ctx, c.request, page, auth.accountId, false);
    })
    .get("/api/v1/favourites", async (c) => {
      const auth = requireUser(ctx, c.request, "read:favourites");
      const page = await services.timelines.favourites(auth.accountId, pageParams(input(c.request), 20, 40));
      return renderTimeline(ctx, c.request, page, auth.accountId, false);
    });
}
