import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { serializeAccount } from "../serializers/account.ts";
import { serializeRelationship } from "../serializers/relationship.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";

export function followRequestRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  const requester = (id: string | undefined) => {
    const parsed = parseId(id);
    if (parsed === null) throw notFound();
    return parsed;
  };
  return new Elysia()
    .get("/api/v1/follow_requests", (c) => {
      const auth = requireUser(ctx, c.request, "read:follows");
      const page = pageParams(input(c), 40, 80);
      const rows = services.follows.pendingRequests(auth.accountId, page);
      const link = linkHeader(ctx.config.publicUrl, c.request, {
        next: rows.length === page.limit && rows.length > 0 ? rows[rows.length - 1]!.cursor : null,
        prev: rows.length > 0 ? rows[0]!.cursor : null,
        prevKey: "since_id",
      });
      if (link) c.set.headers.link = link;
      return rows.map((r) => serializeAccount(urls, r.account));
    })
    .post("/api/v1/follow_requests/:id/authorize", (c) => {
      const auth = requireUser(ctx, c.request, "write:follows");
      return serializeRelationship(services.follows.authorizeRequest(auth.accountId, requester(c.params.id)));
    })
    .post("/api/v1/follow_requests/:id/reject", (c) => {
      const auth = requireUser(ctx, c.request, "write:follows");
      return serializeRelationship(services.follows.rejectRequest(auth.accountId, requester(c.params.id)));
    });
}
