/**
 * The authorization pages attacked: forms posted from elsewhere or with another browser's
 * token, app names that turn the page's text around, redirect URIs with control characters.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, PASSWORD } from "../support/fixtures.ts";
import { BrowserSession } from "../support/browser.ts";
import { parseForms, type HtmlForm } from "../support/html.ts";
import { Client, type Res } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let http: Client;

beforeAll(async () => {
  server = await startTestServer();
  http = new Client(server.base);
  await createUser(server, "alice");
  await createUser(server, "mallory");
});
afterAll(() => server.close());

const count = async (table: string) => (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
const CALLBACK = "https://app.example/callback";
const INVALID_REDIRECT = "The redirect uri included is not valid.";

async function newApp(body: Record<string, string> = {}) {
  const res = await http.post("/api/v1/apps", { json: { client_name: "Test App", redirect_uris: CALLBACK, scopes: "read write", ...body } });
  expect(res.status).toBe(200);
  return res.body as { client_id: string; client_secret: string };
}

/** A browser on the sign-in page of an app. */
async function signInPage(clientId: string, redirectUri = CALLBACK) {
  const browser = new BrowserSession(server.base);
  const page = await browser.get("/oauth/authorize", { query: { client_id: clientId, redirect_uri: redirectUri, response_type: "code" } });
  expect(page.status).toBe(200);
  const [form] = parseForms(page.text);
  return { browser, form: form!, page };
}

/** A browser signed in as `username`, on the consent page. */
async function consentPage(clientId: string, username: string) {
  const { browser, form } = await signInPage(clientId);
  const consent = await browser.submit(form, { username, password: PASSWORD });
  expect(consent.status).toBe(200);
  const [approve, deny] = parseForms(consent.text);
  return { browser, approve: approve!, deny: deny!, consent };
}

/** A plain POST of a form, with exactly the headers given (no cookie jar, no Origin of its own). */
function rawPost(form: HtmlForm, fields: Record<string, string>, headers: Record<string, string>): Promise<Res> {
  return http.post(form.action, { form: { ...form.fields, ...fields }, headers });
}

function expectRefused(res: Res) {
  expect(res.status).toBe(403);
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.getSetCookie().filter((c) => c.startsWith("_rookery_session="))).toEqual([]);
}

describe("the sign-in form belongs to the browser it was shown in", () => {
  test("the form cookie: HttpOnly, SameSite=Lax, Path=/oauth, for the browser session, kept across tabs", async () => {
    const app = await newApp();
    const { browser, page } = await signInPage(app.client_id);
    const [set] = page.headers.getSetCookie();
    expect(set).toMatch(/^_rookery_form=[A-Za-z0-9_-]{43}; Path=\/oauth; HttpOnly; SameSite=Lax$/);
    // A second tab gets a form for the same cookie; both forms stay valid.
    const second = await browser.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: CALLBACK, response_type: "code" } });
    expect(second.headers.getSetCookie()).toEqual([]);
    const first = parseForms(page.text)[0]!;
    expect((await browser.submit(first, { username: "alice", password: PASSWORD })).status).toBe(200);
    expect((await browser.submit(parseForms(second.text)[0]!, { username: "alice", password: PASSWORD })).status).toBe(200);
  });

  test("over https the cookie is Secure", async () => {
    const https = await startTestServer({ PUBLIC_URL: "https://rookery.example" });
    try {
      const { app } = { app: (await https.ctx.services.applications.register({ name: "Secure App", redirectUris: CALLBACK, scopes: "read" })).app };
      const res = await fetch(`${https.url}/oauth/authorize?client_id=${app.clientId}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code`);
      expect(res.status).toBe(200);
      expect(res.headers.getSetCookie()[0]).toEndWith("; Secure");
    } finally {
      await https.close();
    }
  });

  test("another browser's token, a token without its cookie, and posts without or with a foreign origin are 403 and sign nobody in", async () => {
    const app = await newApp();
    const victim = await signInPage(app.client_id);
    const attacker = await signInPage(app.client_id);
    const sessions = await count("web_sessions");
    const credentials = { username: "alice", password: PASSWORD };
    const origin = server.base;

    // The attacker's token, posted from the victim's browser (its own cookie).
    const crossed = await victim.browser.submit(attacker.form, credentials);
    expectRefused(crossed);
    expect(crossed.text).toContain("Your sign-in form was opened in another browser.");
    // The token replayed by a script that never got the cookie.
    expectRefused(await rawPost(victim.form, credentials, { origin }));
    // A cookie that is not the one the token was bound to.
    expectRefused(await rawPost(victim.form, credentials, { origin, cookie: attacker.browser.cookieHeader }));
    // The victim's own form and cookie, but not posted by our page.
    const cookie = victim.browser.cookieHeader;
    const posts: Record<string, string>[] = [
      { cookie },
      { cookie, origin: "null" },
      { cookie, origin: "https://evil.example" },
      { cookie, referer: "https://evil.example/login" },
      { cookie, referer: "not a url" },
      { cookie, origin: "https://evil.example", referer: `${server.base}/oauth/authorize` },
    ];
    for (const headers of posts) {
      const res = await rawPost(victim.form, credentials, headers);
      expectRefused(res);
      expect(res.text).toContain("The request did not come from this server&#39;s pages.");
    }
    expect(await count("web_sessions")).toBe(sessions);

    // The same form posted as the browser posts it signs in; a Referer of ours is enough without Origin.
    const viaReferer = await rawPost(victim.form, credentials, { cookie, referer: `${server.base}/oauth/authorize?x=1` });
    expect(viaReferer.status).toBe(200);
    expect(viaReferer.headers.getSetCookie().some((c) => c.startsWith("_rookery_session="))).toBe(true);
    expect(await count("web_sessions")).toBe(sessions + 1);
  });
});

describe("the consent forms belong to the browser that signed in", () => {
  test("another browser's ticket, a ticket without its cookie, and posts without or with a foreign origin are 403 and issue no code", async () => {
    const app = await newApp();
    const victim = await consentPage(app.client_id, "alice");
    const attacker = await consentPage(app.client_id, "mallory");
    const codes = await count("oauth_authorization_codes");
    const cookie = victim.browser.cookieHeader;
    const origin = server.base;

    for (const form of [attacker.approve, attacker.deny]) {
      const crossed = await victim.browser.submit(form);
      expectRefused(crossed);
      expect(crossed.text).toContain("This authorization page was opened in another browser.");
    }
    for (const form of [victim.approve, victim.deny]) {
      expectRefused(await rawPost(form, {}, { origin }));
      expectRefused(await rawPost(form, {}, { origin, cookie: attacker.browser.cookieHeader }));
      const posts: Record<string, string>[] = [{ cookie }, { cookie, origin: "null" }, { cookie, origin: "https://evil.example" }, { cookie, referer: "https://evil.example/" }];
      for (const headers of posts) {
        const res = await rawPost(form, {}, headers);
        expectRefused(res);
        expect(res.text).toContain("The request did not come from this server&#39;s pages.");
      }
    }
    // DELETE, the deny route for clients that send the method itself, is held to the same rules.
    const deleted = await http.delete("/oauth/authorize", { form: victim.deny.fields, headers: { cookie } });
    expectRefused(deleted);
    expect(await count("oauth_authorization_codes")).toBe(codes);

    // Nothing above used the victim's page up: approving it in the victim's browser works.
    const approved = await victim.browser.submit(victim.approve);
    expect(approved.status).toBe(302);
    expect(approved.headers.get("location")).toStartWith(`${CALLBACK}?code=`);
    expect(await count("oauth_authorization_codes")).toBe(codes + 1);
  });
});

describe("app names and websites", () => {
  const before = () => count("applications");

  test.each([
    ["right-to-left override", { client_name: "Authorize X\u202Elive" }, "Validation failed: Application name is invalid"],
    ["left-to-right isolate", { client_name: "X\u2066evil\u2069" }, "Validation failed: Application name is invalid"],
    ["right-to-left mark", { client_name: "X\u200F" + "app" }, "Validation failed: Application name is invalid"],
    ["Arabic letter mark", { client_name: "X\u061Capp" }, "Validation failed: Application name is invalid"],
    ["line break", { client_name: "Line\nbreak" }, "Validation failed: Application name is invalid"],
    ["escape", { client_name: "Bell\u0007\u001b[31m" }, "Validation failed: Application name is invalid"],
    ["C1 control", { client_name: "X\u0085app" }, "Validation failed: Application name is invalid"],
    ["override in the website", { client_name: "Fine", website: "https://app.example/\u202Egnp.exe" }, "Validation failed: Application website is not a valid URL"],
    ["tab in the website", { client_name: "Fine", website: "https://app.ex\tample/" }, "Validation failed: Application website is not a valid URL"],
    ["override in a redirect URI", { client_name: "Fine", redirect_uris: "https://app.example/\u202Ecb" }, "Validation failed: Redirect URI must be a valid URI."],
  ])("%s is refused with 422 and no app is made", async (_, body, message) => {
    const apps = await before();
    const res = await http.post("/api/v1/apps", { json: { redirect_uris: CALLBACK, ...body } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: message });
    expect(await before()).toBe(apps);
  });

  test("joiners and other scripts are fine: only controls are refused", async () => {
    const res = await http.post("/api/v1/apps", { json: { client_name: "مرحبا 👩‍💻 Zoë", redirect_uris: CALLBACK } });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe("مرحبا 👩‍💻 Zoë");
  });

  test("the pages isolate the app's name and the account's name in <bdi>", async () => {
    const app = await newApp({ client_name: "שלום <App>", website: "https://app.example" });
    const { page } = await signInPage(app.client_id);
    expect(page.text).toContain("<h1>Sign in to authorize <bdi>שלום &lt;App&gt;</bdi></h1>");
    const { consent } = await consentPage(app.client_id, "alice");
    expect(consent.text).toContain("<h1>Authorize <bdi>שלום &lt;App&gt;</bdi>?</h1>");
    expect(consent.text).toContain('<a href="https://app.example" rel="noopener noreferrer"><bdi>שלום &lt;App&gt;</bdi></a> wants to use your account <strong>@<bdi>alice</bdi></strong>');
  });
});

describe("the redirect back to the app", () => {
  test.each([
    ["CR/LF", `${CALLBACK}\r\n`],
    ["CR/LF and a header after it", `${CALLBACK}?x=1\r\nSet-Cookie: a=b`],
    ["CR/LF inside the path", "https://app.example/call\r\nback"],
    ["tab", "https://app.example/call\tback"],
    ["a leading space", ` ${CALLBACK}`],
    ["NUL", `${CALLBACK}\u0000`],
    ["DEL", `https://app.example/call\u007Fback`],
  ])("a redirect_uri with %s is 400 before anything is issued", async (_, redirectUri) => {
    const app = await newApp();
    const codes = await count("oauth_authorization_codes");
    const sessions = await count("web_sessions");
    const query = { client_id: app.client_id, redirect_uri: redirectUri, response_type: "code" };
    const page = await http.get("/oauth/authorize", { query });
    expect(page.status).toBe(400);
    expect(page.headers.get("location")).toBeNull();
    expect(page.text).toContain(INVALID_REDIRECT);

    // The sign-in form posted with it (a valid form of this browser, the field changed).
    const { browser, form } = await signInPage(app.client_id);
    const signIn = await browser.submit(form, { redirect_uri: redirectUri, username: "alice", password: PASSWORD });
    expect(signIn.status).toBe(400);
    expect(signIn.text).toContain(INVALID_REDIRECT);
    expect(signIn.headers.getSetCookie()).toEqual([]);
    expect(await count("oauth_authorization_codes")).toBe(codes);
    expect(await count("web_sessions")).toBe(sessions);
  });

  test("the browser goes to the registered URI as stored; the token request repeats the one asked for", async () => {
    const app = await newApp({ redirect_uris: "https://app.example/callback?b=2&a=1" });
    const requested = "https://app.example/callback?a=1&b=2";
    const { browser, form } = await signInPage(app.client_id, requested);
    const [approve] = parseForms((await browser.submit(form, { username: "alice", password: PASSWORD })).text);
    const redirect = await browser.submit(approve!);
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get("location")!;
    expect(location).toMatch(/^https:\/\/app\.example\/callback\?b=2&a=1&code=[A-Za-z0-9_-]{43}$/);
    const code = new URL(location).searchParams.get("code")!;
    const token = await http.post("/oauth/token", {
      form: { grant_type: "authorization_code", code, client_id: app.client_id, client_secret: app.client_secret, redirect_uri: requested },
    });
    expect(token.status).toBe(200);
  });

  test("a loopback redirect keeps the stored URI and takes the port asked for", async () => {
    const app = await newApp({ redirect_uris: "http://127.0.0.1/cb" });
    const { browser, form } = await signInPage(app.client_id, "http://127.0.0.1:8123/cb");
    const [approve] = parseForms((await browser.submit(form, { username: "alice", password: PASSWORD })).text);
    const redirect = await browser.submit(approve!);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toMatch(/^http:\/\/127\.0\.0\.1:8123\/cb\?code=[A-Za-z0-9_-]{43}$/);
  });
});
