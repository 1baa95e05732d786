import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRestAPIClient } from "masto";
import { createUser, registerApp, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The Web Push subscription API (Mastodon's /api/v1/push/subscription): one per access token.
let server: TestServer;
let alice: TestUser;
let p256dh: string;
const auth = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url");

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  p256dh = Buffer.from(await crypto.subtle.exportKey("raw", pair.publicKey)).toString("base64url");
});
afterAll(async () => {
  await server?.close();
});

const rows = async () => Number((await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM push_subscriptions"))!.n);
const form = (fields: Record<string, string>) => ({ form: fields });
const subscription = (extra: Record<string, string> = {}) =>
  form({ "subscription[endpoint]": "https://push.example/send/abc", "subscription[keys][p256dh]": p256dh, "subscription[keys][auth]": auth, ...extra });

describe("/api/v1/push/subscription", () => {
  test("POST (form, nested keys): the subscription with its alerts as asked, the server's VAPID key and the policy; GET gives it back; PUT changes alerts and policy only", async () => {
    const created = await alice.client.post("/api/v1/push/subscription", subscription({ "data[alerts][mention]": "true", "data[alerts][follow]": "false", "data[alerts][bogus]": "true", "data[policy]": "followed" }));
    expect(created.status).toBe(200);
    const vapid = (await alice.client.get("/api/v1/apps/verify_credentials")).body.vapid_key;
    expect(vapid).toBe((await alice.client.get("/api/v2/instance")).body.configuration.vapid.public_key);
    expect(created.body).toEqual({ id: expect.any(String), endpoint: "https://push.example/send/abc", standard: false, alerts: { mention: true, follow: false }, server_key: vapid, policy: "followed" });
    expect((await alice.client.get("/api/v1/push/subscription")).body).toEqual(created.body);
    const updated = await alice.client.put("/api/v1/push/subscription", { json: { data: { alerts: { reblog: true, favourite: true }, policy: "all" }, subscription: { endpoint: "https://other.example/" } } });
    expect(updated.body).toEqual({ ...created.body, alerts: { reblog: true, favourite: true }, policy: "all" });
  });

  test("a new POST replaces the token's subscription; another token has its own; DELETE answers {} and it is gone", async () => {
    const first = (await alice.client.get("/api/v1/push/subscription")).body;
    const second = await alice.client.post("/api/v1/push/subscription", subscription({ "subscription[standard]": "true" }));
    expect(second.body.id).not.toBe(first.id);
    expect(second.body.standard).toBe(true);
    const other = await createUser(server, "other");
    expect((await other.client.get("/api/v1/push/subscription")).status).toBe(404);
    expect(await rows()).toBe(1);
    expect((await alice.client.delete("/api/v1/push/subscription")).body).toEqual({});
    const gone = await alice.client.get("/api/v1/push/subscription");
    expect([gone.status, gone.body]).toEqual([404, { error: "Record not found" }]);
    expect((await alice.client.delete("/api/v1/push/subscription")).body).toEqual({});
    expect(await rows()).toBe(0);
  });

  test("errors: no token 401, no push scope 403, no subscription 400, blank or bad endpoint and keys 422 with Mastodon's words, PUT without one 404; nothing stored", async () => {
    const none = await new Client(server.base).post("/api/v1/push/subscription", subscription());
    expect([none.status, none.body]).toEqual([401, { error: "The access token is invalid" }]);
    const unscoped = await createUser(server, "unscoped", { scopes: "read write" });
    const scoped = await unscoped.client.post("/api/v1/push/subscription", subscription());
    expect([scoped.status, scoped.body]).toEqual([403, { error: "This action is outside the authorized scopes" }]);
    const cases: [Record<string, string>, number, string][] = [
      [{}, 400, "param is missing or the value is empty: subscription"],
      [{ "subscription[endpoint]": "" }, 422, "Validation failed: Endpoint can't be blank, Key p256dh can't be blank, Key auth can't be blank"],
      [{ "subscription[endpoint]": "http://push.example/x", "subscription[keys][p256dh]": p256dh, "subscription[keys][auth]": auth }, 422, "Validation failed: Endpoint is invalid"],
      [{ "subscription[endpoint]": "not a url", "subscription[keys][p256dh]": "AAAA", "subscription[keys][auth]": "short" }, 422, "Validation failed: Endpoint is invalid, Key p256dh is invalid, Key auth is invalid"],
      [{ "subscription[endpoint]": "https://push.example/x", "subscription[keys][p256dh]": p256dh, "subscription[keys][auth]": auth, "data[policy]": "everyone" }, 422, "Validation failed: Policy is not included in the list"],
    ];
    for (const [fields, status, error] of cases) {
      const res = await alice.client.post("/api/v1/push/subscription", form(fields));
      expect([JSON.stringify(fields), res.status, res.body]).toEqual([JSON.stringify(fields), status, { error }]);
    }
    const put = await alice.client.put("/api/v1/push/subscription", { json: { data: { alerts: { mention: true } } } });
    expect([put.status, put.body]).toEqual([404, { error: "Record not found" }]);
    expect(await rows()).toBe(0);
  });

  test("an endpoint with control characters (NUL, tab, newline, DEL, C1) is 422 and the token's subscription stays as it was", async () => {
    const user = await createUser(server, "controls");
    const kept = await user.client.post("/api/v1/push/subscription", subscription());
    expect(kept.status).toBe(200);
    const stored = () => server.database.port.all("SELECT * FROM push_subscriptions WHERE account_id = ?", [user.account.id]);
    const before = await stored();
    const bad = ["https://push.example/a\u0000b", "https://push.example/\u0000", "https://push.example/a\tb", "https://push.example/a\nb", "https://push.exa\r\nmple/x", "https://push.example/a\u007fb", "https://push.example/a\u0085b", "\u0000https://push.example/x"];
    for (const endpoint of bad) {
      for (const body of [subscription({ "subscription[endpoint]": endpoint }), { json: { subscription: { endpoint, keys: { p256dh, auth } } } }]) {
        const res = await user.client.post("/api/v1/push/subscription", body);
        expect([JSON.stringify(endpoint), res.status, res.body]).toEqual([JSON.stringify(endpoint), 422, { error: "Validation failed: Endpoint is invalid" }]);
      }
    }
    expect(await stored()).toEqual(before);
    expect((await user.client.get("/api/v1/push/subscription")).body).toEqual(kept.body);
    expect((await user.client.delete("/api/v1/push/subscription")).status).toBe(200);
  });

  test("revoking the token ends its subscription", async () => {
    const { app, clientSecret } = await registerApp(server, "read write push");
    const token = (await server.ctx.services.tokens.issue(app.id, alice.account.id, ["read", "write", "push"])).accessToken;
    const client = new Client(server.base, token);
    expect((await client.post("/api/v1/push/subscription", subscription())).status).toBe(200);
    expect(await rows()).toBe(1);
    const revoked = await new Client(server.base).post("/oauth/revoke", { form: { client_id: app.clientId, client_secret: clientSecret, token } });
    expect(revoked.status).toBe(200);
    expect(await rows()).toBe(0);
  });

  test("masto.js subscribes, reads, updates and unsubscribes", async () => {
    const masto = createRestAPIClient({ url: server.base, accessToken: alice.token });
    const created = await masto.v1.push.subscription.create({ subscription: { endpoint: "https://push.example/masto", keys: { p256dh, auth } }, data: { alerts: { mention: true, poll: true }, policy: "follower" } } as never);
    expect([created.endpoint, created.alerts as unknown, created.policy]).toEqual(["https://push.example/masto", { mention: true, poll: true }, "follower"]);
    expect((await masto.v1.push.subscription.fetch()).id).toBe(created.id);
    const updated = await masto.v1.push.subscription.update({ data: { alerts: { follow: true } }, policy: "all" } as never);
    expect(updated.alerts as unknown).toEqual({ follow: true });
    await masto.v1.push.subscription.remove();
    expect(await rows()).toBe(0);
  });
});
