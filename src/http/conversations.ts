import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AccountConversationRow } from "../db/schema.ts";
import { renderConversations } from "../presenters/conversation.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { pathId } from "./params.ts";

/** Direct-message threads: list, mark read or unread, leave. */
export function conversationRoutes(ctx: AppContext) {
  const { services } = ctx;
  const render = async (rows: AccountConversationRow[], ownerId: number) => renderConversations(services, ctx.urls, rows, await services.embeds.conversations(rows, ownerId), ownerId);
  return new Elysia()
    .get("/api/v1/conversations", async (c) => {
      const auth = requireUser(ctx, c.request, "read:statuses");
      const page = pageParams(input(c), 20, 40);
      const rows = await services.conversations.list(auth.accountId, page);
      if (rows.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, { next: rows[rows.length - 1]!.lastStatusId, prev: rows[0]!.lastStatusId });
        if (link) c.set.headers.link = link;
      }
      return render(rows, auth.accountId);
    })
    .post("/api/v1/conversations/:id/read", async (c) => {
      const auth = requireUser(ctx, c.request, "write:conversations");
      const row = await services.conversations.markRead(auth.accountId, pathId(c.params.id), false);
      return (await render([row], auth.accountId))[0];
    })
    .post("/api/v1/conversations/:id/unread", async (c) => {
      const auth = requireUser(ctx, c.request, "write:conversations");
      const row = await services.conversations.markRead(auth.accountId, pathId(c.params.id), true);
      return (await render([row], auth.accountId))[0];
    })
    .delete("/api/v1/conversations/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:conversations");
      await services.conversations.remove(auth.accountId, pathId(c.params.id));
      return {};
    });
}
