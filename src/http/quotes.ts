import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { renderStatus, statusesJson } from "../presenters/status-json.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { str } from "./params.ts";
import { jsonText } from "./render.ts";

/**
 * Quote posts (Mastodon 4.5): the quotes of one's own status, taking one back, and who may
 * quote a status without editing it. Quoting itself is a parameter of POST /api/v1/statuses.
 */
export function quoteRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  return new Elysia()
    .get("/api/v1/statuses/:id/quotes", async (c) => {
      const auth = requireUser(ctx, c.request, "read:statuses");
      const page = pageParams(input(c), 20, 40);
      const { rows, cursors } = await services.quoteListing.quotesOf(auth.accountId, parseId(c.params.id), page);
      const headers: Record<string, string> = {};
      // Paged by the quotes' own ids; `next` only after a full page, `prev` by since_id (Api::V1::Statuses::QuotesController).
      if (cursors.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, { next: cursors.length >= page.limit ? cursors[cursors.length - 1] : null, prev: cursors[0], prevKey: "since_id" });
        if (link) headers.link = link;
      }
      return jsonText(await statusesJson(services, urls, rows, auth.accountId), headers);
    })
    .post("/api/v1/statuses/:id/quotes/:quoting_status_id/revoke", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      const row = await services.statusCommands.revokeQuote(auth.accountId, parseId(c.params.id), parseId(c.params.quoting_status_id));
      return renderStatus(services, urls, row, auth.accountId);
    })
    .put("/api/v1/statuses/:id/interaction_policy", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      const policy = str(input(c).quote_approval_policy, "quote_approval_policy");
      const row = await services.statusCommands.changeQuotePolicy(auth.accountId, parseId(c.params.id), policy);
      return renderStatus(services, urls, row, auth.accountId);
    });
}
