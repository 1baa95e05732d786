import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { forbidden, notFound, validationFailed } from "../errors.ts";
import { can } from "../models/roles.ts";
import { InviteUnusable } from "../services/accounts/invites.ts";
import { INVITE_EXPIRIES, INVITE_USES, invitesPage } from "../web/settings/invites.ts";
import { field, type MemberPages, type PageRequest } from "./member-pages.ts";
import { pathId } from "./params.ts";

/**
 * /settings/invites: a member's invite links (Mastodon's InvitesController, open to the roles
 * that can `invite_users`, which Mastodon's everyone role can). The new link is answered with
 * the page at once, never stored to show again: only its digest is kept.
 */
export function settingsInvitesRoutes(ctx: AppContext, pages: MemberPages) {
  const invites = ctx.services.invites;
  const list = async ({ viewer, csrf }: PageRequest) => invitesPage(await invites.list(viewer.account.id), csrf);

  return new Elysia()
    .get("/settings/invites", (c) => pages.show(c, list))
    .post("/settings/invites", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          if (!can(viewer.role, "invite_users")) throw forbidden();
          // The form's choices only: anything else was not offered (Rails' inclusion words).
          const maxUses = field(params, "max_uses") ?? "";
          const expiresIn = field(params, "expires_in") ?? "";
          if (!INVITE_USES.includes(maxUses)) throw validationFailed("Max uses is not included in the list");
          if (!INVITE_EXPIRIES.some(([s]) => s === expiresIn)) throw validationFailed("Expires in is not included in the list");
          let issued;
          try {
            issued = await invites.create(viewer.account.id, {
              maxUses: maxUses === "" ? null : Number(maxUses),
              expiresInMs: expiresIn === "" ? null : Number(expiresIn) * 1000,
              comment: field(params, "comment") ?? "",
            });
          } catch (e) {
            if (e instanceof InviteUnusable) throw forbidden();
            throw e;
          }
          return { notice: "The invite link is made.", show: invitesPage(await invites.list(viewer.account.id), await pages.ticketFor(viewer), issued) };
        },
        list,
      ),
    )
    .post("/settings/invites/:id/revoke", (c) =>
      pages.act(
        c,
        async ({ viewer }) => {
          const id = pathId(c.params.id);
          // Another member's invite is none of theirs to name.
          const result = id === null ? null : await invites.revoke(id, viewer.account.id);
          if (result === null) throw notFound();
          return { notice: result === "revoked" ? "The invite is revoked: its link lets nobody in now." : "That invite had already expired.", to: "/settings/invites" };
        },
        list,
      ),
    );
}
