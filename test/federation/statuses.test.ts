import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, startFederatedPair } from "../support/federation.ts";
import type { TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
let eve: TestUser;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
  eve = await createUser(b, "eve");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe("statuses travel to a follower on another server", () => {
  test("public, unlisted and private posts land in the follower's home; the federated timeline shows the public one, the local one none", async () => {
    const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
    await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
    await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteAlice.id) } })).body[0]?.following === true, "bob follows alice");

    const pub = await postStatus(alice, { status: "Hello from A! https://example.com/page #fedi", visibility: "public" });
    await postStatus(alice, { status: "unlisted news", visibility: "unlisted" });
    await postStatus(alice, { status: "for followers", visibility: "private" });
    await postStatus(alice, { status: "@alice a note to self", visibility: "direct" });

    const home = await eventually(async () => {
      const res = await bob.client.get("/api/v1/timelines/home");
      return res.body.length >= 3 ? res.body : null;
    }, "three statuses in bob's home");
    // Each status is its own delivery: they may arrive (and take their ids on B) in any order.
    expect(home.map((s: any) => [s.content, s.visibility]).sort((x: string[], y: string[]) => x[1]!.localeCompare(y[1]!))).toEqual([
      ["<p>for followers</p>", "private"],
      [expect.stringContaining("Hello from A!"), "public"],
      ["<p>unlisted news</p>", "unlisted"],
    ]);
    const received = home.find((s: any) => s.visibility === "public");
    const privateOne = home.find((s: any) => s.visibility === "private");
    expect(received.uri).toBe(pub.uri);
    expect(received.url).toBe(pub.url);
    expect(received.account.acct).toBe(`alice@${new URL(a.base).host}`);
    expect(received.content).toContain('href="https://example.com/page"');
    expect(received.tags.map((t: any) => t.name)).toEqual(["fedi"]);
    expect(received.created_at).toBe(pub.created_at);

    const federated = await bob.client.get("/api/v1/timelines/public");
    expect(federated.body.map((s: any) => s.uri)).toEqual([pub.uri]);
    expect((await bob.client.get("/api/v1/timelines/public", { query: { remote: "true" } })).body.map((s: any) => s.uri)).toEqual([pub.uri]);
    expect((await bob.client.get("/api/v1/timelines/public", { query: { local: "true" } })).body).toEqual([]);
    // eve follows nobody: the private status is not hers to see, on any timeline or by id.
    expect((await eve.client.get(`/api/v1/statuses/${privateOne.id}`)).status).toBe(404);
    expect((await eve.client.get("/api/v1/timelines/home")).body).toEqual([]);

    // Home feeds and notifications are for local accounts only: A keeps none for its remote
    // follower bob (backfilled on follow, or at each post), B none for alice (the author).
    const remoteAccounts = async (server: TestServer) => (await server.database.port.all<{ id: number }>("SELECT id FROM accounts WHERE domain IS NOT NULL")).map((r) => r.id);
    for (const server of [a, b]) {
      const ids = await remoteAccounts(server);
      expect(ids).not.toEqual([]);
      const among = `IN (${ids.map(() => "?").join(", ")})`;
      expect(await server.database.port.get(`SELECT count(*) AS n FROM home_feed WHERE account_id ${among}`, ids)).toEqual({ n: 0 });
      expect(await server.database.port.get(`SELECT count(*) AS n FROM notifications WHERE account_id ${among}`, ids)).toEqual({ n: 0 });
    }
  });

  test("a Create whose note is attributed to someone else is dropped, even from an account followed here", async () => {
    const mallory = await createUser(a, "mallory");
    const remoteMallory = (await b.federation!.resolveActor(`${a.base}/users/mallory`))!;
    await bob.client.post(`/api/v1/accounts/${remoteMallory.id}/follow`);
    await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteMallory.id) } })).body[0]?.following === true, "bob follows mallory");
    const before = (await b.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n;

    // mallory, signing with her own key, delivers a note claiming to be alice's.
    const { Create, Note } = await import("@fedify/fedify/vocab");
    const ctx = (await a.federation!.load()).federation.createContext(new URL(a.base), undefined);
    const forgedUri = `${a.base}/users/alice/statuses/424242`;
    const forged = new Note({ id: new URL(forgedUri), attribution: new URL(`${a.base}/users/alice`), content: "forged", tos: [new URL("https://www.w3.org/ns/activitystreams#Public")] });
    await ctx.sendActivity(
      { identifier: "mallory" },
      { id: new URL(`${b.base}/users/bob`), inboxId: new URL(`${b.base}/users/bob/inbox`) },
      new Create({ id: new URL(`${a.base}/users/mallory#forged`), actor: ctx.getActorUri("mallory"), object: forged, tos: forged.toIds }),
    );
    // A's delivery was answered (B handles what comes in before its 202); idle() leaves out
    // retries due later, which a pending() count would wait on.
    await a.federation!.idle();
    await b.federation!.idle();
    // mallory's real posts still arrive (the check that the forged one did not is then meaningful).
    const real = await postStatus(mallory, { status: "mallory's own", visibility: "public" });
    await eventually(() => b.database.port.get("SELECT 1 FROM statuses WHERE uri = ?", [real.uri]), "mallory's own post arrived");
    expect(await b.database.port.get("SELECT 1 FROM statuses WHERE uri = ?", [forgedUri])).toBeUndefined();
    expect((await b.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n).toBe(before + 1);
  });
});


describe("deletions travel too, and only the author's count", () => {
  test("mallory's Delete of alice's status changes nothing; alice's own Delete removes it on B", async () => {
    const post = await postStatus(alice, { status: "soon gone", visibility: "public" });
    const stored = await eventually(() => b.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [post.uri]), "alice's post arrived");

    const { Delete, Tombstone } = await import("@fedify/fedify/vocab");
    const ctx = (await a.federation!.load()).federation.createContext(new URL(a.base), undefined);
    await ctx.sendActivity(
      { identifier: "mallory" },
      { id: new URL(`${b.base}/users/bob`), inboxId: new URL(`${b.base}/users/bob/inbox`) },
      new Delete({ id: new URL(`${a.base}/users/mallory#delete-forged`), actor: ctx.getActorUri("mallory"), object: new Tombstone({ id: new URL(post.uri) }) }),
    );
    // A later post of mallory's arriving proves the forged Delete was handled before it.
    const marker = await postStatus(await tokenFor(a, "mallory"), { status: "after the forgery", visibility: "public" });
    await eventually(() => b.database.port.get("SELECT 1 FROM statuses WHERE uri = ?", [marker.uri]), "mallory's marker arrived");
    expect((await bob.client.get(`/api/v1/statuses/${stored.id}`)).status).toBe(200);

    expect((await alice.client.delete(`/api/v1/statuses/${post.id}`)).status).toBe(200);
    await eventually(async () => (await bob.client.get(`/api/v1/statuses/${stored.id}`)).status === 404, "alice's post gone on B");
    expect((await bob.client.get("/api/v1/timelines/home")).body.map((s: any) => s.uri)).not.toContain(post.uri);
  });
});

describe("edits travel as Update, and only the author's count", () => {
  test("alice's edit reaches B with its history; mallory's Updates of alice's status and profile change nothing", async () => {
    const post = await postStatus(alice, { status: "first version", visibility: "public" });
    const stored = await eventually(() => b.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [post.uri]), "post arrived");

    const { Update, Note, Person } = await import("@fedify/fedify/vocab");
    const ctx = (await a.federation!.load()).federation.createContext(new URL(a.base), undefined);
    const bobInbox = { id: new URL(`${b.base}/users/bob`), inboxId: new URL(`${b.base}/users/bob/inbox`) };
    const aliceUri = new URL(`${a.base}/users/alice`);
    await ctx.sendActivity({ identifier: "mallory" }, bobInbox, new Update({ id: new URL(`${a.base}/users/mallory#u1`), actor: ctx.getActorUri("mallory"), object: new Note({ id: new URL(post.uri), attribution: aliceUri, content: "<p>pwned</p>" }) }));
    await ctx.sendActivity({ identifier: "mallory" }, bobInbox, new Update({ id: new URL(`${a.base}/users/mallory#u2`), actor: ctx.getActorUri("mallory"), object: new Person({ id: aliceUri, preferredUsername: "alice", name: "pwned", inbox: new URL(`${a.base}/users/alice/inbox`) }) }));

    expect((await alice.client.put(`/api/v1/statuses/${post.id}`, { json: { status: "second version" } })).status).toBe(200);
    const edited = await eventually(async () => {
      const res = await bob.client.get(`/api/v1/statuses/${stored.id}`);
      return res.body.content === "<p>second version</p>" ? res.body : null;
    }, "the edit arrived");
    expect(edited.edited_at).not.toBeNull();
    const history = await bob.client.get(`/api/v1/statuses/${stored.id}/history`);
    expect(history.body.map((v: any) => v.content)).toEqual(["<p>first version</p>", "<p>second version</p>"]);
    // mallory's Updates were delivered before alice's edit (one queue, in order) and did nothing.
    expect(edited.account.display_name).toBe("");
    expect(JSON.stringify(history.body)).not.toContain("pwned");
  });
});

async function tokenFor(server: TestServer, username: string): Promise<TestUser> {
  const { services } = server.ctx;
  const account = (await services.accounts.getLocal(username))!;
  const { parseScopes } = await import("../../src/auth/scopes.ts");
  const { Client } = await import("../support/http.ts");
  const { app, clientSecret } = await services.applications.register({ name: "t", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" });
  const { accessToken } = await services.tokens.issue(app.id, account.id, parseScopes("read write"));
  return { account, id: String(account.id), token: accessToken, client: new Client(server.base, accessToken), app, clientSecret };
}
