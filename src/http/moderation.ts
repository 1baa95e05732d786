import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { serializeAccount } from "../presenters/account.ts";
import { serializeRelationship } from "../presenters/relationship.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { pageParams } from "./pagination.ts";
import { bool, int, pathId, SECONDS } from "./params.ts";
import { renderAccountList } from "./render.ts";

/** Account blocks and mutes, and their lists. */
export function moderationRoutes(ctx: AppContext) {
  const { services } = ctx;
  const target = pathId;
  return new Elysia()
    .post("/api/v1/accounts/:id/block", async (c) => {
      const auth = requireUser(ctx, c.request, "write:blocks");
      return serializeRelationship(await services.moderation.block(auth.accountId, target(c.params.id)));
    })
    .post("/api/v1/accounts/:id/unblock", async (c) => {
      const auth = requireUser(ctx, c.request, "write:blocks");
      return serializeRelationship(await services.moderation.unblock(auth.accountId, target(c.params.id)));
    })
    .post("/api/v1/accounts/:id/mute", async (c) => {
      const auth = requireUser(ctx, c.request, "write:mutes");
      const p = input(c);
      return serializeRelationship(
        await services.moderation.mute(auth.accountId, target(c.params.id), { notifications: bool(p.notifications, "notifications"), durationSeconds: int(p.duration, "duration", SECONDS) }),
      );
    })
    .post("/api/v1/accounts/:id/unmute", async (c) => {
      const auth = requireUser(ctx, c.request, "write:mutes");
      return serializeRelationship(await services.moderation.unmute(auth.accountId, target(c.params.id)));
    })
    .get("/api/v1/blocks", async (c) => {
      const auth = requireUser(ctx, c.request, "read:blocks");
      const page = pageParams(input(c), 40, 80);
      return renderAccountList(ctx, c.request, c.set, await services.moderation.listBlocks(auth.accountId, page), page.limit, "since_id");
    })
    .get("/api/v1/mutes", async (c) => {
      const auth = requireUser(ctx, c.request, "read:mutes");
      const page = pageParams(input(c), 40, 80);
      const rows = await services.moderation.listMutes(auth.accountId, page);
      // MutedAccountSerializer: the account with mute_expires_at after its attributes.
      return renderAccountList(ctx, c.request, c.set, rows, page.limit, "since_id", (r, account) => {
        const { emojis, roles, fields, ...attributes } = serializeAccount(ctx.urls, account);
        return { ...attributes, mute_expires_at: r.expiresAt === null ? null : new Date(r.expiresAt).toISOString(), emojis, roles, fields };
      });
    });
}
