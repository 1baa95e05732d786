import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { InviteUnusable } from "../services/accounts/invites.ts";
import { PAGE_CSP } from "../web/layout.ts";
import { inviteFormRefusedPage, inviteRefusedPage, inviteSignUpPage, inviteWelcomePage } from "../web/invite.ts";
import { input } from "./input.ts";
import { cookie, formSession, fromOwnPages } from "./oauth-forms.ts";
import { str } from "./params.ts";

/**
 * The form cookie of the invite pages, apart from the authorization pages' (Path=/oauth): the
 * browser sends it only here, and a ticket of these forms is worth nothing without it.
 */
const INVITE_FORM = { name: "_rookery_invite_form", path: "/invite" };

/** The words of each attribute in a refusal's details, as Mastodon's full messages name them. */
const ATTRIBUTES: Record<string, string> = {
  username: "Username",
  email: "E-mail address",
  password: "Password",
  agreement: "Service agreement",
  reason: "Reason",
};

const HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": PAGE_CSP,
  "cache-control": "private, no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // Not no-referrer: browsers would post the form with `Origin: null`, which fromOwnPages refuses.
  "referrer-policy": "same-origin",
};

/**
 * `/invite/:code`: the sign-up form of an invite link (Mastodon's /invite/:invite_code), open
 * whatever REGISTRATIONS says, the account approved at once. The form is protected as the
 * sign-in forms are: a ticket bound to this browser's form cookie, and an Origin check.
 */
export function inviteRoutes(ctx: AppContext) {
  const { services, config } = ctx;
  const secure = config.publicUrl.startsWith("https://");
  const site = { title: config.instanceTitle, publicUrl: config.publicUrl };

  const page = (body: string, status = 200, setCookie?: string) => {
    const headers = new Headers(HEADERS);
    if (setCookie) headers.append("set-cookie", setCookie);
    return new Response(body, { status, headers });
  };
  const refused = (refusal: InviteUnusable["refusal"]) => page(inviteRefusedPage(site, refusal), refusal === "unknown" ? 404 : 410);

  const form = async (request: Request, code: string, status = 200, values?: { username?: string; email?: string }, errors?: string[]) => {
    const session = formSession(request, secure, INVITE_FORM);
    const csrf = await services.tickets.sign("invite", {}, 60 * 60, session.value);
    const rules = (await services.instanceInfo.rules()).map((r) => ({ text: r.text, hint: r.hint }));
    return page(inviteSignUpPage(site, { action: `/invite/${encodeURIComponent(code)}`, csrf, rules, values, errors }), status, session.setCookie);
  };

  /** A refusal's details as sentences ("Username has already been taken"). */
  const sentences = (e: ApiError): string[] => {
    const details = (e.extra.details ?? {}) as Record<string, { description: string }[]>;
    const out = Object.entries(details).flatMap(([attribute, list]) => list.map((d) => `${ATTRIBUTES[attribute] ?? attribute} ${d.description}`));
    return out.length > 0 ? out : [e.message];
  };

  return new Elysia()
    .get("/invite/:code", async (c) => {
      const { state } = await services.invites.find(c.params.code);
      if (state !== "usable") return refused(state);
      return form(c.request, c.params.code);
    })
    .post("/invite/:code", async (c) => {
      const code = c.params.code;
      const action = `/invite/${encodeURIComponent(code)}`;
      if (!fromOwnPages(c.request, config.publicUrl)) return page(inviteFormRefusedPage(site, "The form did not come from this server's pages.", action), 403);
      const { state } = await services.invites.find(code);
      if (state !== "usable") return refused(state);
      const p = input(c);
      const ticket = await services.tickets.verify("invite", str(p.authenticity_token, "authenticity_token"));
      if (!ticket) return page(inviteFormRefusedPage(site, "Your sign-up form expired. Nothing was sent: please fill it in again.", action), 422);
      if (!services.tickets.isBoundTo(ticket, cookie(c.request, INVITE_FORM.name))) {
        return page(inviteFormRefusedPage(site, "Your sign-up form was opened in another browser. Nothing was sent: please fill it in again.", action), 403);
      }
      const values = { username: str(p.username, "username"), email: str(p.email, "email") };
      const password = str(p.password, "password") ?? "";
      if (password !== (str(p.password_confirmation, "password_confirmation") ?? "")) {
        return form(c.request, code, 422, values, ["Password confirmation doesn't match Password"]);
      }
      try {
        const account = await services.registrations.signUpWithInvite(code, {
          ...values,
          password,
          agreement: str(p.agreement, "agreement") === "1",
        });
        return page(inviteWelcomePage(site, account.username), 201);
      } catch (e) {
        if (e instanceof InviteUnusable) return refused(e.refusal);
        if (e instanceof ApiError && e.status === 422) return form(c.request, code, 422, values, sentences(e));
        throw e;
      }
    });
}
