import { afterEach, describe, expect, test } from "bun:test";
import { polls, statuses } from "../../src/db/schema.ts";
import type { ApiError } from "../../src/errors.ts";
import { NewStatuses, newStatusRow } from "../../src/services/statuses/new-status.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";
import { remoteNote, statusesOnPort } from "../support/statuses-on-port.ts";

/**
 * The statuses family's remote writes on the database port (issue 31): what the inbox writes
 * for a Create (publishRemote), an Update (applyRemoteEdit, applyRemoteQuotePolicy, a poll's
 * counts), a vote in a local poll, and a Delete or an Undo of an Announce (RemovalService), on
 * SQLite and on PostgreSQL. Their behaviour over federation is tested in test/federation; this
 * holds their SQL on both databases. As in statuses-port.test.ts, the collaborators not converted
 * yet (the reader, moderation, media, quotes, counters) read the arm's SQLite services, and the
 * converted services get an event bus of their own.
 */

afterEach(closePortArms);

const rejection = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as ApiError);
const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

const family = statusesOnPort;

const note = remoteNote;

/** Rows the arm's SQLite services wrote, in the port's database too (the reader reads SQLite). */
async function copy(arm: PortArm) {
  if (arm.port.dialect !== "postgres") return;
  const db = arm.t.database.port.orm;
  const statusRows = await db.select().from(statuses);
  if (statusRows.length) await arm.port.orm.insert(arm.port.tables.statuses).values(statusRows).onConflictDoNothing();
  const pollRows = await db.select().from(polls);
  if (pollRows.length) await arm.port.orm.insert(arm.port.tables.polls).values(pollRows).onConflictDoNothing();
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the statuses family's remote writes on ${arm.name}`, () => {
    test("a remote Create: its row, mention, tag, media, poll and backfill mark written; a reply that came first adopted; the same IRI again writes nothing", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const { posting, events } = family(a);
      const created: { id: number; backfill?: boolean }[] = [];
      events.within("status.created", (e) => void created.push({ id: e.status.id, ...(e.backfill ? { backfill: true } : {}) }));

      // The reply arrives before its parent: kept with the parent's IRI, linked when it comes.
      const parentUri = "https://remote.example/users/carol/statuses/1";
      const reply = (await posting.publishRemote(note(a, carol, 2, { inReplyToUri: parentUri })))!;
      expect(await a.port.get("SELECT in_reply_to_id, in_reply_to_uri FROM statuses WHERE id = ?", [reply.id])).toEqual({ in_reply_to_id: null, in_reply_to_uri: parentUri });

      const hour = 3_600_000;
      const row = (await posting.publishRemote(
        note(a, carol, 1, {
          createdAt: a.t.clock.now() - hour,
          tags: ["port"],
          mentions: [{ id: alice.id, username: "alice" }],
          media: [{ type: "image", url: "https://remote.example/media/1.png", description: "a picture", blurhash: null, meta: { original: { width: 2, height: 1, size: "2x1", aspect: 2 } } }],
          poll: { options: ["yes", "no"], tallies: [3, 1], multiple: false, expiresAt: a.t.clock.now() + hour, votersCount: null, closedAt: null },
          backfill: true,
        }),
      ))!;
      expect(created).toEqual([{ id: reply.id }, { id: row.id, backfill: true }]);
      // Dated as its server said: its id sorts it an hour back.
      expect(row.id).toBeLessThan(reply.id);
      expect(await a.port.get("SELECT account_id, uri, visibility, has_media, has_poll FROM statuses WHERE id = ?", [row.id])).toMatchObject({ account_id: carol.id, uri: parentUri, visibility: "public" });
      expect(await a.port.all("SELECT account_id FROM mentions WHERE status_id = ?", [row.id])).toEqual([{ account_id: alice.id }]);
      expect(await a.port.all("SELECT t.name FROM status_tags st JOIN tags t ON t.id = st.tag_id WHERE st.status_id = ?", [row.id])).toEqual([{ name: "port" }]);
      expect(await a.port.all("SELECT position, type, processing, description, remote_url FROM media_attachments WHERE status_id = ?", [row.id])).toEqual([
        { position: 0, type: "image", processing: "complete", description: "a picture", remote_url: "https://remote.example/media/1.png" },
      ]);
      expect(await a.port.get("SELECT tallies, votes_count, voters_count FROM polls WHERE status_id = ?", [row.id])).toEqual({ tallies: "[3,1]", votes_count: 4, voters_count: 4 });
      expect(await a.port.all("SELECT status_id FROM backfilled_statuses")).toEqual([{ status_id: row.id }]);
      expect(await a.port.get("SELECT in_reply_to_id, in_reply_to_account_id, in_reply_to_uri FROM statuses WHERE id = ?", [reply.id])).toEqual({ in_reply_to_id: row.id, in_reply_to_account_id: carol.id, in_reply_to_uri: null });

      // The same Note delivered again: null, nothing written, nothing announced.
      const before = await count(a, "statuses");
      expect(await posting.publishRemote(note(a, carol, 1, { tags: ["port"] }))).toBeNull();
      expect(await count(a, "statuses")).toBe(before);
      expect(await count(a, "media_attachments")).toBe(1);
      expect(created).toHaveLength(2);
    });

    test("the same Note stored by several tasks at once (its delivery while a search fetches it): one status, the others told null, none fails", async () => {
      const a = await arm.open();
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const { posting, events } = family(a);
      const created: number[] = [];
      events.within("status.created", (e) => void created.push(e.status.id));
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => posting.publishRemote(note(a, carol, 7, { tags: ["race"] }))));
      expect(results.map((r) => r.status)).toEqual(Array(5).fill("fulfilled"));
      const stored = results.map((r) => (r as PromiseFulfilledResult<{ id: number } | null>).value).filter((v) => v !== null);
      expect(stored).toHaveLength(1);
      expect(await a.port.all("SELECT id FROM statuses WHERE uri = ?", [note(a, carol, 7).uri])).toEqual([{ id: stored[0]!.id }]);
      expect(created).toEqual([stored[0]!.id]);
      expect(await count(a, "status_tags")).toBe(1);
    });

    test("a remote Update: new content with both versions kept and tags replaced, the quote policy and a poll's counts; an Update that changes nothing records nothing", async () => {
      const a = await arm.open();
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const { posting, editing, polls, events } = family(a);
      const updated: number[] = [];
      const policies: (string | null)[] = [];
      events.within("status.updated", (e) => void updated.push(e.status.id));
      events.within("quote_policy.changed", (e) => void policies.push(e.status.quoteApproval));
      const poll = { options: ["yes", "no"], tallies: [0, 0], multiple: false, expiresAt: a.t.clock.now() + 60_000, votersCount: null, closedAt: null };
      const row = (await posting.publishRemote(note(a, carol, 1, { tags: ["old"], poll })))!;
      // Never edited: its history is the status as it is, with its poll's options.
      expect((await editing.history(row)).map((v) => [v.text, v.pollOptions, v.media])).toEqual([["note 1", '["yes","no"]', []]]);

      const edited = await editing.applyRemoteEdit(row, { html: "<p>new</p>", text: "new", spoilerText: "", sensitive: false, tags: ["new"], emojis: [], editedAt: a.t.clock.now() });
      expect(edited).toMatchObject({ text: "new", contentHtml: "<p>new</p>" });
      expect(await a.port.get("SELECT text, content_html, tags, edited_at FROM statuses WHERE id = ?", [row.id])).toEqual({ text: "new", content_html: "<p>new</p>", tags: '["new"]', edited_at: edited.editedAt });
      expect((await a.port.all<{ text: string }>("SELECT text FROM status_edits WHERE status_id = ? ORDER BY id", [row.id])).map((r) => r.text)).toEqual(["note 1", "new"]);
      expect(await a.port.all("SELECT t.name FROM status_tags st JOIN tags t ON t.id = st.tag_id WHERE st.status_id = ?", [row.id])).toEqual([{ name: "new" }]);
      expect(updated).toEqual([row.id]);
      expect((await editing.history(edited)).map((v) => v.text)).toEqual(["note 1", "new"]);

      // The same content again: no version, no event.
      expect(await editing.applyRemoteEdit(edited, { html: "<p>new</p>", text: "new", spoilerText: "", sensitive: false, tags: ["new"], emojis: [], editedAt: a.t.clock.now() })).toBe(edited);
      expect(await count(a, "status_edits")).toBe(2);
      expect(updated).toHaveLength(1);

      const approval = JSON.stringify({ automatic: ["public"], manual: [] });
      expect((await editing.applyRemoteQuotePolicy(edited, approval)).quoteApproval).toBe(approval);
      expect(await editing.applyRemoteQuotePolicy({ ...edited, quoteApproval: approval }, approval)).toMatchObject({ quoteApproval: approval });
      expect(await a.port.get("SELECT quote_approval FROM statuses WHERE id = ?", [row.id])).toEqual({ quote_approval: approval });
      expect(policies).toEqual([approval]);

      await polls.applyRemoteCounts(row.id, { tallies: [5, 2], votersCount: null, closedAt: 1234, multiple: false });
      expect(await a.port.get("SELECT tallies, votes_count, voters_count, ended_at FROM polls WHERE status_id = ?", [row.id])).toEqual({ tallies: "[5,2]", votes_count: 7, voters_count: 7, ended_at: 1234 });
      // Counts of another shape (an option more) are not believed.
      await polls.applyRemoteCounts(row.id, { tallies: [1, 1, 1], votersCount: 3, closedAt: null, multiple: false });
      expect(await a.port.get("SELECT tallies, ended_at FROM polls WHERE status_id = ?", [row.id])).toEqual({ tallies: "[5,2]", ended_at: 1234 });
    });

    test("a vote in a local poll: counted once; a second vote and an unknown option refused with nothing changed", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const status = await a.t.post(alice, { text: "which?", poll: { options: ["a", "b"], expiresIn: 3600 } });
      await copy(a);
      const { polls, events } = family(a);
      const voted: number[][] = [];
      events.within("poll.voted", (e) => void voted.push(e.choices));
      const poll = (await polls.pollOf(status.id))!;
      // The poll's read (GET /api/v1/polls/:id, a vote's check): the poll and its status, an unknown one 404.
      expect(await polls.visiblePoll(poll.id, carol.id)).toMatchObject({ poll: { id: poll.id, statusId: status.id }, status: { id: status.id } });
      expect(await rejection(polls.visiblePoll(404, carol.id))).toMatchObject({ status: 404 });
      expect(await rejection(polls.visiblePoll(null, carol.id))).toMatchObject({ status: 404 });

      expect((await polls.vote(carol.id, poll.id, ["1"])).id).toBe(status.id);
      expect(await a.port.all("SELECT account_id, choice FROM poll_votes")).toEqual([{ account_id: carol.id, choice: 1 }]);
      const counted = { tallies: "[0,1]", votes_count: 1, voters_count: 1 };
      expect(await a.port.get("SELECT tallies, votes_count, voters_count FROM polls WHERE id = ?", [poll.id])).toEqual(counted);
      expect(voted).toEqual([[1]]);

      expect(await rejection(polls.vote(carol.id, poll.id, ["0"]))).toMatchObject({ status: 422, message: "Validation failed: You have already voted on this poll" });
      expect(await rejection(polls.vote(alice.id, poll.id, ["7"]))).toMatchObject({ status: 422, message: "Validation failed: The chosen vote option does not exist, You cannot vote in your own polls" });
      expect(await count(a, "poll_votes")).toBe(1);
      expect(await a.port.get("SELECT tallies, votes_count, voters_count FROM polls WHERE id = ?", [poll.id])).toEqual(counted);
      expect(voted).toHaveLength(1);
    });

    test("a removal: the status and its boosts go, each announced with the home feeds and lists that held it", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const { posting, removal, events } = family(a);
      const deleted: { id: number; homeRecipients: number[]; listIds: number[] }[] = [];
      events.within("status.deleted", (e) => void deleted.push({ id: e.status.id, homeRecipients: e.homeRecipients, listIds: e.listIds }));
      const row = (await posting.publishRemote(note(a, carol, 1)))!;
      const other = (await posting.publishRemote(note(a, carol, 2)))!;
      // A boost of it by alice, in her home feed (written here: the feeds' listeners are not this bus's).
      const boostId = a.t.ids.next();
      await new NewStatuses(a.port).insert(newStatusRow({ id: boostId, accountId: alice.id, visibility: "public", reblogOf: row, createdAt: a.t.clock.now() }));
      await a.port.run("INSERT INTO home_feed (account_id, status_id, author_id, origin_author_id) VALUES (?, ?, ?, ?)", [alice.id, row.id, carol.id, carol.id]);

      await removal.remove(row);
      expect(await a.port.all("SELECT id FROM statuses")).toEqual([{ id: other.id }]);
      expect(deleted).toEqual([
        { id: boostId, homeRecipients: [], listIds: [] },
        { id: row.id, homeRecipients: [alice.id], listIds: [] },
      ]);
      expect(await count(a, "home_feed")).toBe(0);
    });

    test("a removal with media and a quote: the media stay, detached from now (their grace period), and the quote goes first, announced", async () => {
      const a = await arm.open();
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const { posting, removal, quotes, events } = family(a);
      const removed: number[] = [];
      events.within("quote.removed", (e) => void removed.push(e.quote.statusId));
      const quoted = (await posting.publishRemote(note(a, carol, 1)))!;
      const row = (await posting.publishRemote(note(a, carol, 2, { media: [{ url: "https://remote.example/a.png", description: "a", type: "image", blurhash: null, meta: {} }] })))!;
      const [media] = await a.port.all<{ id: number; detachedAt: number | null }>('SELECT id, detached_at AS "detachedAt" FROM media_attachments WHERE status_id = ?', [row.id]);
      expect(media?.detachedAt).toBeNull();
      expect(await quotes.attachRemote({ status: row, quoted, quotedUri: quoted.uri!, state: "accepted" })).toMatchObject({ statusId: row.id, state: "accepted" });
      a.t.clock.advance(1000);
      await removal.remove(row);
      expect(await a.port.get('SELECT status_id AS "statusId", detached_at AS "detachedAt" FROM media_attachments WHERE id = ?', [media!.id])).toEqual({ statusId: null, detachedAt: a.t.clock.now() });
      expect(await quotes.forStatus(row.id)).toBeUndefined();
      expect(await count(a, "quotes")).toBe(0);
      expect(removed).toEqual([row.id]);
    });

    test("a quote of a remote post: asked, accepted by the quoted author's server alone, and revoked by its stamp's Delete; answers by anyone else change nothing", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const mallory = await a.mirror(await a.t.remote("mallory", "evil.example"));
      const { posting, quotes, events } = family(a);
      const told: string[] = [];
      for (const type of ["quote.requested", "quote.accepted", "quote.revoked", "quote.rejected"] as const) events.within(type, (e) => void told.push(`${e.type} ${e.quote.state}`));
      const quoted = (await posting.publishRemote(note(a, carol, 1)))!;
      const mine = newStatusRow({ id: a.t.ids.next(), accountId: alice.id, visibility: "public", createdAt: a.t.clock.now() });
      await new NewStatuses(a.port).insert(mine);
      const asked = await quotes.attach(mine, quoted);
      expect([asked.state, asked.quotedStatusId]).toEqual(["pending", quoted.id]);
      expect(asked.activityUri!).toStartWith("http://rookery.test/users/alice/quote_requests/");
      expect(await a.port.get("SELECT account_id FROM mentions WHERE status_id = ?", [mine.id])).toEqual({ account_id: carol.id });
      const stamp = "https://remote.example/users/carol/quote_authorizations/1";
      expect(await quotes.acceptRemote(asked.activityUri!, stamp, mallory.id)).toBeNull();
      expect(await quotes.rejectRemote(asked.activityUri!, mallory.id)).toBeNull();
      expect((await quotes.forStatus(mine.id))?.state).toBe("pending");
      expect(await quotes.acceptRemote(asked.activityUri!, stamp, carol.id)).toMatchObject({ state: "accepted", approvalUri: stamp });
      // A replayed Accept, or one after the answer: nothing moves.
      expect(await quotes.acceptRemote(asked.activityUri!, stamp, carol.id)).toBeNull();
      expect(await quotes.byApprovalUri(stamp)).toMatchObject({ id: asked.id, state: "accepted" });
      expect(await quotes.revokeStamp(stamp, mallory.id)).toBeNull();
      expect(await quotes.revokeStamp(stamp, carol.id)).toMatchObject({ id: asked.id, state: "revoked" });
      expect(await quotes.revokeStamp(stamp, carol.id)).toMatchObject({ state: "revoked" });
      expect(await quotes.find(asked.id)).toMatchObject({ state: "revoked", approvalUri: stamp });
      expect(told).toEqual(["quote.requested pending", "quote.accepted accepted", "quote.revoked revoked"]);
    });

    test("a remote post's quote: attached once (a second attach writes nothing), accepted when its stamp is verified, dropped by an edit, counted back", async () => {
      const a = await arm.open();
      const carol = await a.mirror(await a.t.remote("carol", "remote.example"));
      const dan = await a.mirror(await a.t.remote("dan", "other.example"));
      const { posting, quotes, events } = family(a);
      const told: string[] = [];
      for (const type of ["quote.accepted", "quote.removed"] as const) events.within(type, (e) => void told.push(e.type));
      const quoted = (await posting.publishRemote(note(a, carol, 1)))!;
      const quoting = (await posting.publishRemote(note(a, dan, 2)))!;
      const pending = (await quotes.attachRemote({ status: quoting, quoted, quotedUri: quoted.uri!, state: "pending", approvalUri: "https://remote.example/stamps/9" }))!;
      expect(await quotes.attachRemote({ status: quoting, quoted, quotedUri: quoted.uri!, state: "accepted" })).toBeNull();
      expect(await count(a, "quotes")).toBe(1);
      await quotes.restamp(pending.id, "https://remote.example/stamps/10");
      expect(await quotes.acceptVerified(pending.id, "https://remote.example/stamps/10")).toMatchObject({ state: "accepted", approvalUri: "https://remote.example/stamps/10" });
      expect(await quotes.acceptVerified(pending.id, null)).toBeNull();
      expect(await quotes.dropRemote(pending.id)).toMatchObject({ id: pending.id, state: "accepted" });
      expect(await quotes.forStatus(quoting.id)).toBeUndefined();
      expect(told).toEqual(["quote.accepted", "quote.removed"]);
    });
  });
}
