import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { serializeAnnouncement } from "../presenters/announcement.ts";
import { requireUser } from "./auth.ts";

/** Mastodon's Api::V1::AnnouncementsController and its reactions. */
export function announcementRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  // Mastodon's scopes: reading needs `read`; dismissing `write:accounts`, reacting `write:favourites`.
  return new Elysia()
    .get("/api/v1/announcements", async (c) => {
      const auth = requireUser(ctx, c.request, ["read"]);
      const { announcements } = services;
      return (await announcements.views(await announcements.current(), auth.accountId)).map((a) => serializeAnnouncement(urls, a));
    })
    .post("/api/v1/announcements/:id/dismiss", async (c) => {
      const auth = requireUser(ctx, c.request, "write:accounts");
      await services.announcements.dismiss(auth.accountId, parseId(c.params.id));
      return {};
    })
    .put("/api/v1/announcements/:id/reactions/:name", async (c) => {
      const auth = requireUser(ctx, c.request, "write:favourites");
      await services.announcements.react(auth.accountId, parseId(c.params.id), c.params.name);
      return {};
    })
    .delete("/api/v1/announcements/:id/reactions/:name", async (c) => {
      const auth = requireUser(ctx, c.request, "write:favourites");
      await services.announcements.unreact(auth.accountId, parseId(c.params.id), c.params.name);
      return {};
    });
}
