import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { drain } from "../support/wait.ts";

let server: TestServer;
let anon: Client;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  carol = await createUser(server, "carol");
});
afterAll(() => server.close());

async function poll(body: Record<string, unknown>) {
  const res = await alice.client.post("/api/v1/statuses", { json: { status: "vote!", ...body } });
  expect(res.status).toBe(200);
  return res.body.poll as { id: string; [k: string]: any };
}

describe("the Poll entity", () => {
  test("fields in Mastodon's order; voted and own_votes only for a signed-in viewer", async () => {
    const before = server.clock.now();
    const p = await poll({ poll: { options: ["red", "green"], expires_in: 3600 } });
    const after = server.clock.now();
    const res = await bob.client.get(`/api/v1/polls/${p.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["id", "expires_at", "expired", "multiple", "votes_count", "voters_count", "options", "emojis", "voted", "own_votes"]);
    expect(res.body).toMatchObject({ expired: false, multiple: false, votes_count: 0, voters_count: 0, voted: false, own_votes: [] });
    expect(res.body.options).toEqual([
      { title: "red", votes_count: 0 },
      { title: "green", votes_count: 0 },
    ]);
    // expires_in seconds from the moment it was posted.
    const expiresAt = Date.parse(res.body.expires_at);
    expect(expiresAt >= before + 3600 * 1000 && expiresAt <= after + 3600 * 1000).toBe(true);
    const anonymous = await anon.get(`/api/v1/polls/${p.id}`);
    expect(anonymous.body).not.toHaveProperty("voted");
    expect(anonymous.body).not.toHaveProperty("own_votes");
    expect((await anon.get("/api/v1/polls/12345")).status).toBe(404);
  });
});

describe("POST /api/v1/polls/:id/votes", () => {
  test("single choice: one vote, counted; a second vote refused", async () => {
    const p = await poll({ poll: { options: ["a", "b", "c"], expires_in: 3600 } });
    const vote = await bob.client.post(`/api/v1/polls/${p.id}/votes`, { form: { "choices[]": "1" } });
    expect(vote.status).toBe(200);
    expect(vote.body).toMatchObject({ votes_count: 1, voters_count: 1, voted: true, own_votes: [1] });
    expect(vote.body.options[1].votes_count).toBe(1);
    const again = await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [2] } });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ error: "Validation failed: You have already voted on this poll" });
    const two = await carol.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [0, 2] } });
    expect(two.status).toBe(422);
    expect(two.body).toEqual({ error: "Validation failed: You have already voted on this poll" });
    expect((await carol.client.get(`/api/v1/polls/${p.id}`)).body.voted).toBe(false);
  });

  test("multiple choice: several options, each once", async () => {
    const p = await poll({ poll: { options: ["a", "b", "c"], expires_in: 3600, multiple: true } });
    const vote = await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: ["0", "2"] } });
    expect(vote.body).toMatchObject({ votes_count: 2, voters_count: 1, own_votes: [0, 2] });
    const repeat = await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [0] } });
    expect(repeat.status).toBe(422);
    const more = await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [1] } });
    expect(more.body).toMatchObject({ votes_count: 3, voters_count: 1, own_votes: [0, 2, 1] });
  });

  test("votes sent at once: a double click counted once and answered Mastodon's 422, other voters all counted", async () => {
    const p = await poll({ poll: { options: ["a", "b", "c"], expires_in: 3600 } });
    const clicks = await Promise.all([1, 1, 1].map((choice) => bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [choice] } })));
    expect(clicks.map((res) => res.status).sort()).toEqual([200, 422, 422]);
    for (const res of clicks.filter((res) => res.status === 422)) expect(res.body).toEqual({ error: "Validation failed: You have already voted on this poll" });
    const voters = [carol, await createUser(server, "dora"), await createUser(server, "emil")];
    const votes = await Promise.all(voters.map((voter, i) => voter.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [i === 0 ? 2 : 0] } })));
    expect(votes.map((res) => res.status)).toEqual([200, 200, 200]);
    const counted = (await bob.client.get(`/api/v1/polls/${p.id}`)).body;
    expect(counted).toMatchObject({ votes_count: 4, voters_count: 4, own_votes: [1] });
    expect(counted.options.map((o: { votes_count: number }) => o.votes_count)).toEqual([2, 1, 1]);
  });

  test("bad choices, own polls, missing choices", async () => {
    const p = await poll({ poll: { options: ["a", "b"], expires_in: 3600 } });
    for (const choices of [[5], [-1], ["x"]]) {
      const res = await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "Validation failed: The chosen vote option does not exist" });
    }
    const own = await alice.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [0] } });
    expect(own.status).toBe(422);
    expect(own.body).toEqual({ error: "Validation failed: You cannot vote in your own polls" });
    const missing = await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: "param is missing or the value is empty: choices" });
    expect((await anon.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [0] } })).status).toBe(401);
    expect((await bob.client.post("/api/v1/polls/999/votes", { json: { choices: [0] } })).status).toBe(404);
    expect((await bob.client.get(`/api/v1/polls/${p.id}`)).body.votes_count).toBe(0);
  });

  test("hide_totals hides counts from others until the end", async () => {
    const p = await poll({ poll: { options: ["a", "b"], expires_in: 300, hide_totals: true } });
    await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [0] } });
    const hidden = await carol.client.get(`/api/v1/polls/${p.id}`);
    expect(hidden.body.options).toEqual([
      { title: "a", votes_count: null },
      { title: "b", votes_count: null },
    ]);
    expect((await alice.client.get(`/api/v1/polls/${p.id}`)).body.options[0].votes_count).toBe(1);
    server.clock.advance(301 * 1000);
    const ended = await carol.client.get(`/api/v1/polls/${p.id}`);
    expect(ended.body.expired).toBe(true);
    expect(ended.body.options[0].votes_count).toBe(1);
  });
});

describe("poll end", () => {
  test("after its time: no more votes, and author and voters are notified once", async () => {
    const p = await poll({ poll: { options: ["a", "b"], expires_in: 600 } });
    await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [1] } });
    server.clock.advance(601 * 1000);
    await drain(server);
    const late = await carol.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [0] } });
    expect(late.status).toBe(422);
    expect(late.body).toEqual({ error: "Validation failed: The poll has already ended" });
    for (const user of [alice, bob]) {
      const notes = await user.client.get("/api/v1/notifications", { query: { "types[]": "poll" } });
      const mine = notes.body.filter((n: any) => n.status.poll.id === p.id);
      expect(mine).toHaveLength(1);
      expect(mine[0].account.id).toBe(alice.id);
      expect(mine[0].status.poll.expired).toBe(true);
    }
    expect((await carol.client.get("/api/v1/notifications", { query: { "types[]": "poll" } })).body).toEqual([]);
  });

  test("a poll that ended while the server was down is announced at start", async () => {
    const p = await poll({ poll: { options: ["a", "b"], expires_in: 900 } });
    await bob.client.post(`/api/v1/polls/${p.id}/votes`, { json: { choices: [0] } });
    const restarted = await server.restart(() => server.clock.advance(901 * 1000));
    try {
      await drain(restarted);
      const notes = await new Client(restarted.base, bob.token).get("/api/v1/notifications", { query: { "types[]": "poll" } });
      // Once, for the voter, and the poll in it ended.
      const mine = notes.body.filter((n: any) => n.status.poll.id === p.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ type: "poll", account: { id: alice.id }, status: { poll: { id: p.id, expired: true } } });
    } finally {
      server = restarted;
    }
  });
});
