import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateCryptoKeyPair, signRequest } from "@fedify/fedify";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { AP, getAp } from "../support/federation.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// WHITELIST_MODE (Mastodon's LIMITED_FEDERATION_MODE, which implies its secure mode): only
// signed requests from allowed servers read anything beyond the bare actor.

let w: TestServer;
let b: TestServer;
let wendy: TestUser;
let bob: TestUser;
let post: { id: string; uri: string };

beforeAll(async () => {
  [w, b] = await Promise.all([
    startTestServer({ HOST: "127.0.0.44", ALLOW_PRIVATE_ADDRESSES: "true", WHITELIST_MODE: "true" }),
    startTestServer({ HOST: "127.0.0.45", ALLOW_PRIVATE_ADDRESSES: "true" }),
  ]);
  await w.ctx.services.federationDomains.allow(new URL(b.base).hostname);
  wendy = await createUser(w, "wendy");
  bob = await createUser(b, "bob");
  expect((await wendy.client.patch("/api/v1/accounts/update_credentials", { json: { note: "For allowed servers only" } })).status).toBe(200);
  post = (await postStatus(wendy, { status: "allowed readers only", visibility: "public" })) as { id: string; uri: string };
  expect((await wendy.client.post(`/api/v1/statuses/${post.id}/pin`)).status).toBe(200);
});
afterAll(async () => {
  await w?.close();
  await b?.close();
});

/** A GET signed with bob's key, as B (allowed) signs it. */
async function signedByBob(url: string, accept = AP) {
  const rsa = (await b.federation!.keyPairs(bob.account.id)).find((k) => k.algorithm === "RSASSA-PKCS1-v1_5")!;
  return fetch(await signRequest(new Request(url, { headers: { accept } }), rsa.privateKey, new URL(`${b.base}/users/bob#main-key`)));
}

const collections = () => [
  `${w.base}/users/wendy/outbox`,
  `${w.base}/users/wendy/outbox?cursor=`,
  `${w.base}/users/wendy/followers`,
  `${w.base}/users/wendy/followers?cursor=`,
  `${w.base}/users/wendy/following`,
  `${w.base}/users/wendy/featured`,
  post.uri,
  `${w.base}/@wendy/${post.id}`,
];

describe("WHITELIST_MODE: federation reads", () => {
  test("unsigned: the bare actor, and 401 with Mastodon's words for every collection and status", async () => {
    for (const url of [`${w.base}/users/wendy`, `${w.base}/@wendy`]) {
      const bare = await getAp(url);
      expect([url, bare.status, bare.body.publicKey?.id, bare.body.inbox]).toEqual([url, 200, `${w.base}/users/wendy#main-key`, `${w.base}/users/wendy/inbox`]);
      expect([bare.body.summary, bare.body.name, bare.body.outbox, bare.body.followers, bare.body.featured]).toEqual([undefined, undefined, undefined, undefined, undefined]);
    }
    for (const url of collections()) {
      const res = await getAp(url);
      expect([url, res.status, res.body]).toEqual([url, 401, { error: "Request not signed" }]);
    }
  });

  test("signed by an allowed server: the whole actor, the collections and the statuses", async () => {
    const actor = await (await signedByBob(`${w.base}/users/wendy`)).json();
    expect(actor.summary).toContain("For allowed servers only");
    // (Not /@wendy/:id: the edge hands it to Fedify as /users/wendy/statuses/:id, which the
    // signature does not cover.)
    for (const url of collections().filter((u) => !u.includes("/@"))) expect([url, (await signedByBob(url)).status]).toEqual([url, 200]);
    expect((await (await signedByBob(post.uri)).json()).content).toContain("allowed readers only");
    expect((await (await signedByBob(`${w.base}/users/wendy/featured`)).json()).orderedItems).toHaveLength(1);
  });

  test("signed from a server not allowed: 403 with Mastodon's words, for the actor as for the rest", async () => {
    const key = (await generateCryptoKeyPair("RSASSA-PKCS1-v1_5")).privateKey;
    const keyId = new URL("https://not-allowed.example/users/mal#main-key");
    for (const url of [`${w.base}/users/wendy`, ...collections()]) {
      const res = await fetch(await signRequest(new Request(url, { headers: { accept: AP } }), key, keyId));
      expect([url, res.status, await res.json()]).toEqual([url, 403, { error: `Public key not found for key ${keyId.href}` }]);
    }
  });
});

describe("WHITELIST_MODE: what the instance tells about itself", () => {
  test("peers and activity: 401 without a user (Mastodon's words), 404 with nothing in it for a user", async () => {
    const app = await appToken(w, "read");
    for (const path of ["/api/v1/instance/peers", "/api/v1/instance/activity"]) {
      for (const token of [null, app.token]) {
        const anonymous = await new Client(w.base).get(path, { token });
        expect([path, token === null, anonymous.status, anonymous.body]).toEqual([path, token === null, 401, { error: "This API requires an authenticated user" }]);
      }
      const signedIn = await wendy.client.get(path);
      expect([path, signedIn.status, signedIn.text]).toEqual([path, 404, ""]);
    }
    // Outside WHITELIST_MODE, both are public.
    for (const path of ["/api/v1/instance/peers", "/api/v1/instance/activity"]) expect([path, (await new Client(b.base).get(path)).status]).toEqual([path, 200]);
  });

  test("nodeinfo stays public, as Mastodon's in limited federation mode: servers read it to know what they talk to", async () => {
    const info = await new Client(w.base).get("/nodeinfo/2.0");
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ version: "2.0", software: { name: "rookery" }, protocols: ["activitypub"] });
  });
});
