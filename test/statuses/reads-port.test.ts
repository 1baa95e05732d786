import { afterEach, describe, expect, test } from "bun:test";
import { accountDomainBlocks, bookmarks, favourites, follows, mentions, quotes, statuses, statusPins, statusTags, tags } from "../../src/db/schema.ts";
import type { ApiError } from "../../src/errors.ts";
import { QuoteListing } from "../../src/services/quotes/listing.ts";
import { ThreadService } from "../../src/services/statuses/threads.ts";
import { TimelineService } from "../../src/services/statuses/timelines.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * The statuses family's reads on the database port (issue 31): the public, tag and account
 * timelines, bookmarks, favourites, a thread's walks, who boosted or favourited a status and a status's quotes run
 * on SQLite and on PostgreSQL. Their behaviour over HTTP is tested in timelines.test.ts,
 * reading.test.ts and quotes-manage.test.ts; this holds their SQL on both databases. The rows are
 * made by the arm's SQLite services (posting is not converted) and copied over on PostgreSQL; what
 * stays synchronous (the reader's checks, the viewer's hidden accounts) reads the SQLite side.
 */

afterEach(closePortArms);

const TABLES = { statuses, tags, statusTags, follows, mentions, favourites, bookmarks, statusPins, quotes, accountDomainBlocks };

/** The rows the arm's SQLite services wrote, in the port's database too (parents first). */
async function copyAll(arm: PortArm) {
  if (arm.port.dialect !== "postgres") return;
  for (const [name, table] of Object.entries(TABLES)) {
    const rows = arm.t.database.db.select().from(table).all();
    if (rows.length) await arm.port.orm.insert(arm.port.tables[name as keyof typeof TABLES] as never).values(rows as never);
  }
}

const rejection = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as ApiError);
const texts = (rows: { text: string | null }[]) => rows.map((r) => r.text);

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the statuses family's reads on ${arm.name}`, () => {
    test("timelines, saved lists, who boosted and favourited, quotes; bad input answers as before and changes nothing", async () => {
      const a = await arm.open();
      const { services } = a.t;
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const carol = await a.mirror(await a.t.local("carol"));
      const first = await a.t.post(bob, { text: "first #Birds", visibility: "public" });
      const second = await a.t.post(bob, { text: "second #birds #cats", visibility: "public" });
      const hidden = await a.t.post(bob, { text: "for followers", visibility: "private" });
      const own = await a.t.post(alice, { text: "alice's", visibility: "public" });
      const quoting = await a.t.post(bob, { text: "look", visibility: "public", quotedStatusId: String(own.id) });
      await a.t.post(carol, { text: "carol #birds", visibility: "public" });
      // A thread under bob's first status (replies to others' statuses stay off public timelines).
      const replyOne = await a.t.post(alice, { text: "reply one", visibility: "public", inReplyToId: String(first.id) });
      const replyTwo = await a.t.post(carol, { text: "reply two", visibility: "public", inReplyToId: String(replyOne.id) });
      await services.statusActions.favourite(bob.id, own.id);
      await services.statusActions.favourite(carol.id, own.id);
      await services.statusActions.reblog(bob.id, own.id, undefined);
      await services.statusActions.bookmark(alice.id, first.id);
      await services.statusActions.bookmark(alice.id, second.id);
      await services.statusActions.favourite(alice.id, second.id);
      await services.statusActions.pin(bob.id, second.id);
      // Alice mutes carol and blocks a domain: the hidden-account and domain conditions run too.
      await services.moderation.mute(alice.id, carol.id, {});
      await services.domainBlocks.block(alice.id, "blocked.example");
      await copyAll(a);

      const timelines = new TimelineService(a.port, services.reader, services.moderation, services.lists, services.renderCache);
      const threads = new ThreadService(a.port, services.reader, services.moderation);
      const listing = new QuoteListing(a.port, services.reader);

      // Public: newest first, without the private status; carol hidden from alice; paged both ways.
      expect(texts((await timelines.public(null, { limit: 20 }, {})).rows)).toEqual(["carol #birds", "look", "alice's", "second #birds #cats", "first #Birds"]);
      expect(texts((await timelines.public(alice.id, { limit: 20 }, { local: true })).rows)).toEqual(["look", "alice's", "second #birds #cats", "first #Birds"]);
      expect((await timelines.public(null, { limit: 20 }, { remote: true })).rows).toEqual([]);
      expect((await timelines.public(null, { limit: 20 }, { onlyMedia: true })).rows).toEqual([]);
      const older = await timelines.public(null, { limit: 2, maxId: own.id }, {});
      expect(texts(older.rows)).toEqual(["second #birds #cats", "first #Birds"]);
      expect(older).toMatchObject({ first: second.id, last: first.id, full: true });
      expect(texts((await timelines.public(null, { limit: 2, minId: first.id }, {})).rows)).toEqual(["alice's", "second #birds #cats"]);

      // Tags: case folded, any, all and none; an unknown tag and remote-only are empty.
      expect(texts((await timelines.tag(null, "BIRDS", { limit: 20 }, {})).rows)).toEqual(["carol #birds", "second #birds #cats", "first #Birds"]);
      expect(texts((await timelines.tag(alice.id, "birds", { limit: 20 }, {})).rows)).toEqual(["second #birds #cats", "first #Birds"]);
      expect(texts((await timelines.tag(null, "nothing", { limit: 20 }, { any: ["cats", "birds"] })).rows)).toEqual(["carol #birds", "second #birds #cats", "first #Birds"]);
      expect(texts((await timelines.tag(null, "birds", { limit: 20 }, { all: ["cats"] })).rows)).toEqual(["second #birds #cats"]);
      expect(texts((await timelines.tag(null, "birds", { limit: 20 }, { none: ["cats"] })).rows)).toEqual(["carol #birds", "first #Birds"]);
      expect(texts((await timelines.tag(null, "birds", { limit: 1, minId: first.id }, {})).rows)).toEqual(["second #birds #cats"]);
      expect((await timelines.tag(null, "birds", { limit: 20 }, { all: ["unknown"] })).rows).toEqual([]);
      expect((await timelines.tag(null, "unknown", { limit: 20 }, {})).rows).toEqual([]);
      expect((await timelines.tag(null, "birds", { limit: 20 }, { remote: true })).rows).toEqual([]);

      // An account's statuses (its boost of alice's first, no text of its own): the private one for
      // its author only, boosts left out on request; pinned; tagged; paged.
      expect(texts((await timelines.account(null, bob.id, { limit: 20 }, {})).rows)).toEqual(["", "look", "second #birds #cats", "first #Birds"]);
      expect(texts((await timelines.account(alice.id, bob.id, { limit: 20 }, { excludeReblogs: true })).rows)).toEqual(["look", "second #birds #cats", "first #Birds"]);
      expect(texts((await timelines.account(bob.id, bob.id, { limit: 20 }, {})).rows)).toEqual(["", "look", "for followers", "second #birds #cats", "first #Birds"]);
      expect(texts((await timelines.account(alice.id, bob.id, { limit: 20 }, { pinned: true })).rows)).toEqual(["second #birds #cats"]);
      expect((await timelines.account(alice.id, bob.id, { limit: 20, maxId: quoting.id }, { pinned: true })).rows).toEqual([]);
      expect(texts((await timelines.account(null, bob.id, { limit: 20 }, { tagged: "Cats" })).rows)).toEqual(["second #birds #cats"]);
      expect(texts((await timelines.account(null, bob.id, { limit: 1, minId: hidden.id }, {})).rows)).toEqual(["look"]);
      expect((await timelines.account(null, bob.id, { limit: 20 }, { onlyMedia: true })).rows).toEqual([]);

      // Bookmarks and favourites, by their own ids.
      const saved = await timelines.bookmarks(alice.id, { limit: 20 });
      expect(texts(saved.rows)).toEqual(["second #birds #cats", "first #Birds"]);
      expect(saved.first).toBeGreaterThan(saved.last!);
      expect(texts((await timelines.bookmarks(alice.id, { limit: 20, maxId: saved.first! })).rows)).toEqual(["first #Birds"]);
      expect(texts((await timelines.bookmarks(alice.id, { limit: 1, minId: saved.last! })).rows)).toEqual(["second #birds #cats"]);
      expect(texts((await timelines.favourites(alice.id, { limit: 20 })).rows)).toEqual(["second #birds #cats"]);
      expect((await timelines.favourites(bob.id, { limit: 20, maxId: 1 })).rows).toEqual([]);

      // Who boosted and favourited alice's status; carol hidden from alice.
      expect((await threads.rebloggedBy(own.id, null, { limit: 40 })).map((l) => l.account.username)).toEqual(["bob"]);
      expect((await threads.favouritedBy(own.id, null, { limit: 40 })).map((l) => l.account.username)).toEqual(["carol", "bob"]);
      expect((await threads.favouritedBy(own.id, alice.id, { limit: 40 })).map((l) => l.account.username)).toEqual(["bob"]);
      const favs = await threads.favouritedBy(own.id, null, { limit: 1 });
      expect((await threads.favouritedBy(own.id, null, { limit: 40, maxId: favs[0]!.cursor })).map((l) => l.account.username)).toEqual(["bob"]);
      expect((await threads.favouritedBy(own.id, null, { limit: 40, minId: favs[0]!.cursor })).map((l) => l.account.username)).toEqual([]);
      expect(await threads.rebloggedBy(first.id, null, { limit: 40 })).toEqual([]);

      // A thread's walks: ancestors root first, descendants depth first; carol hidden from alice.
      expect(texts((await threads.context(first, null)).descendants)).toEqual(["reply one", "reply two"]);
      expect((await threads.context(first, null)).ancestors).toEqual([]);
      expect(texts((await threads.context(first, alice.id)).descendants)).toEqual(["reply one"]);
      expect(texts((await threads.context(replyTwo, null)).ancestors)).toEqual(["first #Birds", "reply one"]);
      expect((await threads.topAncestor(replyTwo)).id).toBe(first.id);
      expect((await threads.topAncestor(first)).id).toBe(first.id);

      // Quotes of alice's status: hers to read; bob is refused, an unknown or hidden status is 404.
      const found = await listing.quotesOf(alice.id, own.id, { limit: 20 });
      expect(texts(found.rows)).toEqual(["look"]);
      expect(found.cursors).toHaveLength(1);
      expect((await listing.quotesOf(alice.id, own.id, { limit: 20, maxId: found.cursors[0]! })).rows).toEqual([]);
      expect((await rejection(listing.quotesOf(bob.id, own.id, { limit: 20 })))?.status).toBe(403);
      expect((await rejection(listing.quotesOf(alice.id, hidden.id, { limit: 20 })))?.status).toBe(404);
      expect((await rejection(listing.quotesOf(alice.id, null, { limit: 20 })))?.status).toBe(404);
      // Reads change nothing.
      expect(Number((await a.port.get<{ n: number }>("SELECT count(*) AS n FROM quotes"))!.n)).toBe(1);
      expect(Number((await a.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n)).toBe(9);
    });
  });
}
