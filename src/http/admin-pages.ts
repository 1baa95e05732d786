import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { can, overrides, roleOf } from "../models/roles.ts";
import type { StaffActor } from "../services/admin/audit-log.ts";
import { acct, accountPage, accountsPage } from "../web/admin/accounts.ts";
import { reportPage, reportsPage } from "../web/admin/reports.ts";
import { field, hasRole, MemberPages, secret, type ActionRequest, type Done, type PageArea, type PageRequest, type Viewer } from "./member-pages.ts";
import { adminServerPageRoutes, notFoundPage, olderLink } from "./admin-pages-server.ts";
import { pageParams } from "./pagination.ts";
import { pathId, type Params } from "./params.ts";

/**
 * Staff's pages (Mastodon's /admin): every page and action over the staff services of
 * src/services/admin, which check the role again and write the audit log. Moderators see the
 * reports (and act on the reported accounts from there); the rest is for admins and the owner.
 */
export const ADMIN_AREA: PageArea = {
  name: "Administration",
  root: "/admin/reports",
  role: "moderator",
  nav: [
    { href: "/admin/reports", label: "Reports", section: "Moderation" },
    { href: "/admin/accounts", label: "Accounts", role: "admin" },
    { href: "/admin/invites", label: "Invites", role: "admin" },
    { href: "/admin/action_logs", label: "Audit log", role: "admin" },
    { href: "/admin/domain_blocks", label: "Domain blocks", section: "Federation", role: "admin" },
    { href: "/admin/domain_allows", label: "Domain allows", role: "admin" },
    { href: "/admin/relays", label: "Relays", role: "admin" },
    { href: "/admin/federation", label: "Federation health", role: "admin" },
    { href: "/admin/settings", label: "Server settings", section: "Server", role: "admin" },
    { href: "/admin/rules", label: "Rules", role: "admin" },
    { href: "/admin/announcements", label: "Announcements", role: "admin" },
    { href: "/admin/custom_emojis", label: "Custom emojis", role: "admin" },
    { href: "/settings", label: "Back to your settings", section: "You" },
  ],
};

export function adminPageRoutes(ctx: AppContext) {
  const { services } = ctx;
  const pages = new MemberPages(ctx, ADMIN_AREA);
  const admin = services.adminAccounts;
  const reports = services.adminReports;
  // The viewer's role was read with the page's session (MemberPages.viewerOf).
  const actor = (viewer: Viewer): StaffActor => ({ kind: "staff", accountId: viewer.account.id, role: roleOf(viewer.user.role) });

  const accountsList = async ({ viewer, params }: PageRequest) => {
    const filter = { origin: field(params, "origin") || "local", status: field(params, "status") ?? "", username: field(params, "username") ?? "" };
    const page = pageParams(params, 50, 100);
    const views = await admin.list(actor(viewer), { origin: filter.origin, status: filter.status || undefined, username: filter.username || undefined }, page);
    return accountsPage(
      views,
      filter,
      olderLink(
        "/admin/accounts",
        params,
        views.map((v) => v.account.id),
        page.limit,
      ),
    );
  };
  const accountDetail = (id: number | null) => async ({ viewer, csrf }: PageRequest) => {
    const role = roleOf(viewer.user.role);
    const view = await admin.get(actor(viewer), id);
    return accountPage(view, {
      csrf,
      canManageRoles: can(role, "manage_roles"),
      canReset: can(role, "manage_user_access"),
      canDelete: can(role, "delete_user_data"),
      twoFactor: view.user !== null && (await services.twoFactor.enabled(view.account.id)),
      // UserPolicy#disable_2fa?: the button only where the rule lets it work.
      canDisableTwoFactor: view.user !== null && can(role, "manage_user_access") && overrides(role, roleOf(view.user.role)),
    });
  };
  const reportsList = async ({ viewer, params }: PageRequest) => {
    const resolved = field(params, "resolved") === "1";
    return reportsPage(await reports.list(actor(viewer), { resolved }, { limit: 100 }), resolved);
  };
  const reportDetail = (id: number | null) => async ({ viewer, csrf }: PageRequest) => {
    const view = await reports.get(actor(viewer), id);
    const statuses = await services.reader.rowsByIds(view.statusIds);
    // The account's page is for admins (ADMIN_AREA): a moderator is not shown a link to a 403.
    return reportPage(view, statuses, csrf, hasRole(viewer.role, "admin"));
  };

  /** A POST on an account: the action, then back to its page (or where `done` says) with the notice. */
  const onAccount = (path: string, act: (a: StaffActor, id: number | null, params: Params) => Done | Promise<Done>, role: "admin" | "moderator" = "admin") =>
    [
      `/admin/accounts/:id/${path}`,
      (c: { request: Request; params: { id: string }; body?: unknown }) => {
        const id = parseId(c.params.id);
        // Back to the account's page, unless the action says where (a rejected sign-up has none).
        const back = async ({ viewer, params }: ActionRequest) => ({ to: `/admin/accounts/${id}`, ...(await act(actor(viewer), id, params)) });
        return pages.act(c, back, accountDetail(id), role).catch(notFoundPage(pages, "account"));
      },
    ] as const;
  const onReport = (path: string, act: (a: StaffActor, id: number | null, params: Params) => Done | Promise<Done>) =>
    [
      `/admin/reports/:id/${path}`,
      (c: { request: Request; params: { id: string }; body?: unknown }) => {
        const id = parseId(c.params.id);
        const back = async ({ viewer, params }: ActionRequest) => ({ to: `/admin/reports/${id}`, ...(await act(actor(viewer), id, params)) });
        return pages.act(c, back, reportDetail(id), "moderator").catch(notFoundPage(pages, "report"));
      },
    ] as const;
  const named = async (id: number | null) => {
    const a = id === null ? undefined : await services.accounts.get(id);
    return a ? acct(a) : "The account";
  };

  return new Elysia()
    .get("/admin", async (c) => {
      const viewer = await pages.guard(c.request);
      if (viewer instanceof Response) return viewer;
      return pages.redirect(can(roleOf(viewer.user.role), "manage_federation") ? "/admin/accounts" : "/admin/reports");
    })
    .get("/admin/accounts", (c) => pages.show(c, accountsList, "admin"))
    .get("/admin/accounts/:id", (c) => pages.show(c, accountDetail(parseId(c.params.id)), "admin").catch(notFoundPage(pages, "account")))
    .post(
      ...onAccount("approve", async (a, id) => {
        await admin.approve(a, id);
        return { notice: `${await named(id)} is approved: it can sign in now.` };
      }),
    )
    .post(
      ...onAccount("reject", async (a, id) => {
        const name = await named(id);
        await admin.reject(a, id);
        return { notice: `${name}'s sign-up is rejected and removed.`, to: "/admin/accounts?status=pending" };
      }),
    )
    .post(
      ...onAccount("suspend", async (a, id) => {
        await admin.suspend(a, id);
        return { notice: `${await named(id)} is suspended.` };
      }),
    )
    .post(
      ...onAccount("unsuspend", async (a, id) => {
        await admin.unsuspend(a, id);
        return { notice: `${await named(id)} is no longer suspended.` };
      }),
    )
    .post(
      ...onAccount("silence", async (a, id) => {
        await admin.silence(a, id);
        return { notice: `${await named(id)} is limited.` };
      }),
    )
    .post(
      ...onAccount("unsilence", async (a, id) => {
        await admin.unsilence(a, id);
        return { notice: `${await named(id)} is no longer limited.` };
      }),
    )
    .post(
      ...onAccount("delete", async (a, id) => {
        const name = await named(id);
        await admin.remove(a, id);
        return { notice: `${name}'s data is deleted.` };
      }),
    )
    .post(
      ...onAccount("reset_password", async (a, id, params) => {
        const typed = secret(params, "password");
        const { password } = await admin.resetPassword(a, id, typed === "" ? undefined : typed);
        // Shown once, in the notice of the page the browser is sent to (a signed cookie read once, for five minutes).
        return { notice: typed ? `${await named(id)}'s password is changed; every sign-in of it has ended.` : `${await named(id)}'s new password is ${password} (shown this once); every sign-in of it has ended.` };
      }),
    )
    .post(
      ...onAccount("disable_2fa", async (a, id) => {
        await admin.disableTwoFactor(a, id);
        return { notice: `Two-factor sign-in is off for ${await named(id)}: the password alone signs it in now.` };
      }),
    )
    .post(
      ...onAccount("role", async (a, id, params) => {
        const view = await admin.changeRole(a, id, field(params, "role") ?? "");
        return { notice: `${await named(id)} is now ${roleOf(view.user?.role)}.` };
      }),
    )
    .get("/admin/reports", (c) => pages.show(c, reportsList))
    .get("/admin/reports/:id", (c) => pages.show(c, reportDetail(parseId(c.params.id))).catch(notFoundPage(pages, "report")))
    .post(
      ...onReport("resolve", async (a, id) => {
        await reports.resolve(a, id);
        return { notice: `Report #${id} is resolved.` };
      }),
    )
    .post(
      ...onReport("reopen", async (a, id) => {
        await reports.reopen(a, id);
        return { notice: `Report #${id} is open again.` };
      }),
    )
    .post(
      ...onReport("assign_to_self", async (a, id) => {
        await reports.assignToSelf(a, id);
        return { notice: `Report #${id} is assigned to you.` };
      }),
    )
    .post(
      ...onReport("unassign", async (a, id) => {
        await reports.unassign(a, id);
        return { notice: `Report #${id} is assigned to nobody.` };
      }),
    )
    .post(
      ...onReport("silence", async (a, id) => {
        const target = (await reports.get(a, id)).target.account.id;
        await admin.act(a, target, { type: "silence", reportId: id });
        return { notice: `${await named(target)} is limited, and its reports are resolved.` };
      }),
    )
    .post(
      ...onReport("suspend", async (a, id) => {
        const target = (await reports.get(a, id)).target.account.id;
        await admin.act(a, target, { type: "suspend", reportId: id });
        return { notice: `${await named(target)} is suspended, and its reports are resolved.` };
      }),
    )
    .post("/admin/reports/:id/statuses/:status_id/delete", (c) => {
      const id = parseId(c.params.id);
      return pages
        .act(
          c,
          async ({ viewer }) => {
            await reports.removeStatus(actor(viewer), id, pathId(c.params.status_id));
            return { notice: "The status is deleted.", to: `/admin/reports/${id}` };
          },
          reportDetail(id),
          "moderator",
        )
        .catch(notFoundPage(pages, "status"));
    })
    .use(adminServerPageRoutes(ctx, pages));
}
