import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { exportSpki, generateCryptoKeyPair, signJsonLd, signRequest } from "@fedify/fedify";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { AP } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

// A server this one stopped federating with (blocked, or taken off the allow list) after its
// keys were known here: whatever it signs, and however it dresses the request, nothing it
// sends is taken. carol (the receiver) plays that server.

let open: TestServer;
let listed: TestServer;
let alice: TestUser;
let wendy: TestUser;
let carol: Awaited<ReturnType<typeof startReceiver>>;
let carolHost: string;
/** carol's key as each server kept it before she was refused. */
let carolKeyRows: Map<TestServer, { key: string; value: string }>;

beforeAll(async () => {
  [open, listed, carol] = await Promise.all([
    startTestServer({ HOST: "127.0.0.41", ALLOW_PRIVATE_ADDRESSES: "true" }),
    startTestServer({ HOST: "127.0.0.42", ALLOW_PRIVATE_ADDRESSES: "true", WHITELIST_MODE: "true" }),
    startReceiver("127.0.0.40"),
  ]);
  carolHost = new URL(carol.base).hostname;
  alice = await createUser(open, "alice");
  wendy = await createUser(listed, "wendy");
  await listed.ctx.services.federationDomains.allow(carolHost);
  // carol follows both: each server verified her signature, and keeps her key.
  await carol.follow(`${open.base}/users/alice`, `${open.base}/users/alice/inbox`);
  await carol.follow(`${listed.base}/users/wendy`, `${listed.base}/users/wendy/inbox`);
  // The Follows are worked off the inbox queue after the 202, fetching and keeping carol's
  // documents as they go: done once each server stored its follow (on PostgreSQL a write of
  // that work could otherwise land after a rule below, and be a kept key the tests did not make).
  for (const server of [open, listed]) await eventually(async () => (await count(server, "SELECT count(*) AS n FROM follows")) > 0, "carol's follow stored");
  // The follow is stored in the middle of the Follow's handling: what it fetches after (and
  // keeps), and the refreshes it set off, are done only once the server is idle.
  for (const server of [open, listed]) await server.federation!.idle();
  for (const server of [open, listed]) expect(await cachedKeys(server)).toBeGreaterThan(0);
  carolKeyRows = new Map(
    await Promise.all(
      [open, listed].map(async (server) => [server, (await server.database.port.get<{ key: string; value: string }>("SELECT key, value FROM fedify_kv WHERE key = ?", [JSON.stringify(["_fedify", "publicKey", carol.keyId.href])]))!] as const),
    ),
  );
});
afterAll(async () => {
  await open?.close();
  await listed?.close();
  carol?.stop();
});

const count = async (server: TestServer, sql: string, ...params: (string | number)[]) => (await server.database.port.get<{ n: number }>(sql, params))!.n;
/** Keys (and documents) of carol's server that Fedify keeps in its store (not the marks of a failed fetch, null). */
const cachedKeys = (server: TestServer) =>
  count(
    server,
    `SELECT count(*) AS n FROM fedify_kv WHERE (key LIKE '["_fedify","publicKey","http%' OR key LIKE '["_fedify","remoteDocument",%') AND key LIKE ? AND value <> 'null'`,
    `%${carol.base}%`,
  );
/** What carol's activities could have left on a server. */
const traces = (server: TestServer) => Promise.all([
  count(server, "SELECT count(*) AS n FROM statuses WHERE uri LIKE ?", `${carol.base}%`),
  count(server, "SELECT count(*) AS n FROM notifications"),
  count(server, "SELECT count(*) AS n FROM follows"),
  count(server, "SELECT count(*) AS n FROM follow_requests"),
]);

/** A direct message from carol to a local account, as JSON. */
function directMessage(to: string, id: string) {
  const note = { id: `${carol.base}/notes/${id}`, type: "Note", attributedTo: carol.actor, to: [to], content: `<p>secret ${id}</p>`, tag: [{ type: "Mention", href: to }] };
  return { "@context": "https://www.w3.org/ns/activitystreams", id: `${note.id}/activity`, type: "Create", actor: carol.actor, to: [to], object: note };
}

/** carol's activity, signed with RFC 9421 by her key, with a decoy key id of another server appended to `Signature`. */
async function signedWithDecoy(inbox: string, activity: object, decoy: string): Promise<Response> {
  const body = JSON.stringify(activity);
  const signed = await signRequest(new Request(inbox, { method: "POST", headers: { "content-type": AP }, body }), carol.privateKey, carol.keyId, { spec: "rfc9421" });
  const headers = new Headers(signed.headers);
  expect(headers.get("signature-input")).toContain(`keyid="${carol.keyId.href}"`);
  headers.set("signature", `${headers.get("signature")}, keyid="${decoy}"`);
  return fetch(inbox, { method: "POST", headers, body });
}

describe("a refused server's signed activities", () => {
  test("WHITELIST_MODE, taken off the list: an RFC 9421 signature with a decoy key id in Signature is refused (Mastodon's 403); its DM is not stored", async () => {
    const before = await traces(listed);
    await listed.ctx.services.federationDomains.disallow(carolHost);
    const res = await signedWithDecoy(`${listed.base}/users/wendy/inbox`, directMessage(`${listed.base}/users/wendy`, "dm-listed"), `${listed.base}/users/wendy#main-key`);
    expect([res.status, await res.json()]).toEqual([403, { error: `Public key not found for key ${carol.keyId.href}` }]);
    expect(await traces(listed)).toEqual(before);
    expect((await wendy.client.get("/api/v1/notifications")).body.filter((n: { type: string }) => n.type === "mention")).toEqual([]);
  });

  test("blocked: its Follow, signed so, is refused the same way, never a 500; nothing is stored", async () => {
    await open.ctx.services.federationDomains.block(carolHost);
    const before = await traces(open);
    const follow = { "@context": "https://www.w3.org/ns/activitystreams", id: `${carol.base}/follows/again`, type: "Follow", actor: carol.actor, object: `${open.base}/users/alice` };
    for (const decoy of [`${open.base}/users/alice#main-key`, "https://allowed.example/x"]) {
      const res = await signedWithDecoy(`${open.base}/users/alice/inbox`, follow, decoy);
      expect([decoy, res.status, await res.json()]).toEqual([decoy, 403, { error: `Public key not found for key ${carol.keyId.href}` }]);
    }
    expect(await traces(open)).toEqual(before);
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(0);
  });

  test("its keys go with the rule: none is kept, and an activity signed only inside (Linked Data Signatures, no HTTP signature) is not taken", async () => {
    // Both rules are in force (the tests above): the keys went when they were made.
    expect([await cachedKeys(open), await cachedKeys(listed)]).toEqual([0, 0]);
    for (const [server, user] of [
      [open, alice],
      [listed, wendy],
    ] as const) {
      const before = await traces(server);
      const activity = await signJsonLd(directMessage(`${server.base}/users/${user.account.username}`, `ld-${user.account.username}`), carol.privateKey, carol.keyId, {});
      const res = await fetch(`${server.base}/inbox`, { method: "POST", headers: { "content-type": AP }, body: JSON.stringify(activity) });
      expect([server.base, res.status >= 400 && res.status < 500]).toEqual([server.base, true]);
      expect(await traces(server)).toEqual(before);
      expect(await cachedKeys(server)).toBe(0);
    }
  });

  test("a key kept after the rule (cached by a fetch under way as it was made) verifies nothing: it is read as absent", async () => {
    for (const [server, user] of [
      [open, alice],
      [listed, wendy],
    ] as const) {
      const row = carolKeyRows.get(server)!;
      await server.database.port.run("INSERT INTO fedify_kv (key, value, expires_at) VALUES (?, ?, NULL) ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = NULL", [row.key, row.value]);
      expect(await cachedKeys(server)).toBe(1);
      const before = await traces(server);
      const activity = await signJsonLd(directMessage(`${server.base}/users/${user.account.username}`, `kept-${user.account.username}`), carol.privateKey, carol.keyId, {});
      const res = await fetch(`${server.base}/users/${user.account.username}/inbox`, { method: "POST", headers: { "content-type": AP }, body: JSON.stringify(activity) });
      expect([server.base, res.status]).toEqual([server.base, 401]);
      expect(await traces(server)).toEqual(before);
    }
  });

  test("a key of an allowed server that claims a refused actor as its owner is not believed (the actor does not name it): 401, nothing stored, never a 500", async () => {
    // mallory's server is not refused; its key document names carol (refused) as the owner.
    const pair = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
    const pem = await exportSpki(pair.publicKey);
    const mallory = Bun.serve({
      hostname: "127.0.0.43",
      port: 0,
      fetch: (request): Response =>
        new Response(JSON.stringify({ "@context": "https://w3id.org/security/v1", id: request.url, type: "CryptographicKey", owner: carol.actor, publicKeyPem: pem }), { headers: { "content-type": AP } }),
    });
    const keyId = new URL(`http://127.0.0.43:${mallory.port}/key`);
    try {
      const before = await traces(open);
      const follow = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${carol.base}/follows/by-mallory`, type: "Follow", actor: carol.actor, object: `${open.base}/users/alice` });
      const request = new Request(`${open.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP }, body: follow });
      const res = await fetch(await signRequest(request, pair.privateKey, keyId));
      expect(res.status).toBe(401);
      expect(await traces(open)).toEqual(before);
      expect(await count(open, "SELECT count(*) AS n FROM accounts WHERE domain IS NOT NULL")).toBe(0);
    } finally {
      mallory.stop(true);
    }
  });
});
