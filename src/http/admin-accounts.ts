import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { roleNamed, ROLES, isStaff, type Role } from "../models/roles.ts";
import { serializeAdminAccount } from "../presenters/admin.ts";
import type { AccountFilter } from "../services/admin/accounts.ts";
import type { StaffActor } from "../services/admin/audit-log.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { str, strArray, type Params } from "./params.ts";

/** A token of a signed-in account with one of these scopes, as the staff member it is (its role is checked by each action). */
export function requireStaff(ctx: AppContext, request: Request, scope: string): Promise<StaffActor> {
  const auth = requireUser(ctx, request, scope);
  return ctx.services.adminAccounts.actorFor(auth.accountId);
}

/** Rails' `present?` of a parameter: given and not blank (so `remote=false` is present, as in Mastodon). */
const present = (v: Params[string] | undefined) => v !== undefined && v !== null && (typeof v !== "string" || v.trim() !== "");

const V1_FILTERS = ["local", "remote", "by_domain", "active", "pending", "disabled", "sensitized", "silenced", "suspended", "username", "display_name", "email", "ip", "staff"];
const V2_FILTERS = ["origin", "status", "permissions", "username", "by_domain", "display_name", "email", "ip", "invited_by", "role_ids"];

/** Api::V1::Admin::AccountsController#translated_filter_params: local and active unless asked otherwise. */
function v1Filter(p: Params): AccountFilter {
  const filter: AccountFilter = { origin: present(p.remote) ? "remote" : "local", status: "active" };
  for (const status of ["active", "pending", "disabled", "silenced", "suspended"]) if (present(p[status])) filter.status = status;
  common(p, filter);
  if (present(p.staff)) filter.roles = ROLES.filter(isStaff);
  return filter;
}

/** Api::V2::Admin::AccountsController: only what is asked. */
function v2Filter(p: Params): AccountFilter {
  const filter: AccountFilter = {};
  const origin = str(p.origin, "origin");
  const status = str(p.status, "status");
  if (origin) filter.origin = origin;
  if (status) filter.status = status;
  common(p, filter);
  const roleIds = strArray(p.role_ids, "role_ids");
  if (roleIds) filter.roles = roleIds.flatMap((id) => roleNamed(id) ?? []);
  if (str(p.permissions, "permissions") === "staff") filter.roles = ROLES.filter(isStaff) as Role[];
  return filter;
}

function common(p: Params, filter: AccountFilter) {
  filter.username = str(p.username, "username") || undefined;
  filter.displayName = str(p.display_name, "display_name") || undefined;
  filter.email = str(p.email, "email") || undefined;
  filter.byDomain = str(p.by_domain, "by_domain") || undefined;
}

/**
 * Mastodon's admin API for accounts (Api::V1::Admin::AccountsController, its v2 index and
 * AccountActionsController), with admin:read / admin:write and their :accounts scopes; what a
 * role may do is the services' to say (403 "This action is not allowed").
 */
export function adminAccountRoutes(ctx: AppContext) {
  const admin = ctx.services.adminAccounts;
  const render = (view: Parameters<typeof serializeAdminAccount>[1]) => serializeAdminAccount(ctx.urls, view);
  const read = (request: Request) => requireStaff(ctx, request, "admin:read:accounts");
  const write = (request: Request) => requireStaff(ctx, request, "admin:write:accounts");

  const index = (version: "v1" | "v2") => async (c: { request: Request; set: { headers: Record<string, string | number> }; query: unknown; body?: unknown }) => {
    const actor = await read(c.request);
    const p = input(c);
    const page = pageParams(p, 100, 200);
    const views = await admin.list(actor, version === "v1" ? v1Filter(p) : v2Filter(p), page);
    if (views.length > 0) {
      const first = views[0]!.account.id;
      const last = views[views.length - 1]!.account.id;
      const keep = ["limit", ...(version === "v1" ? V1_FILTERS : V2_FILTERS)];
      const link = linkHeader(ctx.config.publicUrl, c.request, { next: views.length >= page.limit ? last : null, prev: first, keep });
      if (link) c.set.headers.link = link;
    }
    return views.map(render);
  };

  return new Elysia()
    .get("/api/v1/admin/accounts", index("v1"))
    .get("/api/v2/admin/accounts", index("v2"))
    .get("/api/v1/admin/accounts/:id", async (c) => render(await admin.get(await read(c.request), parseId(c.params.id))))
    .post("/api/v1/admin/accounts/:id/action", async (c) => {
      const actor = await write(c.request);
      const p = input(c);
      await admin.act(actor, parseId(c.params.id), { type: str(p.type, "type"), reportId: p.report_id === undefined ? undefined : parseId(str(p.report_id, "report_id")), text: str(p.text, "text") });
      return {};
    })
    .post("/api/v1/admin/accounts/:id/approve", async (c) => render(await admin.approve(await write(c.request), parseId(c.params.id))))
    .post("/api/v1/admin/accounts/:id/reject", async (c) => {
      await admin.reject(await write(c.request), parseId(c.params.id));
      return {};
    })
    .post("/api/v1/admin/accounts/:id/unsuspend", async (c) => render(await admin.unsuspend(await write(c.request), parseId(c.params.id))))
    .post("/api/v1/admin/accounts/:id/unsilence", async (c) => render(await admin.unsilence(await write(c.request), parseId(c.params.id))))
    // Nobody is disabled or sensitized here: these answer the account as it is, to those who may ask.
    .post("/api/v1/admin/accounts/:id/enable", async (c) => render(await admin.unchanged(await write(c.request), parseId(c.params.id), true)))
    .post("/api/v1/admin/accounts/:id/unsensitive", async (c) => render(await admin.unchanged(await write(c.request), parseId(c.params.id), false)))
    .delete("/api/v1/admin/accounts/:id", async (c) => {
      await admin.remove(await write(c.request), parseId(c.params.id));
      return {};
    });
}
