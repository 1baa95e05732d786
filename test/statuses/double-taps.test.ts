import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * A client that sends Follow or Boost several times at once (a double tap, a retry while the
 * first is under way): the answers are the ones a single tap gets, and what is stored, counted
 * and notified is one follow or one boost. On PostgreSQL (the test mode) every request finds
 * nothing stored and writes at once (issue 31).
 */

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const TIMES = 5;
const notifications = async (user: TestUser, type: string) => ((await user.client.get("/api/v1/notifications")).body as { type: string; account: { id: string } }[]).filter((n) => n.type === type);

describe("double taps", () => {
  test("five follows at once: each answered following, one follow counted and notified", async () => {
    const answers = await Promise.all(Array.from({ length: TIMES }, () => bob.client.post(`/api/v1/accounts/${alice.id}/follow`, { json: { notify: true } })));
    expect(answers.map((r) => [r.status, r.body.following, r.body.notifying])).toEqual(Array(TIMES).fill([200, true, true]));
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(1);
    expect((await bob.client.get(`/api/v1/accounts/${bob.id}`)).body.following_count).toBe(1);
    expect((await notifications(alice, "follow")).map((n) => n.account.id)).toEqual([bob.id]);

    const unfollowed = await bob.client.post(`/api/v1/accounts/${alice.id}/unfollow`);
    expect(unfollowed.body).toMatchObject({ following: false, requested: false });
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(0);
  });

  test("five boosts at once: each answered with the one boost, counted and notified once; one unboost leaves none", async () => {
    const status = await postStatus(alice, { status: "boost me, once" });
    const answers = await Promise.all(Array.from({ length: TIMES }, () => bob.client.post(`/api/v1/statuses/${status.id}/reblog`)));
    expect(answers.map((r) => r.status)).toEqual(Array(TIMES).fill(200));
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
    expect(answers.map((r) => [r.body.reblog.id, r.body.reblogged])).toEqual(Array(TIMES).fill([status.id, true]));
    expect((await alice.client.get(`/api/v1/statuses/${status.id}`)).body.reblogs_count).toBe(1);
    expect((await bob.client.get(`/api/v1/accounts/${bob.id}`)).body.statuses_count).toBe(1);
    expect((await notifications(alice, "reblog")).map((n) => n.account.id)).toEqual([bob.id]);
    expect((await bob.client.get(`/api/v1/statuses/${status.id}/reblogged_by`)).body.map((a: { id: string }) => a.id)).toEqual([bob.id]);

    const undone = await bob.client.post(`/api/v1/statuses/${status.id}/unreblog`);
    expect(undone.body).toMatchObject({ id: status.id, reblogged: false, reblogs_count: 0 });
    expect((await bob.client.get(`/api/v1/accounts/${bob.id}/statuses`)).body).toEqual([]);
    expect((await bob.client.post(`/api/v1/statuses/${status.id}/unreblog`)).status).toBe(404);
  });
});
