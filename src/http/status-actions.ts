import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import type { StatusActionName } from "../services/statuses/commands.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { str } from "./params.ts";
import { renderStatus } from "../presenters/status-json.ts";

/** POST /api/v1/statuses/:id/<action>, each with the scope the spec's table gives it. */
export function statusActionRoutes(ctx: AppContext) {
  const route = (scope: string, action: StatusActionName) => async (c: { request: Request; params: { id?: string }; body?: unknown }) => {
    const auth = requireUser(ctx, c.request, scope);
    const params = input(c);
    const row = await ctx.services.statusCommands.act(action, auth.accountId, parseId(c.params.id), { visibility: action === "reblog" ? str(params.visibility, "visibility") : undefined });
    return renderStatus(ctx.services, ctx.urls, row, auth.accountId);
  };
  return new Elysia()
    .post("/api/v1/statuses/:id/favourite", route("write:favourites", "favourite"))
    .post("/api/v1/statuses/:id/unfavourite", route("write:favourites", "unfavourite"))
    .post("/api/v1/statuses/:id/reblog", route("write:statuses", "reblog"))
    .post("/api/v1/statuses/:id/unreblog", route("write:statuses", "unreblog"))
    .post("/api/v1/statuses/:id/bookmark", route("write:bookmarks", "bookmark"))
    .post("/api/v1/statuses/:id/unbookmark", route("write:bookmarks", "unbookmark"))
    .post("/api/v1/statuses/:id/mute", route("write:mutes", "mute"))
    .post("/api/v1/statuses/:id/unmute", route("write:mutes", "unmute"))
    .post("/api/v1/statuses/:id/pin", route("write:accounts", "pin"))
    .post("/api/v1/statuses/:id/unpin", route("write:accounts", "unpin"));
}
