import { afterAll, beforeAll, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/wait.ts";
import { databaseFingerprint } from "../support/fingerprint.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Path parameters whose percent-escapes are no UTF-8 (`%FF%FE`, a lone `%`): the router cannot
 * decode them, and no record has such a name, on any route (404, as v1's ids always were).
 */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let groupKey: string;

const fingerprint = () => databaseFingerprint(server);

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  const status = await postStatus(alice, { status: "hello" });
  expect((await bob.client.post(`/api/v1/statuses/${status.id}/favourite`)).status).toBe(200);
  const groups = await eventually(async () => {
    const res = await alice.client.get("/api/v2/notifications");
    return res.body.notification_groups?.length ? res.body.notification_groups : null;
  }, "alice's favourite notification");
  groupKey = groups[0].group_key;
});
afterAll(() => server.close());

const BAD = ["%FF%FE", "%E2%82", "100%", "%"];

const ROUTES: [method: string, path: (bad: string) => string][] = [
  ["GET", (b) => `/api/v2/notifications/${b}`],
  ["GET", (b) => `/api/v2/notifications/${b}/accounts`],
  ["POST", (b) => `/api/v2/notifications/${b}/dismiss`],
  ["GET", (b) => `/api/v1/notifications/${b}`],
  ["GET", (b) => `/api/v1/statuses/${b}`],
  ["GET", (b) => `/api/v1/tags/${b}`],
  ["POST", (b) => `/api/v1/tags/${b}/follow`],
  ["GET", (b) => `/api/v1/timelines/tag/${b}`],
  ["PUT", (b) => `/api/v1/announcements/1/reactions/${b}`],
  ["GET", (b) => `/@${b}`],
  ["GET", (b) => `/tags/${b}`],
  ["GET", (b) => `/users/${b}`],
  ["GET", (b) => `/users/alice/statuses/${b}`],
];

test("a path parameter that is no UTF-8 is 404 Record not found on every route, and nothing changes", async () => {
  const before = await fingerprint();
  for (const [method, path] of ROUTES) {
    for (const bad of BAD) {
      for (const accept of ["application/json", "application/activity+json"]) {
        const res = await alice.client.request(method, path(bad), { headers: { accept } });
        expect({ method, path: path(bad), accept, status: res.status, body: res.body }).toEqual({
          method,
          path: path(bad),
          accept,
          status: 404,
          body: { error: "Record not found" },
        });
      }
    }
  }
  expect(await fingerprint()).toBe(before);
});

test("a path parameter is decoded once, by the router: %25 is a percent sign (no tag has one), %2525 is not decoded again", async () => {
  const before = await fingerprint();
  for (const bad of ["%25", "%2525", "%25FF"]) {
    for (const [path, status] of [
      [`/api/v1/timelines/tag/${bad}`, 200],
      [`/tags/${bad}`, 200],
      [`/@alice/tagged/${bad}`, 200],
      [`/api/v1/tags/${bad}`, 404],
      [`/api/v1/announcements/1/reactions/${bad}`, 404],
    ] as const) {
      const method = path.includes("reactions") ? "PUT" : "GET";
      const res = await alice.client.request(method, path, { headers: { accept: "text/html" } });
      expect([path, res.status]).toEqual([path, status]);
      if (path.startsWith("/api/v1/timelines")) expect(res.body).toEqual([]);
      if (status === 404) expect(res.body).toEqual({ error: "Record not found" });
    }
  }
  expect(await fingerprint()).toBe(before);
});

test("the same routes still answer a well-formed escape", async () => {
  const group = await alice.client.get(`/api/v2/notifications/${encodeURIComponent(groupKey)}`);
  expect(group.status).toBe(200);
  expect(group.body.notification_groups[0].group_key).toBe(groupKey);
  const tag = await alice.client.post(`/api/v1/tags/${encodeURIComponent("ねこ")}/follow`);
  expect(tag.status).toBe(200);
  expect(tag.body).toMatchObject({ name: "ねこ", following: true });
  const cats = await postStatus(alice, { status: "#ねこ time" });
  const tagged = await alice.client.get(`/api/v1/timelines/tag/${encodeURIComponent("ねこ")}`);
  expect(tagged.body.map((s: { id: string }) => s.id)).toEqual([cats.id]);
  const page = await alice.client.get(`/tags/${encodeURIComponent("ねこ")}`, { headers: { accept: "text/html" } });
  expect(page.status).toBe(200);
  expect(page.text).toContain(`/@alice/${cats.id}"`);
  const profile = await alice.client.get(`/@alice/tagged/${encodeURIComponent("ねこ")}`, { headers: { accept: "text/html" } });
  expect(profile.status).toBe(200);
  expect(profile.text).toContain(`/@alice/${cats.id}"`);
  expect(profile.text).not.toContain("hello");
  const dismissed = await alice.client.post(`/api/v2/notifications/${encodeURIComponent(groupKey)}/dismiss`);
  expect(dismissed.status).toBe(200);
  expect((await alice.client.get("/api/v2/notifications")).body.notification_groups).toEqual([]);
});
