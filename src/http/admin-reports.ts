import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import type { InstanceRuleRow } from "../db/schema.ts";
import type { AdminReportView } from "../models/admin.ts";
import { serializeAdminReport } from "../presenters/admin.ts";
import { statusesJson } from "../presenters/status-json.ts";
import type { StaffActor } from "../services/admin/audit-log.ts";
import { requireStaff } from "./admin-accounts.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { str, strArray, type Params } from "./params.ts";

const FILTERS = ["resolved", "account_id", "target_account_id"];

const present = (v: Params[string] | undefined) => v !== undefined && v !== null && (typeof v !== "string" || v.trim() !== "");

/**
 * Mastodon's admin API for reports (Api::V1::Admin::ReportsController), with admin:read /
 * admin:write and their :reports scopes, for roles that manage reports.
 */
export function adminReportRoutes(ctx: AppContext) {
  const { services } = ctx;
  const reports = services.adminReports;
  const read = (request: Request) => requireStaff(ctx, request, "admin:read:reports");
  const write = (request: Request) => requireStaff(ctx, request, "admin:write:reports");

  /** The report with its statuses as staff see them (all of them, whoever they were for) and the server's rules (read once for a list). */
  const render = async (actor: StaffActor, view: AdminReportView, rules: InstanceRuleRow[]) => {
    const rows = await services.reader.rowsByIds(view.statusIds);
    const viewer = actor.kind === "staff" ? actor.accountId : null;
    return serializeAdminReport(ctx.urls, view, JSON.parse(await statusesJson(services, ctx.urls, rows, viewer)) as unknown[], rules);
  };
  const one = (scope: (r: Request) => Promise<StaffActor>, act: (actor: StaffActor, id: number | null, p: Params) => Promise<AdminReportView>) => async (c: { request: Request; params: { id: string }; query: unknown; body?: unknown }) => {
    const actor = await scope(c.request);
    const view = await act(actor, parseId(c.params.id), input(c));
    return render(actor, view, await services.instanceInfo.rules());
  };

  return new Elysia()
    .get("/api/v1/admin/reports", async (c) => {
      const actor = await read(c.request);
      const p = input(c);
      const page = pageParams(p, 100, 200);
      const views = await reports.list(
        actor,
        {
          resolved: present(p.resolved),
          accountId: p.account_id === undefined ? undefined : parseId(str(p.account_id, "account_id")),
          targetAccountId: p.target_account_id === undefined ? undefined : parseId(str(p.target_account_id, "target_account_id")),
        },
        page,
      );
      if (views.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, { next: views.length >= page.limit ? views[views.length - 1]!.report.id : null, prev: views[0]!.report.id, keep: ["limit", ...FILTERS] });
        if (link) c.set.headers.link = link;
      }
      const rules = await services.instanceInfo.rules();
      return Promise.all(views.map((v) => render(actor, v, rules)));
    })
    .get("/api/v1/admin/reports/:id", one(read, (actor, id) => reports.get(actor, id)))
    .put(
      "/api/v1/admin/reports/:id",
      one(write, (actor, id, p) => {
        const ruleIds = strArray(p.rule_ids, "rule_ids");
        return reports.update(actor, id, { category: str(p.category, "category"), ruleIds: ruleIds?.map(parseId) });
      }),
    )
    .post("/api/v1/admin/reports/:id/assign_to_self", one(write, (actor, id) => reports.assignToSelf(actor, id)))
    .post("/api/v1/admin/reports/:id/unassign", one(write, (actor, id) => reports.unassign(actor, id)))
    .post("/api/v1/admin/reports/:id/resolve", one(write, (actor, id) => reports.resolve(actor, id)))
    .post("/api/v1/admin/reports/:id/reopen", one(write, (actor, id) => reports.reopen(actor, id)));
}
