import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { serializeRelationship } from "../presenters/relationship.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { pageParams } from "./pagination.ts";
import { pathId } from "./params.ts";
import { renderAccountList } from "./render.ts";

/** Endorsed accounts (Mastodon's Api::V1::Accounts::PinsController and EndorsementsController). */
export function endorsementRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia()
    .post("/api/v1/accounts/:id/pin", async (c) => {
      const auth = requireUser(ctx, c.request, "write:accounts");
      return serializeRelationship(await services.endorsements.pin(auth.accountId, pathId(c.params.id)));
    })
    .post("/api/v1/accounts/:id/unpin", async (c) => {
      const auth = requireUser(ctx, c.request, "write:accounts");
      return serializeRelationship(await services.endorsements.unpin(auth.accountId, pathId(c.params.id)));
    })
    .get("/api/v1/endorsements", async (c) => {
      const auth = requireUser(ctx, c.request, "read:accounts");
      const page = pageParams(input(c), 40, 80);
      return renderAccountList(ctx, c.request, c.set, await services.endorsements.list(auth.accountId, page), page.limit);
    });
}
