import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Note, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startFederatedPair } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import type { TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const search = (user: TestUser, q: string, extra: Record<string, string> = {}) => user.client.get("/api/v2/search", { query: { q, ...extra } });
const counts = (server: TestServer) => server.database.port.get("SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM statuses) AS statuses");

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
  receiver = await startReceiver("127.0.0.6");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  receiver?.stop();
});

describe("search with resolve=true fetches what other servers have", () => {
  test("a status URL: without resolve nothing is found or stored; with it the status and its author are stored and shown", async () => {
    const post = await postStatus(alice, { status: "Find me #searchable", visibility: "public" });
    const before = await counts(b);
    expect((await search(bob, post.uri)).body).toEqual({ accounts: [], statuses: [], hashtags: [] });
    expect(await counts(b)).toEqual(before);

    const found = await search(bob, post.uri, { resolve: "true" });
    expect(found.status).toBe(200);
    expect(found.body.accounts).toEqual([]);
    expect(found.body.statuses).toHaveLength(1);
    expect(found.body.statuses[0]).toMatchObject({ uri: post.uri, url: post.url, visibility: "public", account: { acct: `alice@${new URL(a.base).host}` } });
    expect(found.body.statuses[0].tags.map((t: any) => t.name)).toEqual(["searchable"]);
    // Stored: a second search finds the same status (same id), and nothing more is stored.
    const stored = await counts(b);
    const again = await search(bob, post.uri, { resolve: "true", type: "statuses" });
    expect(again.body.statuses.map((s: any) => s.id)).toEqual([found.body.statuses[0].id]);
    expect(await counts(b)).toEqual(stored);
    expect((await bob.client.get(`/api/v1/statuses/${found.body.statuses[0].id}`)).status).toBe(200);
  });

  test("an actor URL resolves to the account; stored accounts are then found by name and by handle without resolve", async () => {
    const carla = await createUser(a, "carla");
    const found = await search(bob, `${a.base}/users/carla`, { resolve: "true" });
    expect(found.body.accounts).toHaveLength(1);
    expect(found.body.accounts[0]).toMatchObject({ username: "carla", acct: `carla@${new URL(a.base).host}`, url: `${a.base}/@carla` });
    void carla;
    const byName = await search(bob, "carl", { type: "accounts" });
    expect(byName.body.accounts.map((x: any) => x.acct)).toEqual([`carla@${new URL(a.base).host}`]);
    const byHandle = await search(bob, `@carla@${new URL(a.base).host}`);
    expect(byHandle.body.accounts.map((x: any) => x.acct)).toEqual([`carla@${new URL(a.base).host}`]);
    const v1 = await bob.client.get("/api/v1/accounts/search", { query: { q: `carla@${new URL(a.base).host}` } });
    expect(v1.body.map((x: any) => x.acct)).toEqual([`carla@${new URL(a.base).host}`]);
    // A handle never stored is not found without resolve, and nothing is stored for it.
    const before = await counts(b);
    expect((await search(bob, `@nobody@${new URL(a.base).host}`)).body.accounts).toEqual([]);
    expect(await counts(b)).toEqual(before);
  });

  test("a private status, a missing one, and a Note claiming an author on another server resolve to nothing, and nothing is stored", async () => {
    const secret = await postStatus(alice, { status: "followers only", visibility: "private" });
    const forged = receiver.serveNote("forged", (id) => new Note({ id, attribution: new URL(`${a.base}/users/alice`), content: "<p>words alice never wrote</p>", to: PUBLIC_COLLECTION }));
    // The forged Note is really there to fetch: only its claim of authorship keeps it out.
    const served = await fetch(forged, { headers: { accept: "application/activity+json" } });
    expect(served.status).toBe(200);
    expect((await served.json()).attributedTo).toBe(`${a.base}/users/alice`);
    const before = await counts(b);
    for (const url of [secret.uri, `${a.base}/users/alice/statuses/1`, forged]) {
      const res = await search(bob, url, { resolve: "true" });
      expect([url, res.status, res.body]).toEqual([url, 200, { accounts: [], statuses: [], hashtags: [] }]);
    }
    expect(await counts(b)).toEqual(before);
    expect(await b.database.port.get("SELECT 1 FROM statuses WHERE uri = ?", [forged])).toBeUndefined();
  });

  test("resolve=true needs a signed-in user (401), as in Mastodon", async () => {
    const res = await fetch(`${b.base}/api/v2/search?q=${encodeURIComponent(`${a.base}/users/alice`)}&resolve=true`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "Search queries that resolve remote resources are not supported without authentication" });
  });
});

describe("a handle is looked up however its domain is spelt", () => {
  test("capitals, a trailing dot, a port and an IDN in Unicode find the account stored under its normal domain; the server's own domain spelt so finds the local one", async () => {
    const { Person } = await import("@fedify/fedify/vocab");
    const stored = async (id: string) => (await b.federation!.storeActor(new Person({ id: new URL(id), preferredUsername: new URL(id).pathname.split("/").pop(), inbox: new URL(`${id}/inbox`) })))!;
    const dora = await stored("https://xn--bcher-kva.example/users/dora");
    const eli = await stored("https://social.example:8443/users/eli");
    expect([dora.domain, eli.domain]).toEqual(["xn--bcher-kva.example", "social.example:8443"]);
    const before = await counts(b);
    for (const [q, id] of [
      ["dora@bücher.example", dora.id],
      ["@Dora@BÜCHER.Example.", dora.id],
      ["dora@xn--bcher-kva.example", dora.id],
      ["eli@Social.Example.:8443", eli.id],
      [`bob@${new URL(b.base).host.toUpperCase()}`, bob.account.id],
    ] as const) {
      const found = await search(bob, q, { type: "accounts" });
      expect([q, found.status, found.body.accounts.map((x: { id: string }) => x.id)]).toEqual([q, 200, [String(id)]]);
      const lookup = await bob.client.get("/api/v1/accounts/search", { query: { q } });
      expect([q, lookup.body.map((x: { id: string }) => x.id)]).toEqual([q, [String(id)]]);
    }
    // Another port is another account; nothing was fetched or stored by looking.
    expect((await search(bob, "eli@social.example", { type: "accounts" })).body.accounts).toEqual([]);
    expect(await counts(b)).toEqual(before);
  });
});
