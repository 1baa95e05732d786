import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { createStaff } from "../support/staff.ts";

// Where a suspended or limited account is (not) seen, read by others: Mastodon's
// StatusPolicy (a suspended author's statuses are nobody's), PublicFeed (neither suspended
// nor limited accounts in public timelines), account search and the directory.
let server: TestServer;
let admin: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  admin = await createStaff(server, "adam", "admin");
  viewer = await createUser(server, "vera");
});
afterAll(() => server?.close());

const ids = (body: { id: string }[]) => body.map((s) => s.id);

async function seenBy(user: TestUser, author: TestUser, post: { id: string }) {
  const [home, pub, local, tag, search, directory, status] = await Promise.all([
    user.client.get("/api/v1/timelines/home"),
    user.client.get("/api/v1/timelines/public"),
    user.client.get("/api/v1/timelines/public", { query: { local: "true" } }),
    user.client.get("/api/v1/timelines/tag/hidden"),
    user.client.get("/api/v2/search", { query: { q: author.account.username, type: "accounts" } }),
    user.client.get("/api/v1/directory", { query: { local: "true" } }),
    user.client.get(`/api/v1/statuses/${post.id}`),
  ]);
  return {
    home: ids(home.body).includes(post.id),
    public: ids(pub.body).includes(post.id),
    local: ids(local.body).includes(post.id),
    tag: ids(tag.body).includes(post.id),
    search: ids(search.body.accounts).includes(author.id),
    directory: ids(directory.body).includes(author.id),
    status: status.status === 200,
  };
}

describe("suspended and limited accounts, as others see them", () => {
  test("suspended: nowhere, not even to followers; unsuspended: everywhere again", async () => {
    const sue = await createUser(server, "sue");
    await viewer.client.post(`/api/v1/accounts/${sue.id}/follow`);
    const post = await postStatus(sue, { status: "out in the open #hidden" });
    const everywhere = { home: true, public: true, local: true, tag: true, search: true, directory: true, status: true };
    expect(await seenBy(viewer, sue, post)).toEqual(everywhere);
    await admin.client.post(`/api/v1/admin/accounts/${sue.id}/action`, { json: { type: "suspend" } });
    expect(await seenBy(viewer, sue, post)).toEqual({ home: false, public: false, local: false, tag: false, search: false, directory: false, status: false });
    await admin.client.post(`/api/v1/admin/accounts/${sue.id}/unsuspend`);
    expect(await seenBy(viewer, sue, post)).toEqual(everywhere);
  });

  test("limited: out of public timelines and the directory; followers still see it at home, and anyone by link and search", async () => {
    const lou = await createUser(server, "lou");
    await viewer.client.post(`/api/v1/accounts/${lou.id}/follow`);
    const post = await postStatus(lou, { status: "quietly #hidden" });
    await admin.client.post(`/api/v1/admin/accounts/${lou.id}/action`, { json: { type: "silence" } });
    expect(await seenBy(viewer, lou, post)).toEqual({ home: true, public: false, local: false, tag: false, search: true, directory: false, status: true });
  });
});
