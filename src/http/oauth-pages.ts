import { escapeHtml as h } from "../text/format.ts";

/** Server-rendered pages of the authorization flow: plain HTML, no script, no outside assets. */

const SCOPE_TEXT: Record<string, string> = {
  read: "Read all your account's data",
  write: "Modify all your account's data",
  follow: "Modify account relationships",
  push: "Receive your push notifications",
  profile: "Read only your account's profile information",
  "read:accounts": "See accounts information",
  "read:blocks": "See your blocks",
  "read:bookmarks": "See your bookmarks",
  "read:favourites": "See your favourites",
  "read:filters": "See your filters",
  "read:follows": "See your follows",
  "read:lists": "See your lists",
  "read:mutes": "See your mutes",
  "read:notifications": "See your notifications",
  "read:search": "Search on your behalf",
  "read:statuses": "See all posts",
  "write:accounts": "Modify your profile",
  "write:blocks": "Block accounts and domains",
  "write:bookmarks": "Bookmark posts",
  "write:conversations": "Mute and delete conversations",
  "write:favourites": "Favourite posts",
  "write:filters": "Create filters",
  "write:follows": "Follow people",
  "write:lists": "Create lists",
  "write:media": "Upload media files",
  "write:mutes": "Mute people and conversations",
  "write:notifications": "Clear your notifications",
  "write:reports": "Report other people",
  "write:statuses": "Publish posts",
};

function scopeText(scope: string): string {
  return SCOPE_TEXT[scope] ?? (scope.startsWith("admin:read") ? "Read data on the server (administration)" : "Change data on the server (administration)");
}

export const PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "private, no-store",
  "x-frame-options": "DENY",
  // Not no-referrer: with it browsers post these forms with `Origin: null`, which the
  // same-origin check must refuse. same-origin leaks nothing to apps or their websites.
  "referrer-policy": "same-origin",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
};

function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(title)} - Rookery</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f4f8;color:#222;margin:0;display:flex;justify-content:center}
main{background:#fff;max-width:26rem;width:100%;margin:3rem 1rem;padding:2rem;border-radius:.75rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin-top:0}
label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.6rem;font-size:1rem;border:1px solid #bbb;border-radius:.4rem}
button{font-size:1rem;padding:.6rem 1.2rem;border-radius:.4rem;border:0;cursor:pointer;margin-top:1rem}
.primary{background:#5b4bd6;color:#fff}.secondary{background:#e4e4ec;color:#222}
.error{background:#fde8e8;color:#8a1c1c;padding:.6rem;border-radius:.4rem}
ul{padding-left:1.2rem}code{word-break:break-all;font-size:1.05rem}
.actions{display:flex;gap:.6rem}
</style>
</head>
<body><main>
${body}
</main></body>
</html>`;
}

/** User-supplied text, isolated so that its direction cannot spill into the sentence around it. */
function isolate(text: string): string {
  return `<bdi>${h(text)}</bdi>`;
}

function hidden(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `<input type="hidden" name="${h(k)}" value="${h(v as string)}">`)
    .join("\n");
}

export function loginPage(options: {
  appName: string;
  csrf: string;
  oauth: Record<string, string | undefined>;
  error?: string;
  login?: string;
  /** The member sign-in of the pages (no app): its own heading and action. */
  member?: { server: string };
}): string {
  return layout(
    "Sign in",
    `<h1>${options.member ? `Sign in to ${isolate(options.member.server)}` : `Sign in to authorize ${isolate(options.appName)}`}</h1>
${options.error ? `<p class="error" role="alert">${h(options.error)}</p>` : ""}
<form method="post" action="${options.member ? "/oauth/sign_in" : "/oauth/authorize/sign_in"}">
${hidden({ ...options.oauth, authenticity_token: options.csrf })}
<label for="username">Username or e-mail address</label>
<input type="text" id="username" name="username" autocomplete="username" required value="${h(options.login ?? "")}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit" class="primary">Sign in</button>
</form>`,
  );
}

/**
 * The second step of signing in to an account with two-factor (Mastodon's two_factor view):
 * a code from the authenticator app or a recovery code.
 */
export function twoFactorPage(options: { action: string; ticket: string; error?: string; appName: string; member?: boolean }): string {
  return layout(
    "Two-factor authentication",
    `<h1>${options.member ? `Sign in to ${isolate(options.appName)}` : `Sign in to authorize ${isolate(options.appName)}`}</h1>
${options.error ? `<p class="error" role="alert">${h(options.error)}</p>` : ""}
<form method="post" action="${h(options.action)}">
${hidden({ ticket: options.ticket })}
<label for="otp_attempt">Two-factor code</label>
<p id="otp_hint">Enter the code generated by your authenticator app, or one of your recovery codes.</p>
<input type="text" id="otp_attempt" name="otp_attempt" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus aria-describedby="otp_hint">
<button type="submit" class="primary">Sign in</button>
</form>`,
  );
}

export function consentPage(options: { appName: string; website: string | null; username: string; scopes: string[]; ticket: string }): string {
  const app = options.website ? `<a href="${h(options.website)}" rel="noopener noreferrer">${isolate(options.appName)}</a>` : isolate(options.appName);
  return layout(
    "Authorize",
    `<h1>Authorize ${isolate(options.appName)}?</h1>
<p>${app} wants to use your account <strong>@${isolate(options.username)}</strong>. It asks to:</p>
<ul>${options.scopes.map((s) => `<li><strong>${h(s)}</strong>: ${h(scopeText(s))}</li>`).join("")}</ul>
<div class="actions">
<form method="post" action="/oauth/authorize">
${hidden({ ticket: options.ticket })}
<button type="submit" class="primary" name="decision" value="approve">Authorize</button>
</form>
<form method="post" action="/oauth/authorize">
${hidden({ ticket: options.ticket, _method: "delete" })}
<button type="submit" class="secondary" name="decision" value="deny">Deny</button>
</form>
</div>`,
  );
}

export function errorPage(description: string): string {
  return layout("An error has occurred", `<h1>An error has occurred</h1>\n<p class="error" role="alert">${h(description)}</p>`);
}

/**
 * The sign-in of an account staff have not approved yet (Mastodon shows its account status,
 * "pending", in place of what was asked); no session is opened and no app authorized.
 */
export function pendingPage(): string {
  return layout(
    "Account status",
    `<h1>Account status</h1>\n<p class="error" role="alert">Your application is pending review by our staff. This may take some time. You can sign in once it is approved.</p>`,
  );
}

export function codePage(code: string): string {
  return layout(
    "Authorization code",
    `<h1>Authorization code</h1>
<p>Copy this authorization code and paste it to the application.</p>
<input type="text" id="code" name="code" readonly value="${h(code)}" aria-label="Authorization code">
<p><code>${h(code)}</code></p>`,
  );
}

/** response_mode=form_post: the browser posts the result to the app itself. */
export function formPostPage(action: string, fields: Record<string, string | undefined>): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Redirecting</title></head>
<body onload="document.forms[0].submit()"><form method="post" action="${h(action)}">${hidden(fields)}<noscript><button type="submit">Continue</button></noscript></form></body></html>`;
}
