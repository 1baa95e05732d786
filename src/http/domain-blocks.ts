import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { str } from "./params.ts";

/**
 * A user's own domain blocks (Mastodon's Api::V1::DomainBlocksController): the list as
 * domain strings, paged by max_id and since_id (100 by default, 200 at most); blocking and
 * unblocking answer `{}`.
 */
export function domainBlockRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia()
    .get("/api/v1/domain_blocks", async (c) => {
      const auth = requireUser(ctx, c.request, "read:blocks");
      const { limit, maxId, sinceId } = pageParams(input(c), 100, 200);
      const rows = await services.domainBlocks.list(auth.accountId, { limit, maxId, sinceId });
      if (rows.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, { next: rows.length >= limit ? rows[rows.length - 1]!.cursor : null, prev: rows[0]!.cursor, prevKey: "since_id" });
        if (link) c.set.headers.link = link;
      }
      return rows.map((r) => r.domain);
    })
    .post("/api/v1/domain_blocks", async (c) => {
      const auth = requireUser(ctx, c.request, "write:blocks");
      await services.domainBlocks.block(auth.accountId, str(input(c).domain, "domain"));
      return {};
    })
    .delete("/api/v1/domain_blocks", async (c) => {
      const auth = requireUser(ctx, c.request, "write:blocks");
      await services.domainBlocks.unblock(auth.accountId, str(input(c).domain, "domain"));
      return {};
    });
}
