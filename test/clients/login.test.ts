import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOAuthAPIClient, createRestAPIClient } from "masto";
import generator, { detector } from "megalodon";
import { createUser, PASSWORD } from "../support/fixtures.ts";
import { BrowserSession } from "../support/browser.ts";
import { parseForms } from "../support/html.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ REGISTRATIONS: "open" });
  await createUser(server, "alice");
});
afterAll(() => server.close());

describe("masto.js", () => {
  test("registers an app, logs in with the password grant, reads the account and instance", async () => {
    const anonymous = createRestAPIClient({ url: server.base });
    const app = await anonymous.v1.apps.create({ clientName: "masto test", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow" });
    expect(app.clientId).toBeTruthy();
    expect(app.clientSecret).toBeTruthy();

    const oauth = createOAuthAPIClient({ url: server.base });
    const token = await oauth.token.create({
      grantType: "password",
      clientId: app.clientId!,
      clientSecret: app.clientSecret!,
      username: "alice@example.test",
      password: PASSWORD,
      scope: "read write follow",
      redirectUri: "urn:ietf:wg:oauth:2.0:oob",
    });
    expect(token.tokenType).toBe("Bearer");

    const client = createRestAPIClient({ url: server.base, accessToken: token.accessToken });
    const me = await client.v1.accounts.verifyCredentials();
    expect(me.username).toBe("alice");
    expect(me.source?.privacy).toBe("public");
    const updated = await client.v1.accounts.updateCredentials({ displayName: "Alice via masto", note: "hi #masto" });
    expect(updated.displayName).toBe("Alice via masto");

    const v2 = await client.v2.instance.fetch();
    expect(v2.configuration.urls.streaming).toBe(server.base.replace("http", "ws"));
    const v1 = await client.v1.instance.fetch();
    expect(v1.urls.streamingApi).toBe(server.base.replace("http", "ws"));
    const prefs = await client.v1.preferences.fetch();
    expect(prefs["posting:default:visibility"]).toBe("public");
    expect(await client.v1.customEmojis.list()).toEqual([]);

    const revoked = await oauth.revoke({ clientId: app.clientId!, clientSecret: app.clientSecret!, token: token.accessToken });
    expect(revoked).toBeDefined();
    await expect(client.v1.accounts.verifyCredentials()).rejects.toMatchObject({ statusCode: 401, message: "The access token is invalid" });
  });

  test("surfaces Mastodon's error shape on registration failures", async () => {
    const anonymous = createRestAPIClient({ url: server.base });
    const app = await anonymous.v1.apps.create({ clientName: "masto signup", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" });
    const oauth = createOAuthAPIClient({ url: server.base });
    const appToken = await oauth.token.create({ grantType: "client_credentials", clientId: app.clientId!, clientSecret: app.clientSecret!, scope: "read write", redirectUri: "urn:ietf:wg:oauth:2.0:oob" });
    const client = createRestAPIClient({ url: server.base, accessToken: appToken.accessToken });
    const error = await client.v1.accounts.create({ username: "alice", email: "x@example.test", password: "longenough", agreement: true, locale: "en" }).catch((e) => e);
    expect(error.statusCode).toBe(422);
    expect(error.details.username[0].error).toBe("ERR_TAKEN");
    const created = await client.v1.accounts.create({ username: "mastouser", email: "m@example.test", password: "longenough", agreement: true, locale: "en" });
    expect(created.accessToken).toBeTruthy();
  });
});

describe("megalodon", () => {
  test("detects the server as Mastodon-compatible", async () => {
    expect(await detector(server.base)).toBe("mastodon");
  });

  test("registers an app, logs in with the password grant, reads the account and instance", async () => {
    const anonymous = generator("mastodon", server.base);
    const app = await anonymous.registerApp("megalodon test", { scopes: ["read", "write", "follow"], redirect_uris: "urn:ietf:wg:oauth:2.0:oob" });
    expect(app.client_id).toBeTruthy();
    expect(app.url).toContain("/oauth/authorize");

    const response = await fetch(`${server.base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "password", username: "alice", password: PASSWORD, client_id: app.client_id, client_secret: app.client_secret, scope: "read write follow" }),
    });
    const token = (await response.json()) as { access_token: string };

    const client = generator("mastodon", server.base, token.access_token);
    const me = await client.verifyAccountCredentials();
    expect(me.data.username).toBe("alice");
    const instance = await client.getInstance();
    expect(instance.data.urls?.streaming_api).toBe(server.base.replace("http", "ws"));
    expect(instance.data.uri).toBe(server.ctx.config.domain);
    const appInfo = await client.verifyAppCredentials();
    expect(appInfo.data.name).toBe("megalodon test");
  });

  test("authorization-code login: megalodon's authorize URL, our pages, megalodon's token exchange", async () => {
    const client = generator("mastodon", server.base);
    const app = await client.registerApp("megalodon web", { scopes: ["read", "write"], redirect_uris: "https://megalodon.example/callback" });
    const browser = new BrowserSession(server.base);
    const page = await browser.get(app.url!.replace(server.base, ""));
    const [login] = parseForms(page.text);
    const consent = await browser.submit(login!, { username: "alice", password: PASSWORD });
    const [approve] = parseForms(consent.text);
    const redirect = await browser.submit(approve!);
    const code = new URL(redirect.headers.get("location")!).searchParams.get("code")!;
    const token = await client.fetchAccessToken(app.client_id, app.client_secret, code, "https://megalodon.example/callback");
    expect(token.access_token).toBeTruthy();
    expect(token.scope).toBe("read write");
    const me = await generator("mastodon", server.base, token.access_token).verifyAccountCredentials();
    expect(me.data.username).toBe("alice");
  });
});
