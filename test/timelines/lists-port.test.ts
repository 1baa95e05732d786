import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accountConversations, follows, statuses } from "../../src/db/schema.ts";
import { ApiError } from "../../src/errors.ts";
import { EventBus } from "../../src/infra/events.ts";
import { ConversationService } from "../../src/services/conversations.ts";
import { ListService } from "../../src/services/lists.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Lists and conversations on the database port (issue 31): their CRUD and reads run on SQLite and
 * on PostgreSQL. Their behaviour over HTTP is tested in lists.test.ts and conversations.test.ts;
 * this holds their SQL on both databases. Delivery (synchronous, on the arm's SQLite services)
 * makes the rows; on PostgreSQL they are copied over, as the accounts are mirrored.
 */

afterEach(closePortArms);

/** The rows the arm's SQLite services wrote to `table`, in the port's database too. */
async function copy(arm: PortArm, name: "follows" | "statuses" | "accountConversations") {
  if (arm.port.dialect !== "postgres") return;
  const rows = await arm.t.database.port.orm.select().from({ follows, statuses, accountConversations }[name]);
  if (rows.length) await arm.port.orm.insert(arm.port.tables[name]).values(rows as never);
}

const rejection = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as ApiError);
const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`lists and conversations on ${arm.name}`, () => {
    test("lists: created, read, renamed, members added with their statuses, paged, removed, deleted; bad input changes nothing", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const carol = await a.mirror(await a.t.local("carol"));
      await a.t.services.follows.follow(alice.id, bob.id, {});
      const posted = await a.t.post(bob, { text: "before the list" });
      await copy(a, "follows");
      await copy(a, "statuses");
      const lists = new ListService(a.port, a.t.ids, a.t.clock, new EventBus(a.port));

      const list = await lists.create(alice.id, { title: "  Friends ", exclusive: true });
      expect(list).toMatchObject({ accountId: alice.id, title: "Friends", repliesPolicy: "list", exclusive: true });
      expect(await lists.all(alice.id)).toEqual([list]);
      expect(await lists.own(alice.id, list.id)).toEqual(list);
      const renamed = await lists.update(alice.id, list.id, { title: "Close friends", repliesPolicy: "followed", exclusive: false });
      expect(renamed).toMatchObject({ title: "Close friends", repliesPolicy: "followed", exclusive: false });
      expect(await lists.own(alice.id, list.id)).toEqual(renamed);

      await lists.addMembers(alice.id, list.id, [bob.id, alice.id]);
      const members = await lists.members(alice.id, list.id, { limit: 10 });
      expect(members.map((m) => [m.account.username, m.cursor])).toEqual(
        [
          ["alice", alice.id],
          ["bob", bob.id],
        ].sort((x, y) => (y[1] as number) - (x[1] as number)),
      );
      expect(members[0]!.account).toMatchObject({ id: members[0]!.cursor, locked: expect.any(Boolean) });
      expect((await lists.members(alice.id, list.id, { limit: 1, minId: Math.min(alice.id, bob.id) })).map((m) => m.cursor)).toEqual([Math.max(alice.id, bob.id)]);
      expect((await lists.containing(alice.id, bob.id)).map((l) => l.id)).toEqual([list.id]);
      // The backfill brought bob's earlier status into the list.
      expect(await a.port.all("SELECT status_id AS id FROM list_feed WHERE list_id = ?", [list.id])).toEqual([{ id: posted.id }]);
      // What a list's stream asks: who owns it (only they may stream it), which lists hold a status.
      expect([await lists.owns(alice.id, list.id), await lists.owns(bob.id, list.id), await lists.owns(alice.id, 404)]).toEqual([true, false, false]);
      expect([...(await lists.owners([list.id, 404]))]).toEqual([[list.id, alice.id]]);
      expect(await lists.owners([])).toEqual(new Map());
      expect(await lists.holding(posted.id)).toEqual([list.id]);
      expect(await lists.holding(404)).toEqual([]);

      // Bad input: a stranger (not followed), a duplicate, an unknown account, a blank title, another's list.
      expect((await rejection(lists.addMembers(alice.id, list.id, [carol.id])))?.message).toBe("Validation failed: Account must be a followed account");
      expect((await rejection(lists.addMembers(alice.id, list.id, [bob.id])))?.message).toBe("Validation failed: Account is already on the list");
      expect((await rejection(lists.addMembers(alice.id, list.id, [404])))?.status).toBe(404);
      expect((await rejection(lists.create(alice.id, { title: " " })))?.message).toBe("Validation failed: Title can't be blank");
      expect((await rejection(lists.update(bob.id, list.id, { title: "mine" })))?.status).toBe(404);
      expect((await rejection(lists.remove(bob.id, list.id)))?.status).toBe(404);
      expect(await count(a, "lists")).toBe(1);
      expect(await count(a, "list_accounts")).toBe(2);
      expect(await lists.own(alice.id, list.id)).toEqual(renamed);

      await lists.removeMembers(alice.id, list.id, [bob.id]);
      expect((await lists.members(alice.id, list.id, { limit: 10 })).map((m) => m.account.username)).toEqual(["alice"]);
      expect(await count(a, "list_feed")).toBe(0);
      await lists.remove(alice.id, list.id);
      expect(await lists.all(alice.id)).toEqual([]);
      expect((await rejection(lists.own(alice.id, list.id)))?.status).toBe(404);
      expect((await rejection(lists.own(alice.id, null)))?.status).toBe(404);
    });

    test("lists: a double submit of a member added at once: added once, the others refused with Mastodon's 422, none failing otherwise", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      await a.t.services.follows.follow(alice.id, bob.id, {});
      await copy(a, "follows");
      const lists = new ListService(a.port, a.t.ids, a.t.clock, new EventBus(a.port));
      const list = await lists.create(alice.id, { title: "Friends" });
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => lists.addMembers(alice.id, list.id, [bob.id])));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results.filter((r) => r.status === "rejected")) expect(r.reason).toMatchObject({ status: 422, message: "Validation failed: Account is already on the list" });
      expect(await a.port.all("SELECT account_id FROM list_accounts WHERE list_id = ?", [list.id])).toEqual([{ account_id: bob.id }]);
    });

    test("lists: the 49th to 52nd made at once: two made, two refused at Mastodon's limit of 50", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const lists = new ListService(a.port, a.t.ids, a.t.clock, new EventBus(a.port));
      for (let i = 0; i < 48; i++) await lists.create(alice.id, { title: `list ${i}` });
      const results = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => lists.create(alice.id, { title: `late ${i}` })));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
      for (const r of results.filter((r) => r.status === "rejected")) expect(r.reason).toMatchObject({ status: 422, message: "Validation failed: You have reached the maximum number of lists" });
      expect(await count(a, "lists")).toBe(50);
    });

    test("conversations: direct statuses of one thread by both its participants added at once: one row each, every status kept, the latest last", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const fromAlice = await a.t.post(alice, { text: "@bob psst", visibility: "direct" });
      const fromBob = await a.t.post(bob, { text: "@alice psst", visibility: "direct" });
      const events = new EventBus(a.port);
      const updated: number[] = [];
      events.within("conversation.updated", (e) => void updated.push(e.accountId));
      const conversations = new ConversationService(a.port, a.t.ids, a.t.services.notifications, events);
      // Replies in a thread of their own (none of its rows stored yet), each added in the
      // transaction of its status as status.created's listener adds it; the two authors' lock
      // their rows in one order, or PostgreSQL finds them deadlocked.
      const thread = a.t.ids.next();
      const replies = Array.from({ length: 6 }, (_, i) => ({ ...(i % 2 ? fromBob : fromAlice), id: a.t.ids.next(), conversationId: thread }));
      const results = await Promise.allSettled(replies.map((status) => a.port.transaction(() => conversations.added(status))));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill("fulfilled"));
      const rows = await a.port.orm.select().from(a.port.tables.accountConversations).where(eq(a.port.tables.accountConversations.conversationId, thread));
      const ids = replies.map((r) => r.id);
      expect(rows.map((r) => ({ accountId: r.accountId, statusIds: (JSON.parse(r.statusIds) as number[]).sort((x, y) => x - y), lastStatusId: r.lastStatusId, unread: r.unread })).sort((x, y) => x.accountId - y.accountId)).toEqual(
        [alice.id, bob.id].sort((x, y) => x - y).map((accountId) => ({ accountId, statusIds: ids, lastStatusId: Math.max(...ids), unread: true })),
      );
      expect(updated).toHaveLength(12);
    });

    test("conversations: listed newest first and paged, marked read and unread, left; another's or unknown is 404 and changes nothing", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const first = await a.t.post(alice, { text: "@bob psst", visibility: "direct" });
      const second = await a.t.post(bob, { text: "@alice a new thread", visibility: "direct" });
      await copy(a, "statuses");
      await copy(a, "accountConversations");
      const events = new EventBus(a.port);
      const heard: number[] = [];
      events.afterCommit("conversation.updated", (e) => void heard.push(e.conversationId));
      const conversations = new ConversationService(a.port, a.t.ids, a.t.services.notifications, events);

      const bobs = await conversations.list(bob.id, { limit: 10 });
      expect(bobs.map((c) => [c.lastStatusId, c.unread])).toEqual([
        [second.id, false],
        [first.id, true],
      ]);
      expect((await conversations.list(bob.id, { limit: 10, maxId: second.id })).map((c) => c.lastStatusId)).toEqual([first.id]);
      expect((await conversations.list(bob.id, { limit: 1, minId: 0 })).map((c) => c.lastStatusId)).toEqual([first.id]);
      const thread = bobs[1]!;
      expect(await conversations.markRead(bob.id, thread.id)).toEqual({ ...thread, unread: false });
      expect((await conversations.find(bob.id, thread.id)).unread).toBe(false);
      // The stream's read of a changed conversation: the participant's own, else nothing.
      expect((await conversations.findRow(bob.id, thread.id))?.id).toBe(thread.id);
      expect(await conversations.findRow(bob.id + 1000, thread.id)).toBeUndefined();
      expect((await conversations.markRead(bob.id, thread.id, true)).unread).toBe(true);
      expect(heard).toEqual([thread.id, thread.id]);

      expect((await rejection(conversations.markRead(alice.id, thread.id)))?.status).toBe(404);
      expect((await rejection(conversations.remove(alice.id, thread.id)))?.status).toBe(404);
      expect((await rejection(conversations.find(bob.id, null)))?.status).toBe(404);
      expect((await conversations.find(bob.id, thread.id)).unread).toBe(true);
      expect(heard).toHaveLength(2);

      await conversations.remove(bob.id, thread.id);
      expect((await conversations.list(bob.id, { limit: 10 })).map((c) => c.lastStatusId)).toEqual([second.id]);
      expect((await conversations.list(alice.id, { limit: 10 })).length).toBe(2);
    });
  });
}
