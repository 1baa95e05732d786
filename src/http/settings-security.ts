import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { applicationsPage, passwordPage, sessionsPage } from "../web/settings/security.ts";
import { secret, type MemberPages, type PageRequest } from "./member-pages.ts";
import { pathId } from "./params.ts";

/**
 * The account's security: its password, the browsers signed in (Mastodon's session
 * activations) and the apps let in (Mastodon's /oauth/authorized_applications), each with its
 * revoke. Two-factor sign-in adds its page beside these.
 */
export function settingsSecurityRoutes(ctx: AppContext, pages: MemberPages) {
  const { services } = ctx;
  const sessions = async ({ viewer, csrf }: PageRequest) => sessionsPage(await services.webSessions.list(viewer.account.id, viewer.session), csrf);
  const applications = async ({ viewer, csrf }: PageRequest) => applicationsPage(await services.tokens.authorizedApps(viewer.account.id), csrf);
  const password = ({ csrf }: PageRequest) => passwordPage(csrf);

  return new Elysia()
    .get("/settings/password", (c) => pages.show(c, password))
    .post("/settings/password", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          const ended = await services.passwords.change(
            viewer.account.id,
            { current: secret(params, "current_password"), password: secret(params, "password"), confirmation: secret(params, "password_confirmation") },
            viewer.session,
          );
          const others = ended === 0 ? "" : ended === 1 ? " 1 other browser was signed out." : ` ${ended} other browsers were signed out.`;
          return { notice: `Your password has been changed.${others}` };
        },
        password,
      ),
    )
    .get("/settings/sessions", (c) => pages.show(c, sessions))
    .post("/settings/sessions/:id/revoke", (c) =>
      pages.act(
        c,
        async ({ viewer }) => {
          // Another member's session, or one already gone, is none of theirs to name.
          if (!(await services.webSessions.revoke(viewer.account.id, pathId(c.params.id)))) throw notFound();
          return { notice: "Session successfully revoked.", to: "/settings/sessions" };
        },
        sessions,
      ),
    )
    .get("/settings/applications", (c) => pages.show(c, applications))
    .post("/settings/applications/:id/revoke", (c) =>
      pages.act(
        c,
        async ({ viewer }) => {
          if ((await services.tokens.revokeApp(viewer.account.id, pathId(c.params.id))) === 0) throw notFound();
          return { notice: "Application revoked.", to: "/settings/applications" };
        },
        applications,
      ),
    );
}
