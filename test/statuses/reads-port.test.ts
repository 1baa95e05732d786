import { afterEach, describe, expect, test } from "bun:test";
import { accountDomainBlocks, blocks, bookmarks, favourites, follows, mentions, mutes, pollVotes, polls, quotes, statuses, statusPins, statusTags, tags } from "../../src/db/schema.ts";
import type { ApiError } from "../../src/errors.ts";
import { AccountDomainBlocks } from "../../src/services/accounts/domain-blocks.ts";
import { FollowService } from "../../src/services/accounts/follows.ts";
import { ModerationService } from "../../src/services/accounts/moderation.ts";
import { StatusMedia } from "../../src/services/media/status-media.ts";
import { QuoteListing } from "../../src/services/quotes/listing.ts";
import { QuotePolicy } from "../../src/services/quotes/policy.ts";
import { QuoteReads } from "../../src/services/quotes/reads.ts";
import { StatusReader } from "../../src/services/statuses/reader.ts";
import { StatusPolicy } from "../../src/services/statuses/visibility.ts";
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

const TABLES = { statuses, tags, statusTags, follows, mentions, favourites, bookmarks, statusPins, quotes, accountDomainBlocks, polls, pollVotes, blocks, mutes };

/** The rows the arm's SQLite services wrote, in the port's database too (parents first). */
async function copyAll(arm: PortArm) {
  if (arm.port.dialect !== "postgres") return;
  for (const [name, table] of Object.entries(TABLES)) {
    const rows = await arm.t.database.port.orm.select().from(table);
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

    test("a page rendered for a viewer: visibility, the viewer's flags, a quote, a poll, a boost of a hidden status; blocked and muted authors left out", async () => {
      const a = await arm.open();
      const { services } = a.t;
      const mirrored = async (name: string) => a.mirror(await a.t.local(name));
      const [alice, bob, carol, dave, eve] = [await mirrored("alice"), await mirrored("bob"), await mirrored("carol"), await mirrored("dave"), await mirrored("eve")];
      await services.follows.follow(alice.id, bob.id, {});
      const quoted = await a.t.post(bob, { text: "quote me", visibility: "public" });
      const polled = await a.t.post(bob, { text: "which?", visibility: "public", poll: { options: ["yes", "no"], expiresIn: 3600 } });
      const privateOfBob = await a.t.post(bob, { text: "for followers", visibility: "private" });
      await a.t.post(carol, { text: "look at this", visibility: "public", quotedStatusId: String(quoted.id) });
      const secret = await a.t.post(dave, { text: "dave's followers only", visibility: "private" });
      const byEve = await a.t.post(eve, { text: "eve says", visibility: "public" });
      await services.statusActions.favourite(alice.id, quoted.id);
      await services.statusActions.bookmark(alice.id, polled.id);
      await services.polls.vote(alice.id, (await services.polls.pollOf(polled.id))!.id, ["1"]);
      // Dave boosts his own private status: its original is not alice's to see, so neither is the boost.
      const boostOfSecret = await services.statusActions.reblog(dave.id, secret.id, "private").catch(() => null);
      await services.moderation.block(alice.id, eve.id);
      await services.moderation.mute(alice.id, dave.id, {});
      await copyAll(a);

      // Every read on the arm's port: visibility's and the quotes' filters, the reader and its loaders.
      const events = services.events;
      const followsOnPort = new FollowService(a.port, a.t.ids, a.t.clock, events);
      const domains = new AccountDomainBlocks(a.port, a.t.ids, a.t.clock, followsOnPort, events);
      const moderation = new ModerationService(a.port, a.t.ids, a.t.clock, followsOnPort, events, domains);
      const policy = new StatusPolicy(followsOnPort, moderation, a.port);
      const statusMedia = new StatusMedia(a.port, a.t.clock);
      const quotePolicy = new QuotePolicy(a.port, followsOnPort, moderation, policy);
      const reader = new StatusReader(a.port, a.t.clock, policy, (ids) => statusMedia.forStatuses(ids), { reads: new QuoteReads(a.port, policy, moderation), policy: quotePolicy });
      const timelines = new TimelineService(a.port, reader, moderation, services.lists, services.renderCache);

      // The public timeline for alice: eve (blocked) and dave (muted) left out, bob's private status too.
      const page = await timelines.public(alice.id, { limit: 20 }, {});
      expect(texts(page.rows)).toEqual(["look at this", "which?", "quote me"]);
      // Alice follows bob: his private status is hers to see, dave's is not, nor a boost of it.
      expect((await reader.visible([privateOfBob, secret, byEve], alice.id)).map((r) => r.id)).toEqual([privateOfBob.id, byEve.id]);
      if (boostOfSecret) expect(await reader.visible([boostOfSecret], alice.id)).toEqual([]);
      expect((await rejection(reader.visibleRow(secret.id, alice.id)))?.status).toBe(404);
      expect((await rejection(reader.visibleRow(null, alice.id)))?.status).toBe(404);

      const views = await reader.views(page.rows, alice.id);
      const byText = new Map(views.map((v) => [v.row.text, v]));
      expect(byText.get("quote me")!.viewer).toEqual({ favourited: true, reblogged: false, muted: false, bookmarked: false, pinned: false });
      expect(byText.get("which?")!.viewer).toMatchObject({ favourited: false, bookmarked: true });
      expect(byText.get("which?")!.poll).toMatchObject({ ownVotes: [1], expired: false });
      expect(JSON.parse(byText.get("which?")!.poll!.row.options)).toEqual(["yes", "no"]);
      expect(byText.get("look at this")!.quote).toMatchObject({ state: "accepted", quotedStatusId: quoted.id });
      expect(byText.get("look at this")!.quote!.status!.row.id).toBe(quoted.id);
      expect(byText.get("look at this")!.account.username).toBe("carol");
      // Anonymous: no flags, no votes.
      const anonymous = await reader.views(page.rows, null);
      expect(anonymous.map((v) => v.viewer)).toEqual([null, null, null]);
      expect(anonymous.find((v) => v.poll)!.poll!.ownVotes).toBeNull();
      // The filters through the port answer as the SQLite services do.
      expect((await moderation.blocked(alice.id, [eve.id, bob.id])).blocking).toEqual(new Set([eve.id]));
      expect([...(await moderation.hiddenAccounts(alice.id))].sort()).toEqual([dave.id, eve.id].sort());
      expect(await moderation.isBlocking(alice.id, eve.id)).toBe(true);
      expect(await followsOnPort.followedAmong(alice.id, [bob.id, carol.id])).toEqual(new Set([bob.id]));
      expect(await moderation.shunning(eve.id, [eve.id])).toEqual(new Set([alice.id]));
      // Reads change nothing.
      expect(Number((await a.port.get<{ n: number }>("SELECT count(*) AS n FROM favourites"))!.n)).toBe(1);
    });
  });
}
