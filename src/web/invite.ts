import { html } from "./html.ts";
import { layout } from "./layout.ts";

// The pages of an invite link (/invite/:code): the one sign-up form in a browser. Plain HTML
// in the public pages' layout and stylesheet, no script; every field labelled, errors announced.

/** Why a link lets nobody in (as the invite service says). */
type InviteRefusal = "unknown" | "expired" | "used_up" | "disabled";

interface Site {
  title: string;
  publicUrl: string;
}

export interface InviteForm {
  /** The path the form posts to (the link's own). */
  action: string;
  csrf: string;
  rules: { text: string; hint: string }[];
  /** What was typed, shown again after a refusal (never the password). */
  values?: { username?: string; email?: string };
  /** Sentences saying what was wrong, one per problem. */
  errors?: string[];
}

const meta = (site: Site, title: string) => ({ title: `${title} - ${site.title}`, description: title, canonical: `${site.publicUrl}/`, type: "website" as const, siteName: site.title });

export function inviteSignUpPage(site: Site, form: InviteForm): string {
  const host = new URL(site.publicUrl).host;
  const errors = form.errors ?? [];
  const main = html`<h1>Join ${site.title}</h1>
<p>You have been invited to <strong>${host}</strong>. Choose your name and password; your account is ready at once, and you sign in with any Mastodon app (Elk, Phanpy, Ivory, Tusky…).</p>
${errors.length > 0 ? html`<div class="form-error" role="alert" id="errors"><p>Your account could not be created:</p><ul>${errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ""}
${form.rules.length > 0 ? html`<h2>Server rules</h2><ol class="rules">${form.rules.map((r) => html`<li>${r.text}${r.hint ? html`<br><small>${r.hint}</small>` : ""}</li>`)}</ol>` : ""}
<form method="post" action="${form.action}" class="signup"${errors.length > 0 ? html` aria-describedby="errors"` : ""}>
<input type="hidden" name="authenticity_token" value="${form.csrf}">
<label for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="username" required maxlength="30" pattern="[A-Za-z0-9_]+" aria-describedby="username-hint" value="${form.values?.username ?? ""}">
<p class="hint" id="username-hint">Letters, numbers and underscores; you will be @name@${host}.</p>
<label for="email">E-mail address</label>
<input type="email" id="email" name="email" autocomplete="email" required maxlength="320" value="${form.values?.email ?? ""}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="new-password" required minlength="8" maxlength="72" aria-describedby="password-hint">
<p class="hint" id="password-hint">8 to 72 characters.</p>
<label for="password_confirmation">Confirm password</label>
<input type="password" id="password_confirmation" name="password_confirmation" autocomplete="new-password" required minlength="8" maxlength="72">
<p class="agreement"><input type="checkbox" id="agreement" name="agreement" value="1" required> <label for="agreement">I have read and agree to the server rules.</label></p>
<button type="submit">Sign up</button>
</form>`;
  return layout(meta(site, `Join ${site.title}`), main);
}

const REFUSALS: Record<InviteRefusal, { title: string; text: string }> = {
  unknown: { title: "This invite link is not valid", text: "No invite has this link. Check that it was copied whole, or ask the person who sent it for a new one." },
  expired: { title: "This invite link has expired", text: "It was valid for a limited time only, or its maker withdrew it. Ask the person who sent it for a new one." },
  used_up: { title: "This invite link has been used up", text: "It let in as many people as it was made for. Ask the person who sent it for a new one." },
  disabled: { title: "This invite link no longer works", text: "Its maker's account cannot invite anyone now. Ask the server's staff for an invite." },
};

/** An invite link that lets nobody in, saying why. */
export function inviteRefusedPage(site: Site, refusal: InviteRefusal): string {
  const { title, text } = REFUSALS[refusal];
  return layout(meta(site, title), html`<h1>${title}</h1>\n<p role="alert">${text}</p>\n<p><a href="/">About ${site.title}</a></p>`);
}

/** After the form: the account exists, the person goes to an app (or this server's pages). */
export function inviteWelcomePage(site: Site, username: string): string {
  const host = new URL(site.publicUrl).host;
  const main = html`<h1>Welcome, @${username}!</h1>
<p role="status">Your account <strong>@${username}@${host}</strong> is ready.</p>
<p>Sign in with any Mastodon app (Elk, Phanpy, Ivory, Tusky…): give it the server <strong>${host}</strong> and your username or e-mail address and password.</p>
<p><a href="/oauth/sign_in?return_to=${encodeURIComponent(`/@${username}`)}">Sign in to this server's pages</a></p>`;
  return layout(meta(site, `Welcome to ${site.title}`), main);
}

/** A form that cannot be trusted (expired, from another browser or site): nothing was done. */
export function inviteFormRefusedPage(site: Site, text: string, action: string): string {
  return layout(meta(site, "Sign-up not sent"), html`<h1>Sign-up not sent</h1>\n<p role="alert">${text}</p>\n<p><a href="${action}">Open the sign-up form again</a></p>`);
}
