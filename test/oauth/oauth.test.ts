import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createUser, PASSWORD, type TestUser } from "../support/fixtures.ts";
import { BrowserSession } from "../support/browser.ts";
import { parseForms } from "../support/html.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let http: Client;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  http = new Client(server.base);
  alice = await createUser(server, "alice");
});
afterAll(() => server.close());

const INVALID_GRANT =
  "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.";
const INVALID_CLIENT =
  "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.";

async function newApp(scopes = "read write follow", redirectUris: string | string[] = "https://app.example/callback") {
  const res = await http.post("/api/v1/apps", { json: { client_name: "Test App", redirect_uris: redirectUris, scopes, website: "https://app.example" } });
  expect(res.status).toBe(200);
  return res.body as { id: string; client_id: string; client_secret: string; redirect_uri: string };
}

/** Drives the HTML pages as a browser would: login form, then consent, then the redirect. */
async function authorize(query: Record<string, string>, options: { deny?: boolean; login?: string; password?: string } = {}) {
  const browser = new BrowserSession(server.base);
  const page = await browser.get("/oauth/authorize", { query });
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  const [loginForm] = parseForms(page.text);
  expect(loginForm!.action).toBe("/oauth/authorize/sign_in");
  const consent = await browser.submit(loginForm!, { username: options.login ?? "alice", password: options.password ?? PASSWORD });
  if (consent.status !== 200) return { consent, redirect: null, browser };
  const forms = parseForms(consent.text);
  const chosen = options.deny ? forms[1]! : forms[0]!;
  const button = chosen.buttons[0]!;
  const redirect = await browser.submit(chosen, { [button.name]: button.value });
  return { consent, redirect, browser };
}

function codeFrom(location: string): string {
  return new URL(location).searchParams.get("code") as string;
}

describe("POST /api/v1/apps", () => {
  test("registers from a form body with Mastodon's fields", async () => {
    const res = await http.post("/api/v1/apps", {
      form: { client_name: "Formy", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write push" },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["id", "name", "website", "scopes", "redirect_uris", "vapid_key", "redirect_uri", "client_id", "client_secret"]);
    expect(res.body).toMatchObject({
      name: "Formy",
      website: null,
      scopes: ["read", "write", "push"],
      redirect_uris: ["urn:ietf:wg:oauth:2.0:oob"],
      redirect_uri: "urn:ietf:wg:oauth:2.0:oob",
    });
    expect(res.body.client_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(typeof res.body.id).toBe("string");
  });

  test("accepts redirect_uris as an array and custom schemes; default scope is read", async () => {
    const res = await http.post("/api/v1/apps", {
      json: { client_name: "Mobile", redirect_uris: ["oauth2redirect://com.keylesspalace.tusky/", "com.tapbots.Ivory.1:/request_token"] },
    });
    expect(res.status).toBe(200);
    expect(res.body.redirect_uris).toEqual(["oauth2redirect://com.keylesspalace.tusky/", "com.tapbots.Ivory.1:/request_token"]);
    expect(res.body.redirect_uri).toBe("oauth2redirect://com.keylesspalace.tusky/\ncom.tapbots.Ivory.1:/request_token");
    expect(res.body.scopes).toEqual(["read"]);
  });

  test.each([
    [{ redirect_uris: "urn:ietf:wg:oauth:2.0:oob" }, "Validation failed: Application name can't be blank"],
    [{ client_name: "x" }, "Validation failed: Redirect URI can't be blank"],
    [{}, "Validation failed: Application name can't be blank, Redirect URI can't be blank"],
    [{ client_name: "x", redirect_uris: "https://a.example/cb#frag" }, "Validation failed: Redirect URI cannot contain a fragment."],
    [{ client_name: "x", redirect_uris: "/relative" }, "Validation failed: Redirect URI must be an absolute URI."],
    [
      { client_name: "x", redirect_uris: "javascript:alert(1)" },
      "Validation failed: Redirect URI is forbidden by the server.",
    ],
    [{ client_name: "x", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read hoge" }, "Validation failed: Scopes doesn't match configured on the server."],
    [{ client_name: "x", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", website: "not a url" }, "Validation failed: Application website is not a valid URL"],
    [{ client_name: "x".repeat(61), redirect_uris: "urn:ietf:wg:oauth:2.0:oob" }, "Validation failed: Application name is too long (maximum is 60 characters)"],
  ])("rejects %j with 422", async (body, message) => {
    const res = await http.post("/api/v1/apps", { json: body });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: message });
  });

  test("GET /api/v1/apps/verify_credentials shows the app without its secret", async () => {
    const app = await newApp("read write");
    const token = await http.post("/oauth/token", {
      form: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read" },
    });
    const res = await http.get("/api/v1/apps/verify_credentials", { token: token.body.access_token });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe("Test App");
    expect(res.body.website).toBe("https://app.example");
    expect(res.body.client_secret).toBeUndefined();
    expect(res.body.client_id).toBeUndefined();
    const anonymous = await http.get("/api/v1/apps/verify_credentials");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: "The access token is invalid" });
  });
});

describe("POST /oauth/token", () => {
  test("password grant by username or e-mail, JSON or form, secret in body or Basic", async () => {
    const app = await newApp();
    const byName = await http.post("/oauth/token", {
      json: { grant_type: "password", username: "alice", password: PASSWORD, client_id: app.client_id, client_secret: app.client_secret, scope: "read write" },
    });
    expect(byName.status).toBe(200);
    expect(Object.keys(byName.body)).toEqual(["access_token", "token_type", "scope", "created_at"]);
    expect(byName.body).toMatchObject({ token_type: "Bearer", scope: "read write" });
    expect(Number.isInteger(byName.body.created_at)).toBe(true);

    const basic = Buffer.from(`${app.client_id}:${app.client_secret}`).toString("base64");
    const byEmail = await http.post("/oauth/token", {
      form: { grant_type: "password", username: "ALICE@example.test", password: PASSWORD },
      headers: { authorization: `Basic ${basic}` },
    });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.scope).toBe("read");
    expect(byEmail.body.access_token).not.toBe(byName.body.access_token);

    const me = await http.get("/api/v1/accounts/verify_credentials", { token: byEmail.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.username).toBe("alice");
  });

  test("password grant errors", async () => {
    const app = await newApp("read");
    const base = { grant_type: "password", client_id: app.client_id, client_secret: app.client_secret };
    const wrong = await http.post("/oauth/token", { form: { ...base, username: "alice", password: "wrong password" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ error: "invalid_grant", error_description: INVALID_GRANT });
    const nobody = await http.post("/oauth/token", { form: { ...base, username: "nobody", password: PASSWORD } });
    expect(nobody.status).toBe(400);
    expect(nobody.body.error).toBe("invalid_grant");
    const scope = await http.post("/oauth/token", { form: { ...base, username: "alice", password: PASSWORD, scope: "read write" } });
    expect(scope.status).toBe(400);
    expect(scope.body).toEqual({ error: "invalid_scope", error_description: "The requested scope is invalid, unknown, or malformed." });
    const client = await http.post("/oauth/token", { form: { ...base, client_secret: "nope", username: "alice", password: PASSWORD } });
    expect(client.status).toBe(401);
    expect(client.body).toEqual({ error: "invalid_client", error_description: INVALID_CLIENT });
    expect(client.headers.get("www-authenticate")).toContain('error="invalid_client"');
  });

  test("multipart token requests work too", async () => {
    const app = await newApp("read");
    const form = new FormData();
    for (const [k, v] of Object.entries({ grant_type: "password", username: "alice", password: PASSWORD, client_id: app.client_id, client_secret: app.client_secret })) {
      form.append(k, v);
    }
    const res = await http.post("/oauth/token", { multipart: form });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe("read");
  });

  test("grant type errors", async () => {
    const missing = await http.post("/oauth/token", { form: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: "invalid_request", error_description: "Missing required parameter: grant_type." });
    const unsupported = await http.post("/oauth/token", { form: { grant_type: "refresh_token" } });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body).toEqual({
      error: "unsupported_grant_type",
      error_description: "The authorization grant type is not supported by the authorization server.",
    });
  });

  test("client_credentials gives an app token that cannot act as a user", async () => {
    const app = await newApp("read write");
    const res = await http.post("/oauth/token", {
      json: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read write" },
    });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe("read write");
    const me = await http.get("/api/v1/accounts/verify_credentials", { token: res.body.access_token });
    expect(me.status).toBe(422);
    expect(me.body).toEqual({ error: "This method requires an authenticated user" });
    const outside = await http.post("/oauth/token", {
      json: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read push" },
    });
    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe("invalid_scope");
  });
});

describe("authorization code flow through the HTML pages", () => {
  test("sign in, consent, redirect with code and state, then exchange once", async () => {
    const app = await newApp("read write follow");
    const { consent, redirect } = await authorize({
      client_id: app.client_id,
      redirect_uri: "https://app.example/callback",
      response_type: "code",
      scope: "read write",
      state: "xyz 123",
    });
    expect(consent.text).toContain("Test App");
    expect(consent.text).toContain("write");
    expect(consent.headers.get("set-cookie")).toContain("_rookery_session=");
    expect(consent.headers.get("set-cookie")).toContain("HttpOnly");
    expect(redirect!.status).toBe(302);
    const location = new URL(redirect!.headers.get("location")!);
    expect(location.origin + location.pathname).toBe("https://app.example/callback");
    expect(location.searchParams.get("state")).toBe("xyz 123");
    const code = location.searchParams.get("code")!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const exchange = (overrides: Record<string, string> = {}) =>
      http.post("/oauth/token", {
        json: {
          grant_type: "authorization_code",
          code,
          client_id: app.client_id,
          client_secret: app.client_secret,
          redirect_uri: "https://app.example/callback",
          ...overrides,
        },
      });
    const mismatch = await exchange({ redirect_uri: "https://app.example/other" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toEqual({ error: "invalid_grant", error_description: INVALID_GRANT });
    const token = await exchange();
    expect(token.status).toBe(200);
    expect(token.body.scope).toBe("read write");
    const me = await http.get("/api/v1/accounts/verify_credentials", { token: token.body.access_token });
    expect(me.body.username).toBe("alice");
    const again = await exchange();
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
    // RFC 6749 section 4.1.2: the replay may be a thief's, so the token the code gave is revoked.
    const after = await http.get("/api/v1/accounts/verify_credentials", { token: token.body.access_token });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: "The access token is invalid" });
  });

  test("a signed-in browser goes straight to consent", async () => {
    const app = await newApp();
    const query = { client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code", scope: "read" };
    const { browser } = await authorize(query);
    const page = await browser.get("/oauth/authorize", { query });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Authorize");
    const [approve] = parseForms(page.text);
    expect(approve!.action).toBe("/oauth/authorize");
    const redirect = await browser.submit(approve!, { decision: "approve" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toStartWith("https://app.example/callback?code=");
  });

  test("a wrong password shows the form again with an error", async () => {
    const app = await newApp();
    const { consent, redirect } = await authorize(
      { client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code" },
      { password: "wrong password!" },
    );
    expect(redirect).toBeNull();
    expect(consent.status).toBe(401);
    expect(consent.text).toContain("Invalid username, e-mail address or password.");
    expect(parseForms(consent.text)[0]!.action).toBe("/oauth/authorize/sign_in");
  });

  test("deny redirects with access_denied and the state", async () => {
    const app = await newApp();
    const { redirect } = await authorize(
      { client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code", state: "s1" },
      { deny: true },
    );
    expect(redirect!.status).toBe(302);
    expect(redirect!.headers.get("location")).toBe(
      "https://app.example/callback?error=access_denied&error_description=The+resource+owner+or+authorization+server+denied+the+request.&state=s1",
    );
  });

  test("out-of-band: the code is shown on a page", async () => {
    const app = await newApp("read", "urn:ietf:wg:oauth:2.0:oob");
    const { redirect } = await authorize({ client_id: app.client_id, redirect_uri: "urn:ietf:wg:oauth:2.0:oob", response_type: "code" });
    expect(redirect!.status).toBe(302);
    const location = redirect!.headers.get("location")!;
    expect(location).toStartWith("/oauth/authorize/native?code=");
    const page = await http.get(location);
    expect(page.status).toBe(200);
    const code = parseForms(`<form>${page.text}</form>`)[0]!.fields.code!;
    expect(code).toBe(decodeURIComponent(location.split("code=")[1]!));
    const token = await http.post("/oauth/token", {
      form: { grant_type: "authorization_code", code, client_id: app.client_id, client_secret: app.client_secret, redirect_uri: "urn:ietf:wg:oauth:2.0:oob" },
    });
    expect(token.status).toBe(200);
  });

  test("PKCE with S256 and plain", async () => {
    const app = await newApp();
    const verifier = "a-very-long-verifier-string-with-enough-entropy-0123456789";
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const run = async (method: string, challengeValue: string) => {
      const { redirect } = await authorize({
        client_id: app.client_id,
        redirect_uri: "https://app.example/callback",
        response_type: "code",
        code_challenge: challengeValue,
        code_challenge_method: method,
      });
      return codeFrom(redirect!.headers.get("location")!);
    };
    const base = { grant_type: "authorization_code", client_id: app.client_id, client_secret: app.client_secret, redirect_uri: "https://app.example/callback" };

    const code = await run("S256", challenge);
    const missing = await http.post("/oauth/token", { form: { ...base, code } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: "invalid_request", error_description: "Missing required parameter: code_verifier." });
    const wrong = await http.post("/oauth/token", { form: { ...base, code, code_verifier: "not-the-verifier" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const code2 = await run("S256", challenge);
    const ok = await http.post("/oauth/token", { form: { ...base, code: code2, code_verifier: verifier } });
    expect(ok.status).toBe(200);

    const plainCode = await run("plain", verifier);
    const plain = await http.post("/oauth/token", { form: { ...base, code: plainCode, code_verifier: verifier } });
    expect(plain.status).toBe(200);
  });

  test("codes expire after ten minutes and belong to one client", async () => {
    const app = await newApp();
    const other = await newApp();
    const query = { client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code" };
    const codeA = codeFrom((await authorize(query)).redirect!.headers.get("location")!);
    const stolen = await http.post("/oauth/token", {
      form: { grant_type: "authorization_code", code: codeA, client_id: other.client_id, client_secret: other.client_secret, redirect_uri: "https://app.example/callback" },
    });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe("invalid_grant");

    const codeB = codeFrom((await authorize(query)).redirect!.headers.get("location")!);
    server.clock.advance(10 * 60 * 1000 + 1000);
    const late = await http.post("/oauth/token", {
      form: { grant_type: "authorization_code", code: codeB, client_id: app.client_id, client_secret: app.client_secret, redirect_uri: "https://app.example/callback" },
    });
    expect(late.status).toBe(400);
    expect(late.body.error).toBe("invalid_grant");
  });

  test("bad authorization requests show an error page and never redirect", async () => {
    const app = await newApp("read");
    const cases: [Record<string, string>, number, string][] = [
      [{ redirect_uri: "https://app.example/callback", response_type: "code" }, 400, "Missing required parameter: client_id."],
      [{ client_id: "unknown", redirect_uri: "https://app.example/callback", response_type: "code" }, 401, INVALID_CLIENT],
      [{ client_id: app.client_id, redirect_uri: "https://evil.example/cb", response_type: "code" }, 400, "The redirect uri included is not valid."],
      [{ client_id: app.client_id, redirect_uri: "https://app.example/callback" }, 400, "Missing required parameter: response_type."],
      [{ client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "token" }, 400, "The authorization server does not support this response type."],
      [{ client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code", scope: "write" }, 400, "The requested scope is invalid, unknown, or malformed."],
    ];
    for (const [query, status, message] of cases) {
      const res = await http.get("/oauth/authorize", { query });
      expect(res.status).toBe(status);
      expect(res.headers.get("location")).toBeNull();
      expect(res.text).toContain(message.replace(/'/g, "&#39;"));
    }
  });

  test("the pages ask browsers to send their origin, and a null origin is refused", async () => {
    const app = await newApp();
    const browser = new BrowserSession(server.base);
    const page = await browser.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code" } });
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
    const [form] = parseForms(page.text);
    const nullOrigin = await browser.post(form!.action, { form: { ...form!.fields, username: "alice", password: PASSWORD }, headers: { origin: "null" } });
    expect(nullOrigin.status).toBe(403);
    expect(nullOrigin.headers.get("set-cookie")).toBeNull();
  });

  test("a consent page answers once: replaying it gives no second code", async () => {
    const app = await newApp();
    const browser = new BrowserSession(server.base);
    const page = await browser.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code" } });
    const [form] = parseForms(page.text);
    const consent = await browser.submit(form!, { username: "alice", password: PASSWORD });
    const [approve] = parseForms(consent.text);
    expect((await browser.submit(approve!)).status).toBe(302);
    const replay = await browser.submit(approve!);
    expect(replay.status).toBe(422);
    expect(replay.headers.get("location")).toBeNull();
  });

  test("oversized state and malformed PKCE challenges are refused up front; a broken cookie is ignored", async () => {
    const app = await newApp();
    const base = { client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code" };
    const longState = await http.get("/oauth/authorize", { query: { ...base, state: "s".repeat(3000) } });
    expect(longState.status).toBe(400);
    const badChallenge = await http.get("/oauth/authorize", { query: { ...base, code_challenge: "short", code_challenge_method: "S256" } });
    expect(badChallenge.status).toBe(400);
    const cookie = await http.get("/oauth/authorize", { query: base, headers: { cookie: "_rookery_session=%E0%A4%A" } });
    expect(cookie.status).toBe(200);
  });

  test("forms posted from another site or with a forged ticket are refused", async () => {
    const app = await newApp();
    const browser = new BrowserSession(server.base);
    const page = await browser.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: "https://app.example/callback", response_type: "code" } });
    const [form] = parseForms(page.text);
    const consent = await browser.submit(form!, { username: "alice", password: PASSWORD });
    const [approve] = parseForms(consent.text);
    const crossSite = await browser.post(approve!.action, { form: approve!.fields, headers: { origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
    const forged = await browser.post(approve!.action, { form: { ticket: "eyJhbGciOiJIUzI1NiJ9.e30.forged" } });
    expect(forged.status).toBe(422);
    const badCsrf = await browser.submit(form!, { authenticity_token: "x", username: "alice", password: PASSWORD });
    expect(badCsrf.status).toBe(422);
    expect(badCsrf.text).toContain("expired");
    // The untouched consent page still works: the refusals used nothing up.
    expect((await browser.submit(approve!)).status).toBe(302);
  });
});

describe("POST /oauth/revoke", () => {
  test("revokes the caller's own token; unknown tokens still answer 200", async () => {
    const app = await newApp();
    const token = await http.post("/oauth/token", {
      form: { grant_type: "password", username: "alice", password: PASSWORD, client_id: app.client_id, client_secret: app.client_secret },
    });
    const accessToken = token.body.access_token;
    expect((await http.get("/api/v1/accounts/verify_credentials", { token: accessToken })).status).toBe(200);
    const revoked = await http.post("/oauth/revoke", { form: { client_id: app.client_id, client_secret: app.client_secret, token: accessToken } });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({});
    const after = await http.get("/api/v1/accounts/verify_credentials", { token: accessToken });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: "The access token is invalid" });
    const unknown = await http.post("/oauth/revoke", { json: { client_id: app.client_id, client_secret: app.client_secret, token: "no-such-token" } });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({});
  });

  test("another app's token is not revoked, and the client must authenticate", async () => {
    const app = await newApp();
    const other = await newApp();
    const foreign = await http.post("/oauth/revoke", { form: { client_id: other.client_id, client_secret: other.client_secret, token: alice.token } });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: "unauthorized_client", error_description: "You are not authorized to revoke this token" });
    expect((await alice.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    const unauthenticated = await http.post("/oauth/revoke", { form: { client_id: app.client_id, client_secret: "wrong", token: alice.token } });
    expect(unauthenticated.status).toBe(403);
    expect(unauthenticated.body.error).toBe("unauthorized_client");
  });
});

describe("bearer authentication on the API", () => {
  test("missing, malformed and unknown tokens answer 401 with the invalid-token body", async () => {
    for (const headers of [{}, { authorization: "Bearer nonsense" }, { authorization: "Basic abc" }] as Record<string, string>[]) {
      const res = await http.get("/api/v1/accounts/verify_credentials", { headers, token: null });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "The access token is invalid" });
      expect(res.headers.get("www-authenticate")).toContain("invalid_token");
    }
    const publicRead = await http.get(`/api/v1/accounts/${alice.id}`, { headers: { authorization: "Bearer nonsense" } });
    expect(publicRead.status).toBe(401);
  });

  test("the access_token query parameter works as the header does", async () => {
    const res = await http.get("/api/v1/accounts/verify_credentials", { query: { access_token: alice.token }, token: null });
    expect(res.status).toBe(200);
  });

  test("a token without the scope gets 403", async () => {
    const reader = await createUser(server, "reader", { scopes: "read" });
    const res = await reader.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "x" } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "This action is outside the authorized scopes" });
    const narrow = await createUser(server, "narrow", { scopes: "read:statuses" });
    const me = await narrow.client.get("/api/v1/accounts/verify_credentials");
    expect(me.status).toBe(403);
    const profileOnly = await createUser(server, "profileonly", { scopes: "profile" });
    expect((await profileOnly.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });

  test("/.well-known/oauth-authorization-server describes the endpoints", async () => {
    const res = await http.get("/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      issuer: `${server.base}/`,
      authorization_endpoint: `${server.base}/oauth/authorize`,
      token_endpoint: `${server.base}/oauth/token`,
      revocation_endpoint: `${server.base}/oauth/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "password", "client_credentials"],
      code_challenge_methods_supported: ["S256", "plain"],
      app_registration_endpoint: `${server.base}/api/v1/apps`,
    });
    expect(res.body.scopes_supported).toContain("write:statuses");
  });
});

