import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import type { StatusRow } from "../db/schema.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { str, type Params } from "./params.ts";
import { renderStatus } from "../presenters/status-json.ts";

type Action = (actorId: number, statusId: number | null, params: Params) => StatusRow;

/** POST /api/v1/statuses/:id/<action>, each with the scope the spec's table gives it. */
export function statusActionRoutes(ctx: AppContext) {
  const actions = ctx.services.statusActions;
  const route = (scope: string, action: Action) => (c: { request: Request; params: { id?: string }; body?: unknown }) => {
    const auth = requireUser(ctx, c.request, scope);
    const params = input(c);
    return ctx.services.writes.run(() => {
      const row = action(auth.accountId, parseId(c.params.id), params);
      // Counters moved inside the action: render the row as it is now.
      return renderStatus(ctx, ctx.services.reader.findRow(row.id) ?? row, auth.accountId);
    });
  };
  return new Elysia()
    .post("/api/v1/statuses/:id/favourite", route("write:favourites", (a, s) => actions.favourite(a, s)))
    .post("/api/v1/statuses/:id/unfavourite", route("write:favourites", (a, s) => actions.unfavourite(a, s)))
    .post("/api/v1/statuses/:id/reblog", route("write:statuses", (a, s, p) => actions.reblog(a, s, str(p.visibility))))
    .post("/api/v1/statuses/:id/unreblog", route("write:statuses", (a, s) => actions.unreblog(a, s)))
    .post("/api/v1/statuses/:id/bookmark", route("write:bookmarks", (a, s) => actions.bookmark(a, s)))
    .post("/api/v1/statuses/:id/unbookmark", route("write:bookmarks", (a, s) => actions.unbookmark(a, s)))
    .post("/api/v1/statuses/:id/mute", route("write:mutes", (a, s) => actions.muteThread(a, s)))
    .post("/api/v1/statuses/:id/unmute", route("write:mutes", (a, s) => actions.unmuteThread(a, s)))
    .post("/api/v1/statuses/:id/pin", route("write:accounts", (a, s) => actions.pin(a, s)))
    .post("/api/v1/statuses/:id/unpin", route("write:accounts", (a, s) => actions.unpin(a, s)));
}
