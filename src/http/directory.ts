import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { serializeAccount } from "../presenters/account.ts";
import { optionalUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { bool, int, limitParam, OFFSET, str } from "./params.ts";

/** GET /api/v1/directory: the profile directory (offset paging, 40 by default, 80 at most). */
export function directoryRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia().get("/api/v1/directory", async (c) => {
    const viewer = viewerId(optionalUser(ctx, c.request));
    const p = input(c);
    const limit = limitParam(p.limit, 40);
    const offset = int(p.offset, "offset", OFFSET) ?? 0;
    const order = str(p.order, "order") === "new" ? "new" : "active";
    const rows = await services.directory.list(viewer, { offset, limit, order, local: bool(p.local, "local") === true });
    return (await services.accounts.showMany(rows)).map((account) => serializeAccount(ctx.urls, account));
  });
}
