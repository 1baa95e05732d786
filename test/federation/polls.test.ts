import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, getAp, startFederatedPair } from "../support/federation.ts";
import type { TestServer } from "../support/server.ts";
import { drain } from "../support/wait.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;

const statusByUri = (server: TestServer, uri: string) => server.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [uri]);

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
  const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
  await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
  await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteAlice.id) } })).body[0]?.following === true, "bob follows alice");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe("polls travel as Question", () => {
  test("alice's poll shows on B; bob's vote counts on A; when it ends, both sides show the final counts and bob is told", async () => {
    const post = await postStatus(alice, { status: "Tea or coffee?", visibility: "public", poll: { options: ["tea", "coffee"], expires_in: 3600 } });
    const question = await getAp(post.uri);
    expect(question.body).toMatchObject({ type: "Question", oneOf: [{ type: "Note", name: "tea", replies: { type: "Collection", totalItems: 0 } }, { type: "Note", name: "coffee", replies: { type: "Collection", totalItems: 0 } }], votersCount: 0 });

    const onB = await eventually(() => statusByUri(b, post.uri), "the poll on B");
    const shown = (await bob.client.get(`/api/v1/statuses/${onB.id}`)).body;
    expect(shown.poll).toMatchObject({ multiple: false, expired: false, votes_count: 0, options: [{ title: "tea", votes_count: 0 }, { title: "coffee", votes_count: 0 }], voted: false });
    expect(shown.poll.expires_at).toBe(post.poll.expires_at);

    const voted = await bob.client.post(`/api/v1/polls/${shown.poll.id}/votes`, { json: { choices: ["1"] } });
    expect(voted.status).toBe(200);
    expect(voted.body).toMatchObject({ voted: true, own_votes: [1] });
    const onA = await eventually(async () => {
      const poll = (await alice.client.get(`/api/v1/polls/${post.poll.id}`)).body;
      return poll.votes_count === 1 ? poll : null;
    }, "bob's vote counted on A");
    expect(onA).toMatchObject({ voters_count: 1, options: [{ title: "tea", votes_count: 0 }, { title: "coffee", votes_count: 1 }] });
    // A vote is no status: nothing of it shows on A but the count.
    expect(await a.database.port.get("SELECT count(*) AS n FROM statuses WHERE account_id <> ?", [alice.account.id])).toEqual({ n: 0 });

    // carl on A votes too: B hears of it only from the final counts A sends.
    const carl = await createUser(a, "carl");
    expect((await carl.client.post(`/api/v1/polls/${post.poll.id}/votes`, { json: { choices: ["0"] } })).status).toBe(200);

    // An hour later on both servers: A ends the poll and sends its final counts; B tells bob.
    a.clock.advance(3_601_000);
    b.clock.advance(3_601_000);
    await drain(a);
    await a.federation!.idle();
    await drain(b);
    const final = await eventually(async () => {
      const poll = (await bob.client.get(`/api/v1/statuses/${onB.id}`)).body.poll;
      return poll.expired && poll.votes_count === 2 ? poll : null;
    }, "the poll ended on B");
    expect(final).toMatchObject({ votes_count: 2, voters_count: 2, options: [{ votes_count: 1 }, { votes_count: 1 }] });
    const told = await eventually(async () => (await bob.client.get("/api/v1/notifications", { query: { "types[]": "poll" } })).body[0], "bob told the poll ended");
    expect(told.status.uri).toBe(post.uri);
    // Too late to vote now, on either side.
    expect((await bob.client.post(`/api/v1/polls/${shown.poll.id}/votes`, { json: { choices: ["0"] } })).status).toBe(422);
  });

  test("a poll of several choices is anyOf, shown as multiple; each choice is a vote", async () => {
    const post = await postStatus(alice, { status: "Which days?", visibility: "public", poll: { options: ["mon", "tue", "wed"], expires_in: 3600, multiple: true } });
    expect((await getAp(post.uri)).body.anyOf.map((o: any) => o.name)).toEqual(["mon", "tue", "wed"]);
    const onB = await eventually(() => statusByUri(b, post.uri), "the poll on B");
    const poll = (await bob.client.get(`/api/v1/statuses/${onB.id}`)).body.poll;
    expect(poll.multiple).toBe(true);
    expect((await bob.client.post(`/api/v1/polls/${poll.id}/votes`, { json: { choices: ["0", "2"] } })).status).toBe(200);
    const onA = await eventually(async () => {
      const p = (await alice.client.get(`/api/v1/polls/${post.poll.id}`)).body;
      return p.votes_count === 2 ? p : null;
    }, "both choices counted on A");
    expect(onA).toMatchObject({ voters_count: 1, options: [{ votes_count: 1 }, { votes_count: 0 }, { votes_count: 1 }] });
  });
});
