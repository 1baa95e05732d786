import { roleOf } from "../models/roles.ts";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError, unprocessable, validationFailed } from "../errors.ts";
import type { AuditLogView } from "../models/admin.ts";
import type { StaffActor } from "../services/admin/audit-log.ts";
import { ExistingDomainBlock } from "../services/admin/domains.ts";
import type { RelayKind } from "../services/remote/relays.ts";
import type { RegistrationsMode } from "../services/accounts/registrations.ts";
import { healthPage } from "../web/admin/health.ts";
import { adminInvitesPage } from "../web/settings/invites.ts";
import { announcementsPage, auditLogPage, domainsPage, emojisPage, relaysPage, rulesPage, settingsPage } from "../web/admin/server.ts";
import { field, type Act, type MemberPages, type PageRequest, type Render, type Viewer } from "./member-pages.ts";
import { pageParams } from "./pagination.ts";
import { file, pathId, type Params } from "./params.ts";

const REGISTRATIONS_MODES: readonly RegistrationsMode[] = ["open", "approval", "closed"];

/** The page a missing record's id leads to: a 404 page, not the API's JSON. */
export function notFoundPage(pages: MemberPages, what: string) {
  return (e: unknown) => {
    if (e instanceof ApiError && e.status === 404) return pages.refuse(404, "Not found", `There is no such ${what}.`);
    throw e;
  };
}

/** The "older" link of a list page: the same query with max_id of its last row. */
export function olderLink(path: string, params: Params, ids: number[], limit: number): string | null {
  if (ids.length < limit) return null;
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (typeof v === "string" && k !== "max_id" && v !== "") query.set(k, v);
  query.set("max_id", String(ids[ids.length - 1]));
  return `${path}?${query}`;
}

/** A date of a form (ISO 8601, as the CLI takes it); none when left empty. */
function dateField(params: Params, name: string, label: string): number | null {
  const value = field(params, name);
  if (!value) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw validationFailed(`${label} is not a date`);
  return ms;
}

/**
 * The admin pages for the server itself (admins and the owner): domain rules, relays, custom
 * emojis, rules, announcements, settings, members' invites, federation health and the audit log. Each action is
 * a staff service's (src/services/admin), which checks the role and writes the audit log.
 */
export function adminServerPageRoutes(ctx: AppContext, pages: MemberPages) {
  const { services, config } = ctx;
  // The viewer's role was read with the page's session (MemberPages.viewerOf).
  const actor = (viewer: Viewer): StaffActor => ({ kind: "staff", accountId: viewer.account.id, role: roleOf(viewer.user.role) });
  const domains = services.adminDomains;
  const instance = services.adminInstance;
  const page = (render: Render) => (c: { request: Request }) => pages.show(c, render, "admin");
  const post = (render: Render, act: Act) => (c: { request: Request; body?: unknown }) => pages.act(c, act, render, "admin");

  const blocks = async ({ viewer, csrf }: PageRequest) => domainsPage("blocks", await domains.blocks(actor(viewer), { limit: 500 }), csrf, config.whitelistMode);
  const allows = async ({ viewer, csrf }: PageRequest) => domainsPage("allows", await domains.allows(actor(viewer), { limit: 500 }), csrf, config.whitelistMode);
  const relays = async ({ viewer, csrf }: PageRequest) => relaysPage(await services.federationHealth.relays(actor(viewer)), csrf);
  const emojis = async ({ csrf }: PageRequest) => emojisPage((await services.customEmojis.list()).map((row) => ({ row, url: services.customEmojis.entity(row).url })), csrf);
  const rules = async ({ csrf }: PageRequest) => rulesPage(await services.instanceInfo.rules(), csrf);
  const announcements = async ({ csrf }: PageRequest) => announcementsPage(await services.announcements.all(), csrf);
  const settings = async ({ csrf }: PageRequest) =>
    settingsPage((await services.instanceInfo.extendedDescriptionSource()).text, { ...(await services.instanceInfo.registrationsMode()), setting: services.instanceInfo.registrationsSetting }, csrf);
  const invites = async ({ csrf }: PageRequest) => adminInvitesPage(await services.invites.list(), csrf);
  const health = async ({ viewer }: PageRequest) => healthPage(await services.federationHealth.report(actor(viewer)), ctx.clock.now());
  const auditLog = async ({ params }: PageRequest) => {
    const p = pageParams(params, 50, 100);
    const rows = await services.auditLog.list(p);
    const actors = new Map((await services.accounts.getMany([...new Set(rows.flatMap((r) => (r.accountId === null ? [] : [r.accountId])))])).map((a) => [a.id, a]));
    const entries: AuditLogView[] = rows.map((entry) => ({ entry, actor: entry.accountId === null ? null : (actors.get(entry.accountId) ?? null) }));
    return auditLogPage(
      entries,
      olderLink(
        "/admin/action_logs",
        params,
        rows.map((r) => r.id),
        p.limit,
      ),
    );
  };

  return new Elysia()
    .get("/admin/domain_blocks", page(blocks))
    .post(
      "/admin/domain_blocks",
      post(blocks, async ({ viewer, params }) => {
        try {
          const row = await domains.createBlock(actor(viewer), { domain: field(params, "domain") });
          return { notice: `${row.domain} is blocked.` };
        } catch (e) {
          // The block already in force, named (Mastodon's ExistingDomainBlockErrorSerializer's words).
          if (e instanceof ExistingDomainBlock) throw unprocessable(e.message);
          throw e;
        }
      }),
    )
    .post("/admin/domain_blocks/:id/delete", (c) =>
      post(blocks, async ({ viewer }) => {
        const row = await domains.block(actor(viewer), pathId(c.params.id));
        await domains.removeBlock(actor(viewer), row.id);
        return { notice: `${row.domain} is no longer blocked.`, to: "/admin/domain_blocks" };
      })(c),
    )
    .get("/admin/domain_allows", page(allows))
    .post(
      "/admin/domain_allows",
      post(allows, async ({ viewer, params }) => {
        const row = await domains.createAllow(actor(viewer), { domain: field(params, "domain") });
        return { notice: `${row.domain} is allowed.` };
      }),
    )
    .post("/admin/domain_allows/:id/delete", (c) =>
      post(allows, async ({ viewer }) => {
        const row = await domains.allow(actor(viewer), pathId(c.params.id));
        await domains.removeAllow(actor(viewer), row.id);
        return { notice: `${row.domain} is no longer allowed.`, to: "/admin/domain_allows" };
      })(c),
    )
    .get("/admin/relays", page(relays))
    .post(
      "/admin/relays",
      post(relays, async ({ viewer, params }) => {
        const kind = field(params, "kind") || undefined;
        if (kind !== undefined && kind !== "mastodon" && kind !== "litepub") throw validationFailed("Kind is not included in the list");
        const { relay, created, guessed } = await instance.addRelay(actor(viewer), field(params, "url") ?? "", kind as RelayKind | undefined);
        // Found out by elimination: no relay actor answered, so it was taken for a Mastodon relay's inbox.
        const taken = guessed ? " No relay actor answered at that address, so it is taken for a Mastodon relay's inbox; if it is a LitePub relay, remove it and add it again as one." : "";
        return { notice: created ? `${relay.url} is added; it is pending until the relay accepts.${taken}` : `${relay.url} was added already (${relay.state}).` };
      }),
    )
    .post(
      "/admin/relays/delete",
      post(relays, async ({ viewer, params }) => {
        const relay = await instance.removeRelay(actor(viewer), field(params, "url") ?? "");
        return { notice: `${relay.url} is removed.`, to: "/admin/relays" };
      }),
    )
    .get("/admin/custom_emojis", page(emojis))
    .post(
      "/admin/custom_emojis",
      post(emojis, async ({ viewer, params }) => {
        const image = file(params.image, "image");
        if (!image) throw validationFailed("Image can't be blank");
        const row = await instance.addEmoji(actor(viewer), field(params, "shortcode") ?? "", new Uint8Array(await image.arrayBuffer()), field(params, "category"));
        return { notice: `:${row.shortcode}: is added.` };
      }),
    )
    .post(
      "/admin/custom_emojis/delete",
      post(emojis, async ({ viewer, params }) => {
        const shortcode = field(params, "shortcode") ?? "";
        await instance.removeEmoji(actor(viewer), shortcode);
        return { notice: `:${shortcode}: is removed.`, to: "/admin/custom_emojis" };
      }),
    )
    .get("/admin/rules", page(rules))
    .post(
      "/admin/rules",
      post(rules, async ({ viewer, params }) => {
        await instance.addRule(actor(viewer), field(params, "text") ?? "", field(params, "hint"));
        return { notice: "The rule is added." };
      }),
    )
    .post("/admin/rules/:id/delete", (c) =>
      post(rules, async ({ viewer }) => {
        await instance.removeRule(actor(viewer), pathId(c.params.id));
        return { notice: "The rule is removed.", to: "/admin/rules" };
      })(c).catch(notFoundPage(pages, "rule")),
    )
    .get("/admin/announcements", page(announcements))
    .post(
      "/admin/announcements",
      post(announcements, async ({ viewer, params }) => {
        await instance.addAnnouncement(actor(viewer), {
          text: field(params, "text") ?? "",
          startsAt: dateField(params, "starts_at", "Starts"),
          endsAt: dateField(params, "ends_at", "Ends"),
        });
        return { notice: "The announcement is published." };
      }),
    )
    .post("/admin/announcements/:id/delete", (c) =>
      post(announcements, async ({ viewer }) => {
        await instance.removeAnnouncement(actor(viewer), pathId(c.params.id));
        return { notice: "The announcement is removed.", to: "/admin/announcements" };
      })(c),
    )
    .get("/admin/settings", page(settings))
    .post(
      "/admin/settings",
      post(settings, async ({ viewer, params }) => {
        await instance.setDescription(actor(viewer), field(params, "extended_description") ?? "");
        return { notice: "Changes successfully saved!" };
      }),
    )
    .post(
      "/admin/settings/registrations",
      post(settings, async ({ viewer, params }) => {
        const value = field(params, "registrations_mode") ?? "";
        const mode = value === "setting" ? null : REGISTRATIONS_MODES.find((m) => m === value);
        // Form::AdminSettings' inclusion validation, in Rails' words.
        if (mode === undefined) throw validationFailed("Registrations mode is not included in the list");
        await instance.setRegistrationsMode(actor(viewer), mode);
        return { notice: "Changes successfully saved!", to: "/admin/settings" };
      }),
    )
    .get("/admin/invites", page(invites))
    .post("/admin/invites/:id/revoke", (c) =>
      post(invites, async ({ viewer }) => {
        const result = await instance.revokeInvite(actor(viewer), pathId(c.params.id));
        return { notice: result === "revoked" ? "The invite is revoked: its link lets nobody in now." : "That invite had already expired.", to: "/admin/invites" };
      })(c).catch(notFoundPage(pages, "invite")),
    )
    .get("/admin/federation", page(health))
    .get("/admin/action_logs", page(auditLog));
}
