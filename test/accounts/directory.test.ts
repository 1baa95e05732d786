import { afterAll, beforeAll, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// GET /api/v1/directory: discoverable accounts, most recently active or newest first.
let server: TestServer;
let users: Record<string, TestUser> = {};

beforeAll(async () => {
  server = await startTestServer();
  for (const name of ["ann", "ben", "cai", "dee"]) users[name] = await createUser(server, name);
  expect((await users.dee!.client.patch("/api/v1/accounts/update_credentials", { json: { discoverable: false } })).status).toBe(200);
  // ben posted last, ann before him, cai never.
  await postStatus(users.ann!, { status: "ann was here" });
  server.clock.advance(1000);
  await postStatus(users.ben!, { status: "ben was here" });
});
afterAll(async () => {
  await server?.close();
});

const names = (body: { username: string }[]) => body.map((a) => a.username);

test("anonymous: discoverable accounts only, active first (never-posted last), or newest first; offset and limit page it", async () => {
  const anon = new Client(server.base);
  expect(names((await anon.get("/api/v1/directory")).body)).toEqual(["ben", "ann", "cai"]);
  expect(names((await anon.get("/api/v1/directory", { query: { order: "new" } })).body)).toEqual(["cai", "ben", "ann"]);
  expect(names((await anon.get("/api/v1/directory", { query: { offset: "1", limit: "1" } })).body)).toEqual(["ann"]);
  expect(names((await anon.get("/api/v1/directory", { query: { local: "true" } })).body)).toEqual(["ben", "ann", "cai"]);
  expect((await anon.get("/api/v1/directory")).body[0]).toMatchObject({ username: "ben", acct: "ben", discoverable: true });
});

test("signed in: without the reader, and without those it blocks or mutes", async () => {
  await users.ann!.client.post(`/api/v1/accounts/${users.ben!.id}/block`);
  expect(names((await users.ann!.client.get("/api/v1/directory")).body)).toEqual(["cai"]);
  await users.ann!.client.post(`/api/v1/accounts/${users.ben!.id}/unblock`);
  await users.ann!.client.post(`/api/v1/accounts/${users.cai!.id}/mute`);
  expect(names((await users.ann!.client.get("/api/v1/directory")).body)).toEqual(["ben"]);
});

test("WHITELIST_MODE: 401 for anonymous readers, as every public read", async () => {
  const closed = await startTestServer({ WHITELIST_MODE: "true" });
  try {
    const res = await new Client(closed.base).get("/api/v1/directory");
    expect([res.status, res.body]).toEqual([401, { error: "This API requires an authenticated user" }]);
  } finally {
    await closed.close();
  }
});
