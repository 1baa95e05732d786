import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { html } from "../web/html.ts";
import { MemberPages, type PageArea } from "./member-pages.ts";
import { SESSION_COOKIE } from "./oauth-forms.ts";
import { settingsProfileRoutes } from "./settings-profile.ts";
import { settingsSecurityRoutes } from "./settings-security.ts";
import { settingsTwoFactorRoutes } from "./settings-two-factor.ts";
import { settingsMovingRoutes } from "./settings-moving.ts";
import { settingsPortabilityRoutes } from "./settings-portability.ts";
import { settingsInvitesRoutes } from "./settings-invites.ts";

/**
 * Every account's settings pages (Mastodon's /settings): what apps do not all offer. Each group
 * of pages is a module (settings-*.ts) given this area; a new page adds its link here.
 */
export const SETTINGS_AREA: PageArea = {
  name: "Settings",
  root: "/settings/profile",
  role: "user",
  nav: [
    { href: "/settings/profile", label: "Public profile", section: "Profile" },
    { href: "/settings/preferences", label: "Posting defaults" },
    { href: "/settings/notifications", label: "Notifications" },
    { href: "/settings/password", label: "Password", section: "Account security" },
    { href: "/settings/two-factor", label: "Two-factor authentication" },
    { href: "/settings/sessions", label: "Sign-in sessions" },
    { href: "/settings/applications", label: "Authorised apps" },
    { href: "/settings/aliases", label: "Account aliases", section: "Moving and importing" },
    { href: "/settings/migration", label: "Move to another account" },
    { href: "/settings/import", label: "Import" },
    { href: "/settings/export", label: "Export" },
    { href: "/settings/invites", label: "Invite people", section: "Invites" },
    { href: "/admin", label: "Administration", section: "Server", role: "moderator" },
  ],
};

export function settingsRoutes(ctx: AppContext) {
  const pages = new MemberPages(ctx, SETTINGS_AREA);
  const secure = ctx.config.publicUrl.startsWith("https://");
  return (
    new Elysia()
      .get("/settings", async (c) => {
        const viewer = await pages.guard(c.request);
        return viewer instanceof Response ? viewer : pages.redirect(SETTINGS_AREA.root);
      })
      .use(settingsProfileRoutes(ctx, pages))
      .use(settingsSecurityRoutes(ctx, pages))
      .use(settingsTwoFactorRoutes(ctx, pages))
      .use(settingsMovingRoutes(ctx, pages))
      .use(settingsPortabilityRoutes(ctx, pages))
      .use(settingsInvitesRoutes(ctx, pages))
      // Signing out ends this browser's session (the form carries a ticket: no other site can sign a member out).
      .post("/settings/sign_out", (c) =>
        pages.act(
          c,
          async ({ viewer }) => {
            await ctx.services.webSessions.destroy(viewer.session);
            return { to: "/", cookies: [`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? "; Secure" : ""}`] };
          },
          () => ({ title: "Sign out", body: html`<p><a href="/settings">Back to your settings</a></p>` }),
        ),
      )
      // A page that is not there is a page saying so, not the API's JSON.
      .get("/settings/*", async (c) => {
        const viewer = await pages.guard(c.request);
        return viewer instanceof Response ? viewer : pages.refuse(404, "Not found", "There is no such page in the settings.");
      }) as unknown as Elysia
  );
}
