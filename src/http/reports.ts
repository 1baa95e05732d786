import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { serializeReport } from "../presenters/report.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { bool, str, strArray } from "./params.ts";

/** POST /api/v1/reports (Mastodon's Api::V1::ReportsController). */
export function reportRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia().post("/api/v1/reports", async (c) => {
    const auth = requireUser(ctx, c.request, "write:reports");
    const p = input(c);
    const report = await services.reports.create(auth.accountId, {
      accountId: parseId(str(p.account_id, "account_id")),
      statusIds: (strArray(p.status_ids, "status_ids") ?? []).map(parseId),
      ruleIds: (strArray(p.rule_ids, "rule_ids") ?? []).map(parseId),
      comment: str(p.comment, "comment"),
      category: str(p.category, "category"),
      forward: bool(p.forward, "forward"),
    });
    return serializeReport(ctx.urls, report);
  });
}
