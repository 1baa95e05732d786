import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { serializePoll } from "../presenters/poll.ts";
import { optionalUser, requireUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { strArray } from "./params.ts";

export function pollRoutes(ctx: AppContext) {
  const { services } = ctx;
  const render = async (statusRowId: number, viewer: number | null) => {
    const view = await services.reader.view((await services.reader.findRow(statusRowId))!, viewer);
    return serializePoll(view.poll!, viewer);
  };
  return new Elysia()
    .get("/api/v1/polls/:id", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const { status } = await services.polls.visiblePoll(parseId(c.params.id), viewer);
      return render(status.id, viewer);
    })
    .post("/api/v1/polls/:id/votes", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      const choices = strArray(input(c).choices, "choices");
      const status = await services.statusCommands.vote(auth.accountId, parseId(c.params.id), choices);
      return render(status.id, auth.accountId);
    });
}
