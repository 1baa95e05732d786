import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { BrowserSession } from "../support/browser.ts";
import { parseForms } from "../support/html.ts";
import { newDevice, openPush, startPushService, type Device, type PushServiceStandIn } from "../support/push-service.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { onPostgres } from "../support/test-database.ts";

// Web Push delivery: what Mastodon's Web::PushNotificationWorker sends, received by a push
// service stand-in on loopback that decrypts each message with the device's private key and
// verifies the VAPID JWT. Every wait is the timer wheel draining, never a sleep.
let server: TestServer;
let push: PushServiceStandIn;
let alice: TestUser;
let bob: TestUser;
let device: Device;

const ALL_ALERTS = ["mention", "status", "reblog", "follow", "follow_request", "favourite", "poll", "update"];
const drain = () => server.ctx.services.wheel.idle();
const countOf = async (on: TestServer, sql: string, params: unknown[] = []) => Number((await on.database.port.get<{ n: number }>(sql, params))!.n);
const deliveriesLeft = () => countOf(server, "SELECT count(*) AS n FROM push_deliveries");

async function subscribe(user: TestUser, dev: Device, path: string, fields: Record<string, string> = {}) {
  const form: Record<string, string> = {
    "subscription[endpoint]": `${push.url}${path}`,
    "subscription[keys][p256dh]": dev.p256dh,
    "subscription[keys][auth]": dev.auth,
    "subscription[standard]": "true",
    ...Object.fromEntries(ALL_ALERTS.map((a) => [`data[alerts][${a}]`, "true"])),
    ...fields,
  };
  const res = await user.client.post("/api/v1/push/subscription", { form });
  expect(res.status).toBe(200);
  return res.body;
}

/** The pushes that arrived at `path` since `from`, opened. */
async function opened(path: string, dev: Device, from = 0) {
  const mine = push.received.slice(from).filter((p) => p.path === path);
  return Promise.all(mine.map((p) => openPush(p, dev, `${push.url}${path}`)));
}

beforeAll(async () => {
  push = startPushService();
  server = await startTestServer({ ALLOW_PRIVATE_ADDRESSES: "true", CONTACT_EMAIL: "admin@rookery.test" });
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  await bob.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Bob B." } });
  device = await newDevice();
});
afterAll(async () => {
  await server?.close();
  await push?.close();
});

describe("Web Push delivery", () => {
  test("each alert type reaches the device: decrypted with its key, VAPID verified, Mastodon's payload with the token, id, type, title, body and icon", async () => {
    await subscribe(alice, device, "/alice");
    const start = push.received.length;
    const own = await postStatus(alice, { status: "a post of alice's with a poll", poll: { options: ["yes", "no"], expires_in: 300 } });
    const bobsPoll = await postStatus(bob, { status: "bob asks", poll: { options: ["a", "b"], expires_in: 300 } });
    expect((await alice.client.post(`/api/v1/polls/${bobsPoll.poll.id}/votes`, { json: { choices: [0] } })).status).toBe(200);
    expect((await alice.client.post(`/api/v1/accounts/${bob.id}/follow`, { json: { notify: true } })).status).toBe(200);
    expect((await bob.client.post(`/api/v1/accounts/${alice.id}/follow`)).status).toBe(200); // follow
    await postStatus(bob, { status: "@alice hello there" }); // mention (and status: alice asked to be told of bob's posts)
    expect((await bob.client.post(`/api/v1/statuses/${own.id}/favourite`)).status).toBe(200); // favourite
    expect((await bob.client.post(`/api/v1/statuses/${own.id}/reblog`)).status).toBe(200); // reblog
    const bobsPost = await postStatus(bob, { status: "bob's thoughts, for the boost" }); // status
    expect((await alice.client.post(`/api/v1/statuses/${bobsPost.id}/reblog`)).status).toBe(200);
    expect((await bob.client.put(`/api/v1/statuses/${bobsPost.id}`, { json: { status: "bob's thoughts, edited" } })).status).toBe(200); // update
    server.clock.advance(301_000); // poll (bob's poll that alice voted in has ended)
    await drain();
    await alice.client.patch("/api/v1/accounts/update_credentials", { json: { locked: true } });
    const carol = await createUser(server, "carol");
    expect((await carol.client.post(`/api/v1/accounts/${alice.id}/follow`)).status).toBe(200); // follow_request
    await drain();

    const pushes = await opened("/alice", device, start);
    const notifications = (await alice.client.get("/api/v1/notifications?limit=40")).body as any[];
    const types = pushes.map((p) => p.payload.notification_type).sort();
    expect(types).toEqual(notifications.map((n) => n.type).sort());
    expect(new Set(types)).toEqual(new Set(ALL_ALERTS));
    for (const { payload, claims, serverKey } of pushes) {
      const n = notifications.find((x) => String(x.id) === String(payload.notification_id))!;
      expect(n).toBeDefined();
      expect(payload.notification_id).toBe(Number(n.id));
      expect(payload.access_token).toBe(alice.token);
      expect(payload.preferred_locale).toBe("en");
      expect(payload.icon).toBe(n.account.avatar_static);
      expect(serverKey).toBe((await alice.client.get("/api/v1/apps/verify_credentials")).body.vapid_key);
      expect(claims.sub).toBe("mailto:admin@rookery.test");
      expect(Number(claims.exp) * 1000 - server.clock.now()).toBeLessThanOrEqual(24 * 3600 * 1000);
    }
    const byType = (t: string) => pushes.find((p) => p.payload.notification_type === t)!.payload;
    expect(byType("mention")).toMatchObject({ title: "You were mentioned by Bob B.", body: "@alice hello there" });
    expect(byType("follow")).toMatchObject({ title: "Bob B. is now following you" });
    expect(byType("favourite")).toMatchObject({ title: "Bob B. favorited your post", body: "a post of alice's with a poll" });
    expect(byType("reblog")).toMatchObject({ title: "Bob B. boosted your post", body: "a post of alice's with a poll" });
    expect(byType("update")).toMatchObject({ title: "Bob B. edited a post", body: "bob's thoughts, edited" });
    // Both polls ended: bob's, that alice voted in, and her own.
    const polls = pushes.filter((p) => p.payload.notification_type === "poll").map((p) => [p.payload.title, p.payload.body]);
    expect(polls.sort()).toEqual([["A poll by Bob B. has ended", "bob asks"], ["A poll by alice has ended", "a post of alice's with a poll"]]);
    expect(byType("follow_request")).toMatchObject({ title: "Pending follower: carol" });
    const headers = push.received[start]!.headers;
    expect(headers).toMatchObject({ "content-encoding": "aes128gcm", "content-type": "application/octet-stream", ttl: "172800", urgency: "normal" });
    expect(await deliveriesLeft()).toBe(0);
  });

  test("staff hear of sign-ups and reports: admin.sign_up and admin.report, with Mastodon's titles", async () => {
    const boss = await createUser(server, "boss");
    await server.database.port.run("UPDATE users SET role = 'admin' WHERE account_id = ?", [boss.account.id]);
    const bossDevice = await newDevice();
    await subscribe(boss, bossDevice, "/boss", { "data[alerts][admin.sign_up]": "true", "data[alerts][admin.report]": "true" });
    const from = push.received.length;
    // A sign-up through an invite link (registrations are closed here).
    const browser = new BrowserSession(server.base);
    const page = await browser.get(new URL((await server.ctx.services.invites.create(boss.account.id)).url).pathname);
    const form = parseForms(page.text).find((f) => f.method === "post")!;
    const signedUp = await browser.submit(form, { username: "newbie", email: "newbie@example.test", password: "longenough", password_confirmation: "longenough", agreement: "1" });
    expect(signedUp.status).toBe(201);
    expect((await alice.client.post("/api/v1/reports", { json: { account_id: bob.id } })).status).toBe(200);
    await drain();
    const got = (await opened("/boss", bossDevice, from)).map((p) => [p.payload.notification_type, p.payload.title]);
    expect(got).toEqual([
      ["admin.sign_up", "newbie signed up"],
      ["admin.report", "alice submitted a report"],
    ]);
  });

  test("policy and alerts: followed, follower and none let through only whom they say; an alert left off sends nothing", async () => {
    const dana = await createUser(server, "dana");
    const danaDevice = await newDevice();
    const erin = await createUser(server, "erin"); // dana follows erin
    const finn = await createUser(server, "finn"); // finn follows dana
    expect((await dana.client.post(`/api/v1/accounts/${erin.id}/follow`)).status).toBe(200);
    expect((await finn.client.post(`/api/v1/accounts/${dana.id}/follow`)).status).toBe(200);
    const mentionBoth = async () => {
      await postStatus(erin, { status: "@dana from erin" });
      await postStatus(finn, { status: "@dana from finn" });
      await drain();
    };
    const senders = async (from: number) => (await opened("/dana", danaDevice, from)).map((p) => p.payload.title);

    await subscribe(dana, danaDevice, "/dana", { "data[policy]": "followed" });
    let from = push.received.length;
    await mentionBoth();
    expect(await senders(from)).toEqual(["You were mentioned by erin"]);

    await dana.client.put("/api/v1/push/subscription", { json: { data: { alerts: { mention: true }, policy: "follower" } } });
    from = push.received.length;
    await mentionBoth();
    expect(await senders(from)).toEqual(["You were mentioned by finn"]);

    await dana.client.put("/api/v1/push/subscription", { json: { data: { alerts: { mention: true }, policy: "none" } } });
    from = push.received.length;
    await mentionBoth();
    expect(await senders(from)).toEqual([]);

    await dana.client.put("/api/v1/push/subscription", { json: { data: { alerts: { mention: false, favourite: true }, policy: "all" } } });
    from = push.received.length;
    await mentionBoth();
    expect(await senders(from)).toEqual([]);
    expect(await deliveriesLeft()).toBe(0);
  });

  test("a notification the notification policy holds back is not pushed", async () => {
    const kim = await createUser(server, "kim");
    const dev = await newDevice();
    await subscribe(kim, dev, "/kim");
    await kim.client.patch("/api/v2/notifications/policy", { json: { for_not_following: "filter" } });
    const from = push.received.length;
    await postStatus(bob, { status: "@kim from a stranger" });
    await drain();
    expect(await deliveriesLeft()).toBe(0);
    expect(push.received.slice(from).filter((p) => p.path === "/kim")).toEqual([]);
    expect((await kim.client.get("/api/v1/notifications/requests")).body).toHaveLength(1);
  });

  test("a subscription without `standard` gets the aesgcm draft: Encryption and Crypto-Key headers, `WebPush <jwt>`", async () => {
    const gail = await createUser(server, "gail");
    const dev = await newDevice();
    await subscribe(gail, dev, "/gail", { "subscription[standard]": "false" });
    const from = push.received.length;
    await postStatus(bob, { status: "@gail hi" });
    await drain();
    const [raw] = push.received.slice(from).filter((p) => p.path === "/gail");
    expect(raw!.headers["content-encoding"]).toBe("aesgcm");
    expect(raw!.headers.encryption).toMatch(/^salt=[A-Za-z0-9_-]{22}$/);
    expect(raw!.headers["crypto-key"]).toMatch(/^dh=[A-Za-z0-9_-]{87};p256ecdsa=[A-Za-z0-9_-]{87}$/);
    const [one] = await opened("/gail", dev, from);
    expect(one!.payload).toMatchObject({ notification_type: "mention", title: "You were mentioned by Bob B.", access_token: gail.token });
  });

  test("410 and 404 from the push service delete the subscription (and what waited for it); other 4xx too, but not 408 or 429", async () => {
    for (const status of [410, 404, 403]) {
      const user = await createUser(server, `gone${status}`);
      await subscribe(user, await newDevice(), `/gone${status}`);
      push.answer(`/gone${status}`, status);
      await postStatus(bob, { status: `@gone${status} are you there?` });
      await drain();
      const res = await user.client.get("/api/v1/push/subscription");
      expect([status, res.status, res.body]).toEqual([status, 404, { error: "Record not found" }]);
    }
    for (const status of [408, 429]) {
      const user = await createUser(server, `busy${status}`);
      await subscribe(user, await newDevice(), `/busy${status}`);
      push.answer(`/busy${status}`, status);
      await postStatus(bob, { status: `@busy${status} are you there?` });
      await drain();
      expect((await user.client.get("/api/v1/push/subscription")).status).toBe(200);
    }
    expect(await deliveriesLeft()).toBe(2);
    await server.database.port.run("DELETE FROM push_deliveries");
  });

  test("5xx or no answer: tried again after 15 s, 16 s, 31 s, 96 s, 271 s, then given up; a retry that succeeds ends it", async () => {
    const hana = await createUser(server, "hana");
    const dev = await newDevice();
    await subscribe(hana, dev, "/hana");
    push.answer("/hana", 503);
    const from = push.received.length;
    const posted = server.clock.now();
    await postStatus(bob, { status: "@hana first" });
    await drain();
    const drained = server.clock.now();
    const attempts = async () =>
      (await server.database.port.all<{ attempts: number; dueAt: number }>('SELECT attempts, due_at AS "dueAt" FROM push_deliveries WHERE subscription_id = (SELECT id FROM push_subscriptions WHERE account_id = ?)', [Number(hana.id)])).map(
        (r) => ({ attempts: Number(r.attempts), dueAt: Number(r.dueAt) }),
      );
    // The clock runs on with real time (only moved further by the test), so an attempt's time
    // is known to lie between the clock before it and the clock after the drain; its retry is
    // due the delay after that (a busy machine may stall anywhere in between).
    const dueAfter = (dueAt: number, from: number, to: number, seconds: number) => {
      expect(dueAt).toBeGreaterThanOrEqual(from + seconds * 1000);
      expect(dueAt).toBeLessThanOrEqual(to + seconds * 1000);
    };
    let [row] = await attempts();
    expect(row!.attempts).toBe(1);
    dueAfter(row!.dueAt, posted, drained, 15);
    for (const [n, delay] of [[2, 16], [3, 31], [4, 96], [5, 271], [6, null]] as const) {
      server.clock.set(row!.dueAt - 5000);
      await drain();
      expect((await attempts())[0]!.attempts).toBe(n - 1); // not early
      const before = row!.dueAt;
      server.clock.set(before);
      await drain();
      const after = server.clock.now();
      [row] = await attempts();
      if (delay === null) break;
      expect(row!.attempts).toBe(n);
      dueAfter(row!.dueAt, before, after, delay);
    }
    expect(await attempts()).toEqual([]); // the sixth attempt (fifth retry) failed too: given up
    expect(push.received.slice(from).filter((p) => p.path === "/hana")).toHaveLength(6);

    await postStatus(bob, { status: "@hana second" });
    await drain();
    push.answer("/hana", 201);
    server.clock.advance(15_000);
    await drain();
    expect(await attempts()).toEqual([]);
    const last = (await opened("/hana", dev, from)).at(-1)!;
    expect(last.payload.body).toBe("@hana second");
    expect((await hana.client.get("/api/v1/push/subscription")).status).toBe(200);
  });

  test("a dismissed notification is not pushed; a revoked token takes its subscription and pending pushes with it", async () => {
    const ivan = await createUser(server, "ivan");
    await subscribe(ivan, await newDevice(), "/ivan");
    push.answer("/ivan", 500);
    await postStatus(bob, { status: "@ivan one" });
    await drain();
    expect(await deliveriesLeft()).toBe(1);
    const [n] = (await ivan.client.get("/api/v1/notifications")).body;
    expect((await ivan.client.post(`/api/v1/notifications/${n.id}/dismiss`)).status).toBe(200);
    push.answer("/ivan", 201);
    const from = push.received.length;
    server.clock.advance(15_000);
    await drain();
    expect(await deliveriesLeft()).toBe(0);
    expect(push.received.slice(from)).toEqual([]);

    push.answer("/ivan", 500);
    await postStatus(bob, { status: "@ivan two" });
    await drain();
    expect(await deliveriesLeft()).toBe(1);
    expect((await ivan.client.post("/oauth/revoke", { form: { client_id: ivan.app.clientId, client_secret: ivan.clientSecret, token: ivan.token } })).status).toBe(200);
    expect(await deliveriesLeft()).toBe(0);
    expect(await countOf(server, "SELECT count(*) AS n FROM push_subscriptions WHERE account_id = ?", [Number(ivan.id)])).toBe(0);
  });
});

describe("Web Push across a restart, and the sealed tokens", () => {
  test("a push waiting for its retry is sent after a restart; the database holds no token in the clear, the key file is the owner's only", async () => {
    const jill = await createUser(server, "jill");
    const dev = await newDevice();
    await subscribe(jill, dev, "/jill");
    push.answer("/jill", 502);
    await postStatus(bob, { status: "@jill before the restart" });
    await drain();
    expect(await deliveriesLeft()).toBe(1);
    server = await server.restart();
    push.answer("/jill", 201);
    const from = push.received.length;
    server.clock.advance(15_000);
    await server.ctx.services.wheel.idle();
    const [one] = await opened("/jill", dev, from);
    expect(one!.payload).toMatchObject({ body: "@jill before the restart", access_token: jill.token });
    expect(await deliveriesLeft()).toBe(0);

    const { readFileSync, statSync } = await import("node:fs");
    if (!onPostgres) {
      // The file itself too, on SQLite: no page of it, free or not, holds the token. The
      // checkpoint waits a turn: the port's reads hold their read transaction until it ends.
      await new Promise((resolve) => setImmediate(resolve));
      server.database.sqlite!.run("PRAGMA wal_checkpoint(TRUNCATE)");
      expect(readFileSync(`${server.dataDir}/rookery.sqlite3`).includes(Buffer.from(jill.token))).toBe(false);
    }
    const stored = JSON.stringify([await server.database.port.all("SELECT * FROM push_subscriptions"), await server.database.port.all("SELECT * FROM push_deliveries")]);
    expect(stored).toContain(`/jill`);
    expect(stored.includes(jill.token)).toBe(false);
    expect(statSync(`${server.dataDir}/push-token.key`).mode & 0o777).toBe(0o600);
  });
});


describe("Web Push without ALLOW_PRIVATE_ADDRESSES", () => {
  test("an endpoint on a private address is never sent to: its subscription is deleted at the first push", async () => {
    const strict = await startTestServer();
    try {
      const lee = await createUser(strict, "lee");
      const sender = await createUser(strict, "sender");
      const dev = await newDevice();
      const endpoint = `https://127.0.0.1:${new URL(push.url).port}/lee`;
      const sub = await lee.client.post("/api/v1/push/subscription", {
        form: { "subscription[endpoint]": endpoint, "subscription[keys][p256dh]": dev.p256dh, "subscription[keys][auth]": dev.auth, "data[alerts][mention]": "true" },
      });
      expect(sub.status).toBe(200);
      const from = push.received.length;
      await postStatus(sender, { status: "@lee hello" });
      await strict.ctx.services.wheel.idle();
      expect(push.received.slice(from).filter((p) => p.path === "/lee")).toEqual([]);
      const gone = await lee.client.get("/api/v1/push/subscription");
      expect([gone.status, gone.body]).toEqual([404, { error: "Record not found" }]);
      expect(await countOf(strict, "SELECT count(*) AS n FROM push_deliveries")).toBe(0);
    } finally {
      await strict.close();
    }
  });
});
