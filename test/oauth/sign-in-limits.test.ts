import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { BrowserSession } from "../support/browser.ts";
import { createUser, PASSWORD, type TestUser } from "../support/fixtures.ts";
import { parseForms, type HtmlForm } from "../support/html.ts";
import { Client, type Res } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Password guessing is throttled as Mastodon's rack-attack throttles sign-in: 25 attempts per
// 5 minutes per address, 25 per hour per account. Addresses come from X-Forwarded-For, which
// this server believes because the test client is its trusted proxy.

// 10:00:00 UTC: both windows start here (the 5-minute one ends 10:05, the hour 11:00).
const START = Date.UTC(2026, 10, 23, 10, 0, 0);
const MINUTE = 60_000;
const CALLBACK = "https://app.example/callback";

let server: TestServer;
let http: Client;
let alice: TestUser;
let app: { client_id: string; client_secret: string };

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMITS: "on", TRUSTED_PROXIES: "127.0.0.1, ::1" }, { clock: new ManualClock(START) });
  http = new Client(server.base);
  alice = await createUser(server, "alice");
  await createUser(server, "bob");
  const res = await http.post("/api/v1/apps", { json: { client_name: "Test App", redirect_uris: CALLBACK, scopes: "read write" } });
  app = res.body;
});
afterAll(() => server.close());

const count = async (table: string) => (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
const limits = (res: Res) => ({
  limit: res.headers.get("x-ratelimit-limit"),
  remaining: res.headers.get("x-ratelimit-remaining"),
  reset: res.headers.get("x-ratelimit-reset"),
});

/** A browser at `ip` on the sign-in page. */
async function signInPage(ip: string) {
  const browser = new BrowserSession(server.base);
  const page = await browser.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: CALLBACK, response_type: "code" }, headers: { "x-forwarded-for": ip } });
  expect(page.status).toBe(200);
  return { browser, form: parseForms(page.text)[0] as HtmlForm };
}

function signIn(browser: BrowserSession, form: HtmlForm, ip: string, username: string, password: string) {
  return browser.post(form.action, { form: { ...form.fields, username, password }, headers: { "x-forwarded-for": ip } });
}

function passwordGrant(ip: string, username: string, password: string) {
  return http.post("/oauth/token", {
    form: { grant_type: "password", username, password, client_id: app.client_id, client_secret: app.client_secret, scope: "read" },
    headers: { "x-forwarded-for": ip },
  });
}

function expectThrottledPage(res: Res, reset: string) {
  expect(res.status).toBe(429);
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.text).toContain("Too many sign-in attempts. Please try again later.");
  expect(res.headers.getSetCookie().filter((c) => c.startsWith("_rookery_session="))).toEqual([]);
  expect(limits(res)).toEqual({ limit: "25", remaining: "0", reset });
}

function expectThrottledJson(res: Res, reset: string) {
  expect(res.status).toBe(429);
  expect(res.headers.get("content-type")).toBe("application/json");
  expect(res.body).toEqual({ error: "Too many requests" });
  expect(limits(res)).toEqual({ limit: "25", remaining: "0", reset });
}

describe("the sign-in form", () => {
  test("one address: 25 attempts in 5 minutes, then 429 even for the right password; another address is untouched", async () => {
    server.clock.set(START);
    const { browser, form } = await signInPage("198.51.100.1");
    const sessions = await count("web_sessions");
    // Each guess names someone else, so that only the address's budget runs out.
    for (let i = 0; i < 25; i++) expect((await signIn(browser, form, "198.51.100.1", `guess${i}`, "wrong")).status).toBe(401);
    expectThrottledPage(await signIn(browser, form, "198.51.100.1", "alice", PASSWORD), "2026-11-23T10:05:00.000000Z");
    expect(await count("web_sessions")).toBe(sessions);

    const elsewhere = await signInPage("198.51.100.2");
    expect((await signIn(elsewhere.browser, elsewhere.form, "198.51.100.2", "alice", PASSWORD)).status).toBe(200);
    expect(await count("web_sessions")).toBe(sessions + 1);

    // The next window lets the address try again.
    server.clock.set(START + 5 * MINUTE);
    expect((await signIn(browser, form, "198.51.100.1", "alice", PASSWORD)).status).toBe(200);
  });

  test("one account: 25 attempts an hour from any addresses, by username or e-mail alike; the owner's session, codes and tokens keep working", async () => {
    server.clock.set(START + 60 * MINUTE);
    // The owner signed in before the attack.
    const owner = await signInPage("192.0.2.200");
    const consent = await signIn(owner.browser, owner.form, "192.0.2.200", "alice", PASSWORD);
    expect(consent.status).toBe(200);

    for (let i = 0; i < 24; i++) {
      const { browser, form } = await signInPage(`203.0.113.${i + 1}`);
      expect((await signIn(browser, form, `203.0.113.${i + 1}`, i % 2 === 0 ? "alice" : "ALICE@example.test", "wrong")).status).toBe(401);
    }
    // The owner's own sign-in counted too: this attempt is the 26th of the hour.
    const sessions = await count("web_sessions");
    const late = await signInPage("203.0.113.100");
    expectThrottledPage(await signIn(late.browser, late.form, "203.0.113.100", "alice@example.test", PASSWORD), "2026-11-23T12:00:00.000000Z");
    expect(await count("web_sessions")).toBe(sessions);
    // Someone else's account is not affected, from the same address.
    expect((await signIn(late.browser, late.form, "203.0.113.100", "bob", PASSWORD)).status).toBe(200);

    // The owner's browser session goes straight to consent, and the code it gets is exchanged.
    const again = await owner.browser.get("/oauth/authorize", {
      query: { client_id: app.client_id, redirect_uri: CALLBACK, response_type: "code" },
      headers: { "x-forwarded-for": "192.0.2.200" },
    });
    expect(again.status).toBe(200);
    const [approve] = parseForms(again.text);
    const redirect = await owner.browser.submit(approve as HtmlForm);
    expect(redirect.status).toBe(302);
    const code = new URL(redirect.headers.get("location") as string).searchParams.get("code");
    const exchange = await http.post("/oauth/token", {
      form: { grant_type: "authorization_code", code: code as string, redirect_uri: CALLBACK, client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(exchange.status).toBe(200);
    expect((await http.get("/api/v1/accounts/verify_credentials", { token: exchange.body.access_token })).body.username).toBe("alice");
    // Tokens issued before the attack still work.
    expect((await alice.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);

    server.clock.set(START + 120 * MINUTE);
    const later = await signInPage("203.0.113.100");
    expect((await signIn(later.browser, later.form, "203.0.113.100", "alice", PASSWORD)).status).toBe(200);
  });
});

describe("the password grant", () => {
  test("an address past 25 attempts in 5 minutes gets 429 JSON and no token", async () => {
    server.clock.set(START + 180 * MINUTE);
    const tokens = await count("oauth_access_tokens");
    for (let i = 0; i < 25; i++) expect((await passwordGrant("198.51.100.50", `guess${i}`, "wrong")).status).toBe(400);
    expectThrottledJson(await passwordGrant("198.51.100.50", "alice", PASSWORD), "2026-11-23T13:05:00.000000Z");
    expect(await count("oauth_access_tokens")).toBe(tokens);
    expect((await passwordGrant("198.51.100.51", "alice", PASSWORD)).status).toBe(200);
  });

  test("an account past 25 attempts an hour, from 200 parallel guesses, gets 429 whatever the address", async () => {
    server.clock.set(START + 240 * MINUTE);
    const tokens = await count("oauth_access_tokens");
    const guesses = await Promise.all(Array.from({ length: 200 }, (_, i) => passwordGrant(`10.1.${i >> 8}.${i & 255}`, "bob", "wrong")));
    expect(guesses.filter((r) => r.status === 400)).toHaveLength(25);
    expect(guesses.filter((r) => r.status === 429)).toHaveLength(175);
    expectThrottledJson(await passwordGrant("10.9.9.9", "bob", PASSWORD), "2026-11-23T15:00:00.000000Z");
    expect(await count("oauth_access_tokens")).toBe(tokens);
    // The form shares the account's budget.
    const { browser, form } = await signInPage("10.9.9.10");
    expectThrottledPage(await signIn(browser, form, "10.9.9.10", "bob", PASSWORD), "2026-11-23T15:00:00.000000Z");
  });
});
