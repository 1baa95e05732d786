import { afterAll, beforeAll, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// GET /api/v1/accounts/:id/followers and /following hide, from a signed-in viewer, the accounts
// it blocks, that block it, and that it mutes (Mastodon's not_excluded_by_account with
// excluded_from_timeline_account_ids), except on the viewer's own lists.
let server: TestServer;
const u: Record<string, TestUser> = {};

beforeAll(async () => {
  server = await startTestServer();
  for (const name of ["ann", "ben", "cai", "dee", "eve", "fay", "gus"]) u[name] = await createUser(server, name);
  // ben, cai, dee, fay and gus follow eve, and eve follows them back.
  for (const name of ["ben", "cai", "dee", "fay", "gus"]) {
    expect((await u[name]!.client.post(`/api/v1/accounts/${u.eve!.id}/follow`)).status).toBe(200);
    expect((await u.eve!.client.post(`/api/v1/accounts/${u[name]!.id}/follow`)).status).toBe(200);
  }
  // cai and ann follow each other: ann's own lists hold an account she mutes.
  expect((await u.cai!.client.post(`/api/v1/accounts/${u.ann!.id}/follow`)).status).toBe(200);
  expect((await u.ann!.client.post(`/api/v1/accounts/${u.cai!.id}/follow`)).status).toBe(200);
  // ann blocks ben, mutes cai, mutes gus for a minute; fay blocks ann.
  expect((await u.ann!.client.post(`/api/v1/accounts/${u.ben!.id}/block`)).status).toBe(200);
  expect((await u.ann!.client.post(`/api/v1/accounts/${u.cai!.id}/mute`)).status).toBe(200);
  expect((await u.ann!.client.post(`/api/v1/accounts/${u.gus!.id}/mute`, { json: { duration: 60 } })).status).toBe(200);
  expect((await u.fay!.client.post(`/api/v1/accounts/${u.ann!.id}/block`)).status).toBe(200);
});
afterAll(async () => {
  await server?.close();
});

const names = (body: { username: string }[]) => body.map((a) => a.username).sort();
const list = async (client: Client, id: string, direction: "followers" | "following", query: Record<string, string> = {}) => {
  const res = await client.get(`/api/v1/accounts/${id}/${direction}`, { query });
  expect(res.status).toBe(200);
  return res;
};

test("a signed-in viewer sees neither whom it blocks, who blocks it, nor whom it mutes on another account's lists", async () => {
  for (const direction of ["followers", "following"] as const) {
    expect(names((await list(u.ann!.client, u.eve!.id, direction)).body)).toEqual(["dee"]);
  }
});

test("everyone else sees the whole lists: anonymous readers and the list's owner", async () => {
  const all = ["ben", "cai", "dee", "fay", "gus"];
  for (const direction of ["followers", "following"] as const) {
    expect(names((await list(new Client(server.base), u.eve!.id, direction)).body)).toEqual(all);
    expect(names((await list(u.eve!.client, u.eve!.id, direction)).body)).toEqual(all);
    expect(names((await list(u.dee!.client, u.eve!.id, direction)).body)).toEqual(all);
  }
});

test("the viewer's own lists keep the accounts it mutes", async () => {
  expect(names((await list(u.ann!.client, u.ann!.id, "followers")).body)).toEqual(["cai"]);
  expect(names((await list(u.ann!.client, u.ann!.id, "following")).body)).toEqual(["cai"]);
  // Seen by dee, who mutes nobody, the same.
  expect(names((await list(u.dee!.client, u.ann!.id, "followers")).body)).toEqual(["cai"]);
});

test("a page is filled past the hidden accounts, and its next link leads past them too", async () => {
  const first = await list(u.ann!.client, u.eve!.id, "followers", { limit: "1" });
  expect(names(first.body)).toEqual(["dee"]);
  const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1];
  expect(next).toBeDefined();
  const rest = await u.ann!.client.get(next!);
  expect([rest.status, rest.body]).toEqual([200, []]);
});

test("a mute that has expired no longer hides", async () => {
  server.clock.advance(61_000);
  expect(names((await list(u.ann!.client, u.eve!.id, "followers")).body)).toEqual(["dee", "gus"]);
  expect(names((await list(u.ann!.client, u.eve!.id, "following")).body)).toEqual(["dee", "gus"]);
});
