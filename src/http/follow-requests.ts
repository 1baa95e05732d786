import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { serializeRelationship } from "../presenters/relationship.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { pageParams } from "./pagination.ts";
import { pathId } from "./params.ts";
import { renderAccountList } from "./render.ts";

export function followRequestRoutes(ctx: AppContext) {
  const { services } = ctx;
  const requester = pathId;
  return new Elysia()
    .get("/api/v1/follow_requests", async (c) => {
      const auth = requireUser(ctx, c.request, "read:follows");
      const page = pageParams(input(c), 40, 80);
      return renderAccountList(ctx, c.request, c.set, await services.follows.pendingRequests(auth.accountId, page), page.limit, "since_id");
    })
    .post("/api/v1/follow_requests/:id/authorize", async (c) => {
      const auth = requireUser(ctx, c.request, "write:follows");
      return serializeRelationship(await services.follows.authorizeRequest(auth.accountId, requester(c.params.id)));
    })
    .post("/api/v1/follow_requests/:id/reject", async (c) => {
      const auth = requireUser(ctx, c.request, "write:follows");
      return serializeRelationship(await services.follows.rejectRequest(auth.accountId, requester(c.params.id)));
    });
}
