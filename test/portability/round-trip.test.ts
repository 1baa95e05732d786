import { afterAll, beforeAll, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { finished, imported, loopbackOverHttp, upload } from "../support/imports.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Export on one Rookery, import on another: every list type comes back the same, and the
 * follows of a following import go over real federation (the accounts found through WebFinger).
 */
let a: TestServer;
let b: TestServer;
let alice: TestUser;
let carol: TestUser;
let bob: TestUser;
let zed: TestUser;

const env = { ALLOW_PRIVATE_ADDRESSES: "true", IMPORT_RATE_PER_HOST: "50/1", IMPORT_RATE: "50/1" };

beforeAll(async () => {
  [a, b] = await Promise.all([startTestServer({ HOST: "127.0.0.2", ...env }, { transport: loopbackOverHttp }), startTestServer({ HOST: "127.0.0.3", ...env }, { transport: loopbackOverHttp })]);
  alice = await createUser(a, "alice");
  carol = await createUser(a, "carol");
  bob = await createUser(b, "bob");
  // Blocked and muted from A, and local to B when the files come back there.
  await createUser(b, "dan");
  await createUser(b, "erin");
  zed = await createUser(b, "zed");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const FILES: [file: string, type: string][] = [
  ["following.csv", "following"],
  ["blocks.csv", "blocks"],
  ["mutes.csv", "mutes"],
  ["domain_blocks.csv", "domain_blocks"],
  ["bookmarks.csv", "bookmarks"],
  ["lists.csv", "lists"],
];

/** A file's lines, a header first where there is one, the rest in order (the two servers list by their own ids). */
const lines = (text: string) => {
  const all = text.trimEnd().split("\n");
  const header = /^(Account address|#)/.test(all[0]!) ? all.shift()! : null;
  return [header, ...all.sort()];
};

test("every list exported from one Rookery and imported on another comes back the same; the follows go over federation", async () => {
  const bHost = new URL(b.base).host;
  const lookup = async (user: TestUser, acct: string) => {
    const res = await user.client.get("/api/v1/accounts/lookup", { query: { acct } });
    if (res.status !== 200) throw new Error(`lookup of ${acct}: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  // On A: alice follows, blocks, mutes, blocks a domain, bookmarks and lists, across both servers.
  const remoteBob = await lookup(alice, `bob@${bHost}`);
  const remoteDan = await lookup(alice, `dan@${bHost}`);
  const remoteErin = await lookup(alice, `erin@${bHost}`);
  await alice.client.post(`/api/v1/accounts/${remoteBob}/follow`);
  await alice.client.post(`/api/v1/accounts/${carol.id}/follow`, { json: { notify: true, languages: ["en", "de"], reblogs: false } });
  await eventually(async () => (await alice.client.get("/api/v1/accounts/relationships", { query: { "id[]": remoteBob } })).body[0].following, "bob to accept alice");
  await alice.client.post(`/api/v1/accounts/${remoteDan}/block`);
  await alice.client.post(`/api/v1/accounts/${remoteErin}/mute`, { json: { notifications: false } });
  await alice.client.post("/api/v1/domain_blocks", { json: { domain: "spam.example" } });
  const bobPost = await postStatus(bob, { status: "from B" });
  const carolPost = await postStatus(carol, { status: "from A" });
  const found = await alice.client.get("/api/v2/search", { query: { q: bobPost.uri, resolve: "true", type: "statuses" } });
  await alice.client.post(`/api/v1/statuses/${found.body.statuses[0].id}/bookmark`);
  await alice.client.post(`/api/v1/statuses/${carolPost.id}/bookmark`);
  const list = await alice.client.post("/api/v1/lists", { json: { title: "Friends" } });
  await alice.client.post(`/api/v1/lists/${list.body.id}/accounts`, { json: { account_ids: [remoteBob, carol.id] } });

  const exported = new Map<string, string>();
  for (const [file] of FILES) exported.set(file, (await alice.client.get(`/api/v1/exports/${file}`)).text);
  expect(exported.get("following.csv")!.split("\n").length).toBe(4);

  // On B: zed takes each file in, as Mastodon's import page would send it.
  for (const [file, type] of FILES) {
    const report = await imported(zed, type, exported.get(file)!);
    expect([file, report.failed_items, report.failed_entries]).toEqual([file, 0, []]);
  }
  // carol is on A: zed's follow went there, and A's Accept came back.
  const carolOnB = await lookup(zed, `carol@${new URL(a.base).host}`);
  await eventually(async () => (await zed.client.get("/api/v1/accounts/relationships", { query: { "id[]": carolOnB } })).body[0].following, "carol's server to accept zed's follow");
  const followers = await carol.client.get(`/api/v1/accounts/${carol.id}/followers`);
  expect(followers.body.map((f: any) => f.acct).sort()).toEqual(["alice", `zed@${bHost}`]);

  for (const [file] of FILES) {
    const again = (await zed.client.get(`/api/v1/exports/${file}`)).text;
    expect([file, lines(again)]).toEqual([file, lines(exported.get(file)!)]);
  }
  const report = (await zed.client.get("/api/v1/imports")).body.find((i: any) => i.type === "following");
  expect(report).toMatchObject({ total_items: 2, imported_items: 2, awaiting_items: 0, failed_items: 0 });
});

test("a follow the other server refuses is reported as refused; one it has not answered as awaiting", async () => {
  const locked = await createUser(a, "locked", { locked: true });
  const quiet = await createUser(a, "quiet", { locked: true });
  const aHost = new URL(a.base).host;
  const res = await upload(zed, "following", `locked@${aHost}\nquiet@${aHost}\nnobody@${aHost}\n`);
  expect(res.status).toBe(202);
  const report = await finished(zed, res.body.id);
  expect(report).toMatchObject({ processed_items: 3, imported_items: 0, awaiting_items: 2, failed_items: 1, failures: { unknown_account: 1 } });
  const request = await eventually(async () => (await locked.client.get("/api/v1/follow_requests")).body[0], "the follow request to reach A");
  expect(request.acct).toBe(`zed@${new URL(b.base).host}`);
  await eventually(async () => (await quiet.client.get("/api/v1/follow_requests")).body.length === 1, "the other follow request to reach A");
  await locked.client.post(`/api/v1/follow_requests/${request.id}/reject`);
  const after = await eventually(async () => {
    const r = (await zed.client.get(`/api/v1/imports/${res.body.id}`)).body;
    return r.failures.refused === 1 ? r : null;
  }, "the Reject to reach B");
  expect(after).toMatchObject({ awaiting_items: 1, failed_items: 2 });
  expect(after.failed_entries).toEqual([
    { line: 1, entry: `locked@${aHost}`, reason: "refused", detail: "not followed: its server refused the follow, or it was undone since" },
    { line: 3, entry: `nobody@${aHost}`, reason: "unknown_account", detail: `${aHost} knows no account nobody` },
  ]);
});
