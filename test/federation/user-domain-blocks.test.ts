import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Person } from "@fedify/fedify/vocab";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, startFederatedPair } from "../support/federation.ts";
import type { TestServer } from "../support/server.ts";

// GET/POST/DELETE /api/v1/domain_blocks: a user hides a whole server from itself
// (Mastodon's AccountDomainBlock and AfterBlockDomainFromAccountService).
let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
let hostB: string;
let remoteBob: { id: number };

const relationship = async (user: TestUser, id: number) => (await user.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(id) } })).body[0];
const blocked = async (user: TestUser) => (await user.client.get("/api/v1/domain_blocks")).body;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
  hostB = new URL(b.base).hostname;
  remoteBob = (await a.federation!.resolveActor(`${b.base}/users/bob`))!;
  const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
  await alice.client.post(`/api/v1/accounts/${remoteBob.id}/follow`);
  await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
  await eventually(async () => {
    const r = await relationship(alice, remoteBob.id);
    return r.following && r.followed_by;
  }, "alice and bob follow each other");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe("a user blocks a domain", () => {
  test("POST answers {}; follows both ways end, the relationship shows domain_blocking, and the domain's statuses and mentions stay away", async () => {
    const before = await postStatus(bob, { status: "seen before the block", visibility: "public" });
    await eventually(async () => (await alice.client.get("/api/v1/timelines/home")).body.some((s: { uri: string }) => s.uri === before.uri), "bob's post in alice's home");

    const fromBob = async () => (await alice.client.get("/api/v1/notifications")).body.filter((n: { account: { id: string } }) => n.account.id === String(remoteBob.id)).map((n: { type: string }) => n.type);
    expect(await fromBob()).toEqual(["follow"]);
    const res = await alice.client.post("/api/v1/domain_blocks", { json: { domain: hostB } });
    expect([res.status, res.body]).toEqual([200, {}]);
    // The notifications its accounts caused go with the block (AfterBlockDomainFromAccountService).
    expect(await fromBob()).toEqual([]);
    expect(await blocked(alice)).toEqual([hostB]);
    const r = await relationship(alice, remoteBob.id);
    expect([r.domain_blocking, r.following, r.followed_by]).toEqual([true, false, false]);
    // Blocking again changes nothing.
    expect((await alice.client.post("/api/v1/domain_blocks", { form: { domain: hostB.toUpperCase() } })).body).toEqual({});
    expect(await blocked(alice)).toEqual([hostB]);

    // bob's later public post mentioning alice: in no timeline of hers, no notification.
    const after = await postStatus(bob, { status: `@alice@${new URL(a.base).host} after the block`, visibility: "public" });
    const stored = await eventually(() => a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [after.uri]), "bob's mention stored on A");
    for (const path of ["/api/v1/timelines/home", "/api/v1/timelines/public"]) {
      const uris = (await alice.client.get(path)).body.map((s: { uri: string }) => s.uri);
      expect([path, uris.includes(after.uri), uris.includes(before.uri)]).toEqual([path, false, false]);
    }
    const notified = (await alice.client.get("/api/v1/notifications")).body.some((n: { status?: { id: string } }) => n.status?.id === String(stored.id));
    expect(notified).toBe(false);
  });

  test("DELETE answers {} and lifts it; unblocking a domain not blocked, or no domain at all, changes nothing", async () => {
    expect((await alice.client.delete("/api/v1/domain_blocks", { json: { domain: "never.example" } })).body).toEqual({});
    expect(await blocked(alice)).toEqual([hostB]);
    const res = await alice.client.delete("/api/v1/domain_blocks", { json: { domain: hostB } });
    expect([res.status, res.body]).toEqual([200, {}]);
    expect(await blocked(alice)).toEqual([]);
    expect((await relationship(alice, remoteBob.id)).domain_blocking).toBe(false);
  });

  test("a domain typed in capitals, with a trailing dot or in Unicode is the domain; it covers accounts however their IRI spelled their host", async () => {
    const eve = (await a.federation!.storeActor(
      new Person({ id: new URL("https://SPELLED.example.:8443/users/eve"), preferredUsername: "eve", inbox: new URL("https://spelled.example.:8443/users/eve/inbox") }),
    ))!;
    expect(eve.domain).toBe("spelled.example:8443");
    for (const typed of ["Spelled.Example.", "Bücher.Example."]) expect((await alice.client.post("/api/v1/domain_blocks", { json: { domain: typed } })).body).toEqual({});
    expect(await blocked(alice)).toEqual(["xn--bcher-kva.example", "spelled.example"]);
    expect((await relationship(alice, eve.id)).domain_blocking).toBe(true);
    // A row stored before domains were normalized when stored (its host as the IRI spelled it): covered too.
    await a.database.port.run("UPDATE accounts SET domain = 'Spelled.Example.:8443' WHERE id = ?", [eve.id]);
    expect((await relationship(alice, eve.id)).domain_blocking).toBe(true);
    // Any spelling lifts it.
    for (const typed of ["SPELLED.example.", "xn--bcher-kva.example."]) expect((await alice.client.delete("/api/v1/domain_blocks", { json: { domain: typed } })).body).toEqual({});
    expect(await blocked(alice)).toEqual([]);
    expect((await relationship(alice, eve.id)).domain_blocking).toBe(false);
  });

  test("the list comes newest first in pages, with Mastodon's Link header", async () => {
    for (const domain of ["one.example", "two.example", "three.example"]) await alice.client.post("/api/v1/domain_blocks", { json: { domain } });
    const first = await alice.client.get("/api/v1/domain_blocks", { query: { limit: "2" } });
    expect(first.body).toEqual(["three.example", "two.example"]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1];
    expect(next).toBeDefined();
    const second = await alice.client.get(next!.replace(a.base, ""));
    expect(second.body).toEqual(["one.example"]);
    for (const domain of ["one.example", "two.example", "three.example"]) await alice.client.delete("/api/v1/domain_blocks", { json: { domain } });
  });

  test("errors: no token 401, a token without the scope 403, a blank or invalid domain 422 with Mastodon's words; nothing changes", async () => {
    const reader = await createUser(a, "reader", { scopes: "read" });
    const cases: [TestUser | null, Record<string, unknown>, number, string][] = [
      [null, { domain: "x.example" }, 401, "The access token is invalid"],
      [reader, { domain: "x.example" }, 403, "This action is outside the authorized scopes"],
      [alice, {}, 422, "Validation failed: Domain can't be blank"],
      [alice, { domain: "   " }, 422, "Validation failed: Domain can't be blank"],
      [alice, { domain: "https://x.example/path" }, 422, "Validation failed: Domain is invalid"],
      [alice, { domain: "exa mple.com" }, 422, "Validation failed: Domain is invalid"],
    ];
    for (const [user, json, status, error] of cases) {
      const res = user ? await user.client.post("/api/v1/domain_blocks", { json }) : await fetch(`${a.base}/api/v1/domain_blocks`, { method: "POST", body: JSON.stringify(json), headers: { "content-type": "application/json" } }).then(async (r) => ({ status: r.status, body: await r.json() }));
      expect([JSON.stringify(json), res.status, res.body]).toEqual([JSON.stringify(json), status, { error }]);
    }
    expect((await fetch(`${a.base}/api/v1/domain_blocks`)).status).toBe(401);
    expect(await blocked(alice)).toEqual([]);
    expect(await blocked(reader)).toEqual([]);
  });
  test("GET and DELETE errors: no token 401, a token without the scope 403, an app's own token 422; DELETE of nothing is {} (as Mastodon's); nothing changes", async () => {
    await alice.client.post("/api/v1/domain_blocks", { json: { domain: "kept.example" } });
    const writer = await createUser(a, "writer", { scopes: "write" });
    const reader = await createUser(a, "reader2", { scopes: "read" });
    const app = await appToken(a, "read write");
    const cases: [string, string | null, Record<string, unknown> | undefined, number, unknown][] = [
      ["GET", null, undefined, 401, { error: "The access token is invalid" }],
      ["GET", writer.token, undefined, 403, { error: "This action is outside the authorized scopes" }],
      ["GET", app.token, undefined, 422, { error: "This method requires an authenticated user" }],
      ["DELETE", null, { domain: "kept.example" }, 401, { error: "The access token is invalid" }],
      ["DELETE", reader.token, { domain: "kept.example" }, 403, { error: "This action is outside the authorized scopes" }],
      ["DELETE", app.token, { domain: "kept.example" }, 422, { error: "This method requires an authenticated user" }],
      ["POST", app.token, { domain: "other.example" }, 422, { error: "This method requires an authenticated user" }],
      // Mastodon's unblock_domain! finds nothing to destroy: {} and no change.
      ["DELETE", alice.token, {}, 200, {}],
      ["DELETE", alice.token, { domain: "" }, 200, {}],
      ["DELETE", alice.token, { domain: "not a domain" }, 200, {}],
    ];
    for (const [method, token, json, status, body] of cases) {
      const res = await alice.client.request(method, "/api/v1/domain_blocks", { token, json });
      expect([method, token === alice.token, JSON.stringify(json), res.status, res.body]).toEqual([method, token === alice.token, JSON.stringify(json), status, body]);
    }
    expect(await blocked(alice)).toEqual(["kept.example"]);
    expect(await blocked(reader)).toEqual([]);
    // The deprecated `follow` scope still covers both (Mastodon's doorkeeper_authorize! :follow).
    const legacy = await createUser(a, "legacy", { scopes: "follow" });
    expect((await legacy.client.post("/api/v1/domain_blocks", { form: { domain: "legacy.example" } })).body).toEqual({});
    expect((await legacy.client.get("/api/v1/domain_blocks")).body).toEqual(["legacy.example"]);
    await alice.client.delete("/api/v1/domain_blocks", { json: { domain: "kept.example" } });
  });
});
