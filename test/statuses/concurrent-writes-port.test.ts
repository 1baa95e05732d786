import { afterEach, describe, expect, test } from "bun:test";
import { polls, statuses } from "../../src/db/schema.ts";
import type { ApiError } from "../../src/errors.ts";
import { timeOfId } from "../../src/ids.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";
import { remoteNote, statusesOnPort } from "../support/statuses-on-port.ts";

/**
 * The statuses family's writes run several at once, on SQLite and on PostgreSQL (issue 31). On
 * PostgreSQL transactions run side by side (a pool, several processes), so what one reads may be
 * written by another before it writes: a poll's votes (a double click, several voters, the one
 * Create per chosen option that Mastodon sends at once) and a remote edit's quote (two Updates).
 * Each test starts its calls together and asserts that none failed unexpectedly and that the
 * rows and counts are those of the calls made one after another.
 */

afterEach(closePortArms);

const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

/** Rows the arm's SQLite services wrote (a local status and its poll), in the port's database too. */
async function copy(arm: PortArm) {
  if (arm.port.dialect !== "postgres") return;
  const db = arm.t.database.port.orm;
  await arm.port.orm.insert(arm.port.tables.statuses).values(await db.select().from(statuses)).onConflictDoNothing();
  const pollRows = await db.select().from(polls);
  if (pollRows.length > 0) await arm.port.orm.insert(arm.port.tables.polls).values(pollRows).onConflictDoNothing();
}

/** A local poll of alice's, on the port, with the family built over it. */
async function localPoll(a: PortArm, multiple: boolean) {
  const alice = await a.mirror(await a.t.local("alice"));
  const status = await a.t.post(alice, { text: "which?", poll: { options: ["a", "b", "c"], expiresIn: 3600, multiple } });
  await copy(a);
  const family = statusesOnPort(a);
  const voted: { accountId: number; choices: number[] }[] = [];
  family.events.within("poll.voted", (e) => void voted.push({ accountId: e.accountId, choices: e.choices }));
  const poll = (await family.polls.pollOf(status.id))!;
  const counts = () => a.port.get("SELECT tallies, votes_count, voters_count FROM polls WHERE id = ?", [poll.id]);
  const votes = async () => (await a.port.all<{ account_id: number; choice: number }>("SELECT account_id, choice FROM poll_votes ORDER BY account_id, choice")).map((v) => [v.account_id, v.choice]);
  return { ...family, poll, voted, counts, votes };
}

const note = remoteNote;

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the statuses family's writes at once on ${arm.name}`, () => {
    test("a double click on a vote: one vote counted, the other refused with Mastodon's 422, none failing otherwise", async () => {
      const a = await arm.open();
      const bob = await a.mirror(await a.t.local("bob"));
      const { polls, poll, voted, counts, votes } = await localPoll(a, false);
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => polls.vote(bob.id, poll.id, ["1"])));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results.filter((r) => r.status === "rejected")) {
        expect((r.reason as ApiError).status).toBe(422);
        expect((r.reason as ApiError).message).toBe("Validation failed: You have already voted on this poll");
      }
      expect(await votes()).toEqual([[bob.id, 1]]);
      expect(await counts()).toEqual({ tallies: "[0,1,0]", votes_count: 1, voters_count: 1 });
      expect(voted).toEqual([{ accountId: bob.id, choices: [1] }]);
    });

    test("a multiple choice voted at once by several voters, one remote voter's options each in a Create of its own: every vote counted, each voter once", async () => {
      const a = await arm.open();
      const bob = await a.mirror(await a.t.local("bob"));
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const dave = await a.mirror(await a.t.remote("dave", "other.example"));
      const { polls, poll, voted, counts, votes } = await localPoll(a, true);
      const results = await Promise.allSettled([
        // carol's server sends one Create per chosen option, all at once (Mastodon's way).
        polls.vote(carol.id, poll.id, ["0"]),
        polls.vote(carol.id, poll.id, ["1"]),
        polls.vote(carol.id, poll.id, ["2"]),
        polls.vote(dave.id, poll.id, ["2"]),
        polls.vote(dave.id, poll.id, ["0"]),
        polls.vote(bob.id, poll.id, ["0", "2"]),
      ]);
      expect(results.map((r) => r.status)).toEqual(Array(6).fill("fulfilled"));
      const sorted = [bob.id, carol.id, dave.id].sort((x, y) => x - y);
      const chosen: Record<number, number[]> = { [bob.id]: [0, 2], [carol.id]: [0, 1, 2], [dave.id]: [0, 2] };
      expect(await votes()).toEqual(sorted.flatMap((id) => chosen[id]!.map((c) => [id, c])));
      expect(await counts()).toEqual({ tallies: "[3,1,3]", votes_count: 7, voters_count: 3 });
      expect(voted).toHaveLength(6);
    });

    test("many remote statuses of one millisecond stored at once (a thread's replies fetched four at a time): each stored, under an id of that millisecond", async () => {
      const a = await arm.open();
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const { posting } = statusesOnPort(a);
      // Dated a minute back: the id is that millisecond's with random low bits (Mastodon's
      // Snowflake.id_at), and 300 draws of 4,096 meet each other about ten times.
      const at = a.t.clock.now() - 60_000;
      const results = await Promise.allSettled(Array.from({ length: 300 }, (_, n) => posting.publishRemote(note(a, carol, n, { createdAt: at }))));
      expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      const ids = results.map((r) => (r as PromiseFulfilledResult<{ id: number } | null>).value!.id);
      expect(new Set(ids).size).toBe(300);
      expect(ids.every((id) => timeOfId(id) === at)).toBe(true);
      expect(await count(a, "statuses")).toBe(300);
    });

    test("two remote edits adding a status's quote at once: stored and announced once, the other told null", async () => {
      const a = await arm.open();
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const { posting, quotes, events } = statusesOnPort(a);
      const accepted: number[] = [];
      events.within("quote.accepted", (e) => void accepted.push(e.quote.id));
      const quoted = (await posting.publishRemote(note(a, carol, 1)))!;
      const quoting = (await posting.publishRemote(note(a, carol, 2)))!;
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => quotes.attachRemote({ status: quoting, quoted, quotedUri: quoted.uri!, state: "accepted" })));
      expect(results.map((r) => r.status)).toEqual(Array(4).fill("fulfilled"));
      const stored = results.map((r) => (r as PromiseFulfilledResult<{ id: number } | null>).value).filter((v) => v !== null);
      expect(stored).toHaveLength(1);
      expect(await a.port.all("SELECT id FROM quotes WHERE status_id = ?", [quoting.id])).toEqual([{ id: stored[0]!.id }]);
      expect(accepted).toEqual([stored[0]!.id]);
      expect(await count(a, "quotes")).toBe(1);
    });

    test("pins at once past the third: two pinned, the others refused at Mastodon's limit of five", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const posted = [];
      for (let i = 0; i < 7; i++) posted.push(await a.t.post(alice, { text: `pin me ${i}` }));
      await copy(a);
      const { actions } = statusesOnPort(a);
      for (const status of posted.slice(0, 3)) await actions.pin(alice.id, status.id);
      const results = await Promise.allSettled(posted.slice(3).map((status) => actions.pin(alice.id, status.id)));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
      for (const r of results.filter((r) => r.status === "rejected")) expect(r.reason).toMatchObject({ status: 422, message: "Validation failed: Maximum number of pinned toots already reached" });
      expect(await count(a, "status_pins")).toBe(5);
    });

    test("a QuoteRequest delivered twice at once is answered once; another request under the same IRI is not answered, and fails nothing", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const quoted = await a.t.post(alice, { text: "quote me" });
      await copy(a);
      const { posting, quotes, events } = statusesOnPort(a);
      const answers: string[] = [];
      for (const type of ["quote.accepted", "quote.rejected"] as const) events.within(type, (e) => void answers.push(`${type} ${e.quote.id}`));
      const pending = async (n: number) => {
        const quoting = (await posting.publishRemote(note(a, carol, n)))!;
        return (await quotes.attachRemote({ status: quoting, quoted, quotedUri: quoted.uri ?? `${a.t.config.publicUrl}/statuses/${quoted.id}`, state: "pending" }))!;
      };
      const first = await pending(1);
      const request = "https://remote.example/users/carol/quote_requests/1";
      const twice = await Promise.allSettled([quotes.answerRequest(first.id, request), quotes.answerRequest(first.id, request)]);
      expect(twice.map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
      expect(twice.map((r) => (r as PromiseFulfilledResult<unknown>).value === null).sort()).toEqual([false, true]);
      expect(answers).toEqual([`quote.accepted ${first.id}`]);

      const second = await pending(2);
      expect(await quotes.answerRequest(second.id, request)).toBeNull();
      expect(await a.port.get("SELECT state, activity_uri FROM quotes WHERE id = ?", [second.id])).toEqual({ state: "pending", activity_uri: null });
      expect(answers).toHaveLength(1);
    });
  });
}
