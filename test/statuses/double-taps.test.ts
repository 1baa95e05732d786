import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
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
});
