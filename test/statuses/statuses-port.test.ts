import { afterEach, describe, expect, test } from "bun:test";
import { statuses } from "../../src/db/schema.ts";
import { ApiError } from "../../src/errors.ts";
import { GroupCommit } from "../../src/infra/group-commit.ts";
import { LinkCards } from "../../src/services/statuses/link-cards.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";
import { statusesOnPort } from "../support/statuses-on-port.ts";

/**
 * The statuses family's writes on the database port (issue 31): a local post, the actions on a
 * status, scheduled statuses and Idempotency-Keys run on SQLite and on PostgreSQL. Their
 * behaviour over HTTP is tested in posting.test.ts, actions.test.ts, scheduled.test.ts; this holds
 * their SQL on both databases. The collaborators not converted yet (the reader, accounts,
 * moderation) read the arm's SQLite services, so the statuses acted on are copied over; the
 * converted services get an event bus of their own, whose consequences (counters, feeds) are not
 * the family's and stay on SQLite.
 */

afterEach(closePortArms);

const rejection = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as ApiError);
const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

/** The statuses the arm's SQLite services wrote, in the port's database too. */
async function copyStatuses(arm: PortArm) {
  if (arm.port.dialect !== "postgres") return;
  const rows = await arm.t.database.port.orm.select().from(statuses);
  if (rows.length) await arm.port.orm.insert(arm.port.tables.statuses).values(rows).onConflictDoNothing();
}

const family = statusesOnPort;

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the statuses family's writes on ${arm.name}`, () => {
    test("a post: its row, mention, tag and poll written; a blank one refused with nothing written", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const { posting, events } = family(a);
      const created: number[] = [];
      events.within("status.created", (e) => void created.push(e.status.id));

      const row = await posting.publish(await posting.prepare(alice.id, null, { text: "hello @bob #Port", poll: { options: ["yes", "no"], expiresIn: 3600 } }));
      expect(created).toEqual([row.id]);
      expect(await a.port.get("SELECT account_id, text, visibility, has_poll FROM statuses WHERE id = ?", [row.id])).toMatchObject({ account_id: alice.id, text: "hello @bob #Port", visibility: "public" });
      expect(await a.port.all("SELECT account_id FROM mentions WHERE status_id = ?", [row.id])).toEqual([{ account_id: bob.id }]);
      expect(await a.port.all("SELECT t.name FROM status_tags st JOIN tags t ON t.id = st.tag_id WHERE st.status_id = ?", [row.id])).toEqual([{ name: "port" }]);
      expect(await a.port.get("SELECT options, votes_count FROM polls WHERE status_id = ?", [row.id])).toEqual({ options: JSON.stringify(["yes", "no"]), votes_count: 0 });
      // The same tag again: one tags row, two statuses under it.
      const again = await posting.publish(await posting.prepare(bob.id, null, { text: "#port again" }));
      expect(await count(a, "tags")).toBe(1);
      expect(Number((await a.port.get<{ n: number }>("SELECT count(*) AS n FROM status_tags WHERE status_id IN (?, ?)", [row.id, again.id]))!.n)).toBe(2);

      const before = await count(a, "statuses");
      const refused = await rejection(posting.prepare(alice.id, null, { text: "  " }));
      expect(refused).toMatchObject({ status: 422, message: "Validation failed: Text can't be blank" });
      expect(await count(a, "statuses")).toBe(before);
    });

    test("actions: favourite, boost, bookmark, thread mute and pin, their undos, and what they refuse", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const status = await a.t.post(alice, { text: "act on me" });
      await copyStatuses(a);
      const { actions, events } = family(a);
      const heard: string[] = [];
      for (const type of ["favourite.created", "favourite.removed", "status.created", "status.pinned", "status.unpinned"] as const) events.within(type, () => void heard.push(type));

      await actions.favourite(bob.id, status.id);
      await actions.favourite(bob.id, status.id);
      expect(await a.port.all("SELECT account_id, status_id FROM favourites")).toEqual([{ account_id: bob.id, status_id: status.id }]);
      await actions.unfavourite(bob.id, status.id);
      await actions.unfavourite(bob.id, status.id);
      expect(await count(a, "favourites")).toBe(0);

      const boost = await actions.reblog(bob.id, status.id, "unlisted");
      expect(boost).toMatchObject({ accountId: bob.id, reblogOfId: status.id, visibility: "unlisted" });
      expect(await actions.reblog(bob.id, status.id, undefined)).toEqual(boost);
      expect(await a.port.get("SELECT reblog_of_id, visibility FROM statuses WHERE id = ?", [boost.id])).toEqual({ reblog_of_id: status.id, visibility: "unlisted" });
      expect((await rejection(actions.reblog(alice.id, status.id, "direct")))?.message).toBe("Validation failed: Visibility is reserved");

      await actions.bookmark(bob.id, status.id);
      await actions.bookmark(bob.id, status.id);
      expect(await count(a, "bookmarks")).toBe(1);
      await actions.unbookmark(bob.id, status.id);
      expect((await rejection(actions.unbookmark(bob.id, status.id)))?.status).toBe(404);
      expect(await count(a, "bookmarks")).toBe(0);

      // Carol is not in alice's thread (bob is now, by his boost): she may not mute it; alice may.
      const carol = await a.mirror(await a.t.local("carol"));
      expect((await rejection(actions.muteThread(carol.id, status.id)))?.status).toBe(403);
      expect(await count(a, "conversation_mutes")).toBe(0);
      await actions.muteThread(alice.id, status.id);
      expect(await a.port.all("SELECT account_id FROM conversation_mutes")).toEqual([{ account_id: alice.id }]);
      await actions.unmuteThread(alice.id, status.id);
      expect(await count(a, "conversation_mutes")).toBe(0);

      await actions.pin(alice.id, status.id);
      expect((await rejection(actions.pin(alice.id, status.id)))?.message).toBe("Duplicate record");
      expect((await rejection(actions.pin(bob.id, status.id)))?.message).toBe("Validation failed: Someone else's toot cannot be pinned");
      expect(await a.port.all("SELECT account_id, status_id FROM status_pins")).toEqual([{ account_id: alice.id, status_id: status.id }]);
      await actions.unpin(alice.id, status.id);
      expect(await count(a, "status_pins")).toBe(0);
      expect(heard).toEqual(["favourite.created", "favourite.removed", "status.created", "status.pinned", "status.unpinned"]);
    });

    test("scheduled statuses: scheduled, read, listed, moved, published when due, cancelled; too soon refused with nothing written", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const { scheduled } = family(a);
      const at = (ms: number) => new Date(a.t.clock.now() + ms).toISOString();
      const HOUR = 3_600_000;

      const first = await scheduled.schedule(alice.id, null, { text: "later" }, at(HOUR), { text: "later" });
      const second = await scheduled.schedule(alice.id, null, { text: "even later" }, at(2 * HOUR), {});
      expect(await scheduled.find(alice.id, first.id)).toEqual(first);
      expect((await scheduled.list(alice.id, { limit: 10 })).map((r) => r.id)).toEqual([second.id, first.id]);
      // Paged both ways: newest first below a cursor, forward from one (answered newest first).
      expect((await scheduled.list(alice.id, { limit: 1, maxId: second.id })).map((r) => r.id)).toEqual([first.id]);
      expect((await scheduled.list(alice.id, { limit: 1, minId: 0 })).map((r) => r.id)).toEqual([first.id]);
      expect((await scheduled.list(alice.id, { limit: 5, sinceId: first.id })).map((r) => r.id)).toEqual([second.id]);
      const moved = await scheduled.reschedule(alice.id, second.id, at(3 * HOUR));
      expect((await scheduled.find(alice.id, second.id)).scheduledAt).toBe(moved.scheduledAt);

      expect((await rejection(scheduled.schedule(alice.id, null, { text: "now" }, at(60_000), {})))?.message).toBe("Validation failed: Scheduled at The scheduled date must be in the future");
      expect((await rejection(scheduled.reschedule(alice.id, first.id, at(60_000))))?.status).toBe(422);
      expect((await rejection(scheduled.find(alice.id + 1, first.id)))?.status).toBe(404);
      expect(await count(a, "scheduled_statuses")).toBe(2);
      expect((await scheduled.find(alice.id, first.id)).scheduledAt).toBe(first.scheduledAt);

      a.t.clock.advance(HOUR);
      await scheduled.publishDue(first.id);
      expect(await count(a, "scheduled_statuses")).toBe(1);
      expect(await a.port.all("SELECT text FROM statuses WHERE account_id = ?", [alice.id])).toEqual([{ text: "later" }]);
      await scheduled.cancel(alice.id, second.id);
      expect(await scheduled.list(alice.id, { limit: 10 })).toEqual([]);
      expect((await rejection(scheduled.cancel(alice.id, second.id)))?.status).toBe(404);
    });

    test("an edit: both versions kept, tags replaced, a poll added and ended once; another's edit and a blank one refused with nothing changed", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const status = await a.t.post(alice, { text: "first #one" });
      await copyStatuses(a);
      await a.port.run("DELETE FROM status_tags");
      const { editing, polls, events } = family(a);
      const heard: string[] = [];
      for (const type of ["status.updated", "poll.opened", "poll.ended", "quote_policy.changed"] as const) events.within(type, () => void heard.push(type));

      const edited = await editing.edit(alice.id, status.id, { text: "second #two", poll: { options: ["a", "b"], expiresIn: 600 } });
      expect(edited).toMatchObject({ text: "second #two", hasPoll: true, editedAt: a.t.clock.now() });
      expect(await a.port.all("SELECT text, poll_options FROM status_edits WHERE status_id = ? ORDER BY id", [status.id])).toEqual([
        { text: "first #one", poll_options: null },
        { text: "second #two", poll_options: JSON.stringify(["a", "b"]) },
      ]);
      expect(await a.port.all("SELECT t.name FROM status_tags st JOIN tags t ON t.id = st.tag_id WHERE st.status_id = ?", [status.id])).toEqual([{ name: "two" }]);
      expect(await a.port.get("SELECT text, has_poll FROM statuses WHERE id = ?", [status.id])).toMatchObject({ text: "second #two" });

      expect((await rejection(editing.edit(bob.id, status.id, { text: "mine now" })))?.status).toBe(404);
      expect((await rejection(editing.edit(alice.id, status.id, { text: " " })))?.message).toBe("Validation failed: Text can't be blank");
      expect(await count(a, "status_edits")).toBe(2);
      expect(await a.port.get("SELECT text FROM statuses WHERE id = ?", [status.id])).toEqual({ text: "second #two" });

      const poll = (await a.port.get<{ id: number }>("SELECT id FROM polls WHERE status_id = ?", [status.id]))!;
      await polls.end(poll.id);
      expect(await a.port.get("SELECT ended_at FROM polls WHERE id = ?", [poll.id])).toEqual({ ended_at: null });
      a.t.clock.advance(600_000);
      await polls.end(poll.id);
      await polls.end(poll.id);
      expect(Number((await a.port.get<{ ended_at: number }>("SELECT ended_at FROM polls WHERE id = ?", [poll.id]))!.ended_at)).toBe(a.t.clock.now());
      expect(heard).toEqual(["poll.opened", "status.updated", "poll.ended"]);
    });

    test("link cards: a page's card kept and set on its status; a page without a title kept as failed, its status left without", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const { posting } = family(a);
      const pages: Record<string, string> = {
        "https://news.example/story": "<html><head><title>A story</title><meta property='og:description' content='What happened'></head></html>",
        "https://news.example/blank": "<html><body>no title</body></html>",
      };
      // The network (OutgoingHttp.bytes in the server): these two pages.
      const download = async (url: string) => new TextEncoder().encode(pages[url] ?? "");
      const cards = new LinkCards(a.port, a.t.ids, a.t.clock, a.t.services.renderCache, new GroupCommit(a.port), download);
      const story = await posting.publish(await posting.prepare(alice.id, null, { text: "read https://news.example/story" }));
      const blank = await posting.publish(await posting.prepare(alice.id, null, { text: "see https://news.example/blank" }));
      await cards.forStatus(story);
      await cards.forStatus(blank);
      const card = await a.port.get<{ card: string }>("SELECT card FROM statuses WHERE id = ?", [story.id]);
      expect(JSON.parse(card!.card)).toMatchObject({ url: "https://news.example/story", title: "A story", description: "What happened" });
      expect(await a.port.get("SELECT card FROM statuses WHERE id = ?", [blank.id])).toEqual({ card: null });
      expect(await a.port.all("SELECT url FROM preview_cards WHERE card IS NULL AND failed_at IS NOT NULL")).toEqual([{ url: "https://news.example/blank" }]);
      expect(await count(a, "preview_cards")).toBe(2);
      await cards.stop();
    });

    test("Idempotency-Keys: remembered in the post's transaction, forgotten with its rollback", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const { keys } = family(a);
      await a.port.transaction(() => keys.remember(alice.id, "K", { kind: "status", id: 10 }));
      expect(await keys.recall(alice.id, "K")).toEqual({ kind: "status", id: 10 });
      await expect(
        a.port.transaction(async () => {
          await keys.remember(alice.id, "L", { kind: "scheduled", id: 11 });
          throw new Error("the post failed");
        }),
      ).rejects.toThrow("the post failed");
      expect(await keys.recall(alice.id, "L")).toBeNull();
      expect(await count(a, "idempotency_keys")).toBe(1);
    });
  });
}
