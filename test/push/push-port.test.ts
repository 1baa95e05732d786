import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { accessTokens, applications } from "../../src/db/schema.ts";
import { GroupCommit } from "../../src/infra/group-commit.ts";
import { TimerWheel } from "../../src/infra/timer-wheel.ts";
import { serializePushNotification } from "../../src/presenters/push-notification.ts";
import { loadInstanceKeys } from "../../src/services/instance-keys.ts";
import { PushDeliveries } from "../../src/services/push/deliveries.ts";
import { PushSubscriptions } from "../../src/services/push/subscriptions.ts";
import { TokenSeal } from "../../src/services/push/token-seal.ts";
import { VapidSigner } from "../../src/services/push/web-push.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";
import { decryptAes128gcm, newDevice, startPushService } from "../support/push-service.ts";

/**
 * Web Push on the database port (issue 31): subscriptions and the sending of a push run on SQLite
 * and on PostgreSQL. The API's behaviour is tested over HTTP in subscription.test.ts and
 * delivery.test.ts; this holds the family's SQL on both, `enqueue` (notification.created's
 * `within` listener) included.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await closePortArms();
});

async function push(arm: PortArm) {
  const { t, port } = arm;
  const dir = mkdtempSync(join(tmpdir(), "rookery-push-port-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const seal = new TokenSeal(dir);
  const subscriptions = new PushSubscriptions(port, t.ids, t.clock, true, seal);
  const service = startPushService();
  cleanups.push(() => service.close());
  // A wheel of its own, driven by the test's clock: the SQLite arm's services have theirs.
  const wheel = new TimerWheel(t.clock);
  cleanups.push(() => wheel.stop());
  const keys = await loadInstanceKeys(t.database.port);
  const vapid = new VapidSigner(keys.vapidPrivateJwk, keys.vapidPublicKey, "mailto:admin@rookery.test", t.clock);
  const urls = { publicUrl: "http://rookery.test", media: (path: string) => `http://rookery.test/media/${path}` };
  const deliveries = new PushDeliveries(
    port,
    t.ids,
    t.clock,
    wheel,
    (view) => serializePushNotification(urls, view),
    seal,
    vapid,
    (endpoint, init) => fetch(endpoint, { method: "POST", headers: init.headers, body: init.body as Uint8Array<ArrayBuffer> }),
    subscriptions,
    new GroupCommit(port),
  );

  // alice's token (its app too), copied where the port's rows can refer to them.
  const alice = await arm.mirror(await t.local("alice"));
  const bob = await arm.mirror(await t.local("bob"));
  const { app } = await t.services.applications.register({ name: "Pocket", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read push" });
  const issued = await t.services.tokens.issue(app.id, alice.id, ["read", "push"]);
  const issuedB = await t.services.tokens.issue(app.id, alice.id, ["push"]);
  if (port !== t.database.port) {
    await port.orm.insert(port.tables.applications).values((await t.database.port.orm.select().from(applications).where(eq(applications.id, app.id)).limit(1))[0]!);
    for (const token of [issued, issuedB]) {
      await port.orm.insert(port.tables.accessTokens).values((await t.database.port.orm.select().from(accessTokens).where(eq(accessTokens.id, token.auth.tokenId)).limit(1))[0]!);
    }
  }
  return { port, t, subscriptions, deliveries, wheel, service, alice, bob, token: issued, otherToken: issuedB };
}

const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`Web Push on ${arm.name}`, () => {
    test("a subscription is made, read, updated, replaced and removed; bad input is refused and changes nothing", async () => {
      const a = await arm.open();
      const { subscriptions, alice, token, otherToken, service } = await push(a);
      const device = await newDevice();
      const tokenId = token.auth.tokenId;
      const endpoint = `${service.url}/alice`;
      expect(await subscriptions.hasAny(alice.id)).toBe(false);

      const made = await subscriptions.subscribe(tokenId, token.accessToken, alice.id, { endpoint, p256dh: device.p256dh, auth: device.auth, standard: true }, { alerts: { mention: true, favourite: false, bogus: true }, policy: "followed" });
      expect(made).toMatchObject({ accessTokenId: tokenId, accountId: alice.id, endpoint, alerts: '{"mention":true,"favourite":false}', policy: "followed", standard: true });
      expect(await subscriptions.show(tokenId)).toEqual(made);
      expect(await subscriptions.hasAny(alice.id)).toBe(true);

      const updated = await subscriptions.update(tokenId, { alerts: { favourite: true } });
      expect(updated).toEqual({ ...made, alerts: '{"favourite":true}', policy: "all" });
      expect(await subscriptions.show(tokenId)).toEqual(updated);

      // Bad input: a private policy, a bad endpoint and keys; nothing of it is stored.
      const badUpdate = await subscriptions.update(tokenId, { policy: "friends" }).catch((e: Error) => e);
      expect((badUpdate as Error).message).toBe("Validation failed: Policy is not included in the list");
      const badSubscribe = await subscriptions.subscribe(tokenId, token.accessToken, alice.id, { endpoint: "ftp://push.example/x", p256dh: "AAAA", auth: device.auth }, {}).catch((e: Error) => e);
      expect((badSubscribe as Error).message).toBe("Validation failed: Endpoint is invalid, Key p256dh is invalid");
      expect(await subscriptions.show(tokenId)).toEqual(updated);
      expect(await subscriptions.show(otherToken.auth.tokenId).catch((e: Error) => e)).toMatchObject({ status: 404 });

      // A new POST replaces the token's subscription; another token has its own.
      const replaced = await subscriptions.subscribe(tokenId, token.accessToken, alice.id, { endpoint: `${endpoint}/2`, p256dh: device.p256dh, auth: device.auth }, {});
      await subscriptions.subscribe(otherToken.auth.tokenId, otherToken.accessToken, alice.id, { endpoint: `${endpoint}/3`, p256dh: device.p256dh, auth: device.auth }, {});
      expect(await subscriptions.show(tokenId)).toEqual(replaced);
      expect(await count(a, "push_subscriptions")).toBe(2);

      await subscriptions.unsubscribe(tokenId);
      expect(await subscriptions.show(tokenId).catch((e: Error) => e)).toMatchObject({ status: 404 });
      expect(await subscriptions.hasAny(alice.id)).toBe(true);
      await subscriptions.unsubscribe(otherToken.auth.tokenId);
      expect(await subscriptions.hasAny(alice.id)).toBe(false);
      expect(await count(a, "push_subscriptions")).toBe(0);
    });

    test("subscribes of one token at once (a double submit): each answered, one subscription kept, as the answer of one of them says", async () => {
      const a = await arm.open();
      const { subscriptions, alice, token, service } = await push(a);
      const device = await newDevice();
      const endpoints = [1, 2, 3, 4].map((n) => `${service.url}/alice/${n}`);
      const results = await Promise.allSettled(
        endpoints.map((endpoint) => subscriptions.subscribe(token.auth.tokenId, token.accessToken, alice.id, { endpoint, p256dh: device.p256dh, auth: device.auth }, {})),
      );
      expect(results.map((r) => r.status)).toEqual(Array(4).fill("fulfilled"));
      const kept = await subscriptions.show(token.auth.tokenId);
      expect(results.map((r) => (r as PromiseFulfilledResult<{ id: number; endpoint: string }>).value).filter((made) => made.id === kept.id && made.endpoint === kept.endpoint)).toHaveLength(1);
      expect(await count(a, "push_subscriptions")).toBe(1);
      expect(await subscriptions.hasAny(alice.id)).toBe(true);
    });

    test("a waiting push is restored and sent with its payload; a failure is retried later; a 410 ends the subscription", async () => {
      const a = await arm.open();
      const { port, t, subscriptions, deliveries, wheel, service, alice, bob, token } = await push(a);
      const device = await newDevice();
      const endpoint = `${service.url}/alice`;
      const subscription = await subscriptions.subscribe(token.auth.tokenId, token.accessToken, alice.id, { endpoint, p256dh: device.p256dh, auth: device.auth, standard: true }, { alerts: { follow: true } });
      // Two notifications; enqueue writes a push for the first within its transaction (the
      // subscription wants follows), none for a favourite it does not want.
      const now = t.clock.now();
      const n = port.tables.notifications;
      const rows = [
        { id: 11, accountId: alice.id, fromAccountId: bob.id, type: "follow", statusId: null, reportId: null, groupKey: null, filtered: false, createdAt: now },
        { id: 12, accountId: alice.id, fromAccountId: bob.id, type: "follow", statusId: null, reportId: null, groupKey: null, filtered: false, createdAt: now },
        { id: 13, accountId: alice.id, fromAccountId: bob.id, type: "favourite", statusId: null, reportId: null, groupKey: null, filtered: false, createdAt: now },
      ];
      await port.orm.insert(n).values(rows);
      await port.transaction(async () => {
        await deliveries.enqueue(rows[0]!);
        await deliveries.enqueue(rows[2]!);
      });
      expect(await port.all('SELECT subscription_id AS "subscriptionId", notification_id AS "notificationId", attempts FROM push_deliveries')).toEqual([
        { subscriptionId: subscription.id, notificationId: 11, attempts: 0 },
      ]);

      await deliveries.restore();
      await wheel.idle();
      expect(service.received).toHaveLength(1);
      // Decrypted only: the VAPID JWT is signed at the test's clock, months before the real one (delivery.test.ts checks it).
      const payload = JSON.parse(await decryptAes128gcm(service.received[0]!.body, device));
      expect(payload).toMatchObject({ access_token: token.accessToken, notification_id: 11, notification_type: "follow", preferred_locale: "en", title: "bob is now following you" });
      expect(await count(a, "push_deliveries")).toBe(0);

      // The push service fails: the delivery stays, tried again after Sidekiq's first backoff.
      service.answer("/alice", 503);
      await port.orm.insert(port.tables.pushDeliveries).values({ id: 22, subscriptionId: subscription.id, notificationId: 12, attempts: 0, dueAt: now });
      await deliveries.restore();
      await wheel.idle();
      expect(service.received).toHaveLength(2);
      expect(await port.all("SELECT id, attempts, due_at AS \"dueAt\" FROM push_deliveries")).toEqual([{ id: 22, attempts: 1, dueAt: now + 15_000 }]);

      // Then it says the subscription is gone: the subscription goes, and its deliveries with it.
      service.answer("/alice", 410);
      t.clock.advance(15_000);
      await wheel.idle();
      expect(service.received).toHaveLength(3);
      expect(await count(a, "push_subscriptions")).toBe(0);
      expect(await count(a, "push_deliveries")).toBe(0);
      expect(await subscriptions.hasAny(alice.id)).toBe(false);
    });
  });
}
