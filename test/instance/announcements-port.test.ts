import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DatabasePort } from "../../src/db/port.ts";
import { ApiError } from "../../src/errors.ts";
import { IdGenerator } from "../../src/ids.ts";
import { EventBus, type DomainEvent } from "../../src/infra/events.ts";
import sharp from "../../src/media-files/sharp.ts";
import { MediaStorage } from "../../src/media-files/storage.ts";
import { AnnouncementService } from "../../src/services/announcements.ts";
import { CustomEmojiService } from "../../src/services/custom-emojis.ts";
import { postgresAvailable } from "../support/postgres.ts";
import { closePortArms, freshPostgresPort } from "../support/port-arms.ts";
import { startTestServices, type TestServices } from "../support/services.ts";

/**
 * Announcements and custom emojis on the database port (issue 31): the same services run on
 * SQLite and on PostgreSQL. The API's behaviour is tested over HTTP in announcements.test.ts and
 * custom-emojis.test.ts; this holds the rules on both databases.
 *
 * What is not on the port yet (the accounts and statuses that an announcement's text can name)
 * stays on the SQLite services of `startTestServices`, on both runs: the texts here name no
 * account or status, so what is tested goes through the port alone.
 */

const HOUR = 3_600_000;
const ALICE = 2 ** 45;
const BOB = 2 ** 45 + 1;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await closePortArms();
});

async function sqlite(t: TestServices): Promise<DatabasePort> {
  return t.database.port;
}


/** What was refused: its status and body (as the routes render it). */
async function refusal(work: Promise<unknown>) {
  const e = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(ApiError);
  return { status: (e as ApiError).status, body: (e as ApiError).body };
}

for (const [name, open, skip] of [
  ["SQLite", sqlite, false],
  ["PostgreSQL", freshPostgresPort, !postgresAvailable],
] as const) {
  describe.skipIf(skip)(`announcements and custom emojis on ${name}`, () => {
    async function setUp() {
      const t = await startTestServices();
      cleanups.push(() => t.close());
      const port = await open(t);
      const now = t.clock.now();
      for (const [id, username] of [
        [ALICE, "alice"],
        [BOB, "bob"],
      ] as const)
        await port.run("INSERT INTO accounts (id, username, created_at) VALUES (?, ?, ?)", [id, username, now]);
      const events = new EventBus(port);
      const heard: DomainEvent[] = [];
      for (const type of ["announcement.published", "announcement.reaction", "announcement.deleted"] as const) events.afterCommit(type, (e) => heard.push(e));
      const ids = new IdGenerator(t.clock);
      ids.seed(2 ** 46);
      const { services } = t;
      const emojis = new CustomEmojiService(port, ids, t.clock, new MediaStorage(dirname(t.database.path), "http://rookery.test"));
      const announcements = new AnnouncementService(port, ids, t.clock, "http://rookery.test", services.accounts, services.reader, emojis, events);
      // Rows as the CLI writes them (create is not on the port yet).
      const announce = async (id: number, text: string, times: { startsAt?: number; endsAt?: number } = {}) => {
        await port.run("INSERT INTO announcements (id, text, starts_at, ends_at, all_day, published_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
          id,
          text,
          times.startsAt ?? null,
          times.endsAt ?? null,
          false,
          now,
          now,
          now,
        ]);
        return id;
      };
      const reactions = () => port.all("SELECT account_id, announcement_id, name FROM announcement_reactions ORDER BY id");
      const dismissals = () => port.all("SELECT account_id, announcement_id FROM announcement_dismissals ORDER BY announcement_id");
      return { t, port, now, heard, announcements, emojis, announce, reactions, dismissals };
    }

    test("current ones in the order of what they announce; dismissed and reacted per viewer; a reaction taken back", async () => {
      const { now, heard, announcements, announce } = await setUp();
      const later = await announce(10, "the meeting", { startsAt: now + 2 * HOUR, endsAt: now + 3 * HOUR });
      const plain = await announce(11, "hello everyone");
      await announce(12, "over", { startsAt: now - 3 * HOUR, endsAt: now - HOUR });

      const current = await announcements.current();
      expect(current.map((a) => a.id)).toEqual([plain, later]);
      expect(await announcements.find(later)).toMatchObject({ id: later, text: "the meeting", startsAt: now + 2 * HOUR, allDay: false });

      await announcements.dismiss(ALICE, plain);
      await announcements.dismiss(ALICE, plain);
      await announcements.react(ALICE, plain, "👍");
      await announcements.react(BOB, plain, "👍");
      await announcements.react(BOB, plain, "🎉");
      expect(await announcements.reactionCount(plain, "👍")).toBe(2);
      expect(heard).toEqual([
        { type: "announcement.reaction", announcementId: plain, name: "👍" },
        { type: "announcement.reaction", announcementId: plain, name: "👍" },
        { type: "announcement.reaction", announcementId: plain, name: "🎉" },
      ]);

      const [forAlice, ofLater] = await announcements.views(current, ALICE);
      expect(forAlice).toMatchObject({ html: "<p>hello everyone</p>", read: true, mentions: [], statuses: [], tags: [], emojis: [] });
      expect(forAlice!.reactions).toEqual([
        { name: "👍", count: 2, me: true, emoji: null },
        { name: "🎉", count: 1, me: false, emoji: null },
      ]);
      expect(ofLater).toMatchObject({ read: false, reactions: [] });
      const [forNobody] = await announcements.views([current[0]!], null);
      expect(forNobody).toMatchObject({ read: null, reactions: [{ name: "👍", count: 2, me: null, emoji: null }, { name: "🎉", count: 1, me: null, emoji: null }] });

      await announcements.unreact(BOB, plain, "🎉");
      expect(await announcements.reactionCount(plain, "🎉")).toBe(0);
      expect((await announcements.views([current[0]!], BOB))[0]!.reactions).toEqual([{ name: "👍", count: 2, me: true, emoji: null }]);
      expect(heard.at(-1)).toEqual({ type: "announcement.reaction", announcementId: plain, name: "🎉" });
    });

    test("unknown or ended announcements, a name that is no emoji, the same reaction twice, a ninth kind, a missing reaction: refused, nothing changes", async () => {
      const { now, heard, announcements, announce, reactions, dismissals } = await setUp();
      const shown = await announce(20, "shown");
      const ended = await announce(21, "ended", { startsAt: now - 2 * HOUR, endsAt: now - HOUR });
      const kinds = ["😀", "😁", "😂", "🤣", "😃", "😄", "😅", "😆"];
      for (const kind of kinds) await announcements.react(ALICE, shown, kind);
      const before = { reactions: await reactions(), dismissals: await dismissals(), heard: heard.length };

      const notFound = { status: 404, body: { error: "Record not found" } };
      expect(await refusal(announcements.dismiss(ALICE, 999))).toEqual(notFound);
      expect(await refusal(announcements.dismiss(ALICE, ended))).toEqual(notFound);
      expect(await refusal(announcements.dismiss(ALICE, null))).toEqual(notFound);
      expect(await refusal(announcements.react(ALICE, ended, "👍"))).toEqual(notFound);
      // Both of ReactionValidator's errors: the eight kinds are all taken.
      expect(await refusal(announcements.react(BOB, shown, "nope"))).toEqual({
        status: 422,
        body: { error: "Validation failed: Name is not a recognized emoji, Limit of different reactions reached" },
      });
      expect(await refusal(announcements.react(BOB, shown, ""))).toEqual({ status: 422, body: { error: "Validation failed: Name can't be blank, Limit of different reactions reached" } });
      expect(await refusal(announcements.react(ALICE, shown, "😀"))).toEqual({ status: 422, body: { error: "Duplicate record" } });
      expect(await refusal(announcements.react(BOB, shown, "🎉"))).toEqual({ status: 422, body: { error: "Validation failed: Limit of different reactions reached" } });
      expect(await refusal(announcements.unreact(BOB, shown, "😀"))).toEqual(notFound);

      expect({ reactions: await reactions(), dismissals: await dismissals(), heard: heard.length }).toEqual(before);
      // A kind already given may still be given by another.
      await announcements.react(BOB, shown, "😀");
      expect(await announcements.reactionCount(shown, "😀")).toBe(2);
    });

    test("announcements another process wrote or deleted are told to the streams at the next sync, each once", async () => {
      const { port, heard, announcements, announce } = await setUp();
      const old = await announce(30, "old");
      await announcements.syncOtherWriters();
      expect(heard).toEqual([]);
      const fresh = await announce(31, "fresh");
      await port.run("DELETE FROM announcements WHERE id = ?", [old]);
      await Promise.all([announcements.syncOtherWriters(), announcements.syncOtherWriters()]);
      expect(heard).toEqual([
        { type: "announcement.published", announcementId: fresh },
        { type: "announcement.deleted", announcementId: old },
      ]);
    });

    test("custom emojis: added ones are listed by shortcode; a bad shortcode or image is refused and nothing is stored", async () => {
      const { t, port } = await setUp();
      const storage = new MediaStorage(dirname(t.database.path), "http://rookery.test");
      const ids = new IdGenerator(t.clock);
      ids.seed(2 ** 46);
      const emojis = new CustomEmojiService(port, ids, t.clock, storage);
      const png = new Uint8Array(await sharp({ create: { width: 16, height: 16, channels: 4, background: "#ff0000" } }).png().toBuffer());
      expect(await emojis.list()).toEqual([]);
      await emojis.add("zeta_cat", png);
      await emojis.add("blobcat", png, { category: "cats" });
      const listed = await emojis.list();
      expect(listed.map((r) => [r.shortcode, r.category, r.visibleInPicker])).toEqual([
        ["blobcat", "cats", true],
        ["zeta_cat", null, true],
      ]);

      const rows = await port.all("SELECT * FROM custom_emojis ORDER BY shortcode");
      expect(await refusal(emojis.add("a", png))).toEqual({ status: 422, body: { error: "Validation failed: Shortcode is invalid" } });
      expect(await refusal(emojis.add("not_an_image", new TextEncoder().encode("hello")))).toEqual({
        status: 422,
        body: { error: "Validation failed: Image content type is invalid" },
      });
      expect(await port.all("SELECT * FROM custom_emojis ORDER BY shortcode")).toEqual(rows);
    });

    test("the operator's announcements: made, listed with ended ones, removed, each told once; a bad one or an unknown id refused and nothing changes", async () => {
      const { port, now, heard, announcements, announce } = await setUp();
      const ended = await announce(40, "ended", { startsAt: now - 2 * HOUR, endsAt: now - HOUR });
      const made = await announcements.create({ text: "  the meeting  ", startsAt: now + HOUR, endsAt: now + 2 * HOUR, allDay: true });
      expect(made).toMatchObject({ text: "the meeting", startsAt: now + HOUR, endsAt: now + 2 * HOUR, allDay: true, publishedAt: now });
      expect((await announcements.all()).map((a) => [a.id, a.text, a.allDay])).toEqual([
        [ended, "ended", false],
        [made.id, "the meeting", true],
      ]);
      expect(heard).toEqual([{ type: "announcement.published", announcementId: made.id }]);

      const rows = () => port.all("SELECT * FROM announcements ORDER BY id");
      const before = await rows();
      expect(await refusal(announcements.create({ text: " " }))).toEqual({ status: 422, body: { error: "Validation failed: Text can't be blank" } });
      expect(await refusal(announcements.create({ text: "half", startsAt: now }))).toEqual({ status: 422, body: { error: "Validation failed: Ends at can't be blank" } });
      expect(await refusal(announcements.create({ text: "backwards", startsAt: now, endsAt: now - 1 }))).toEqual({
        status: 422,
        body: { error: "Validation failed: Ends at must be after the start" },
      });
      expect(await refusal(announcements.remove(999))).toEqual({ status: 404, body: { error: "Record not found" } });
      expect(await refusal(announcements.remove(null))).toEqual({ status: 404, body: { error: "Record not found" } });
      expect(await rows()).toEqual(before);
      expect(heard).toHaveLength(1);

      await announcements.remove(ended);
      expect((await announcements.all()).map((a) => a.id)).toEqual([made.id]);
      expect(heard.at(-1)).toEqual({ type: "announcement.deleted", announcementId: ended });
      // Its own creations and removals are not told again as another writer's.
      await announcements.syncOtherWriters();
      await announcements.syncOtherWriters();
      expect(heard).toHaveLength(2);
    });

    test("custom emojis: found by shortcode, named in texts in order of first use, shown on a reaction; a taken shortcode refused; removed with its files", async () => {
      const { t, port, announcements, emojis, announce } = await setUp();
      const png = new Uint8Array(await sharp({ create: { width: 16, height: 16, channels: 4, background: "#00ff00" } }).png().toBuffer());
      const blobcat = await emojis.add("blobcat", png);
      await emojis.add("wave", png);
      expect(await emojis.find("blobcat")).toEqual(blobcat);
      expect(await emojis.find("nope")).toBeUndefined();
      expect((await emojis.inTexts(["hi :wave: and :unknown:", "a:blobcat:b :blobcat: :wave:"])).map((e) => e.shortcode)).toEqual(["wave", "blobcat"]);
      expect(await emojis.inTexts(["no codes here", ":a:"])).toEqual([]);

      const shown = await announce(50, "hello :blobcat:");
      await announcements.react(ALICE, shown, "blobcat");
      const [view] = await announcements.views(await announcements.current(), ALICE);
      expect(view!.emojis).toEqual([emojis.entity(blobcat)]);
      expect(view!.reactions).toEqual([{ name: "blobcat", count: 1, me: true, emoji: emojis.entity(blobcat) }]);

      const rows = () => port.all("SELECT * FROM custom_emojis ORDER BY shortcode");
      const before = await rows();
      expect(await refusal(emojis.add("blobcat", png))).toEqual({ status: 422, body: { error: "Validation failed: Shortcode has already been taken" } });
      expect(await refusal(emojis.remove("nope"))).toEqual({ status: 404, body: { error: "Record not found" } });
      expect(await rows()).toEqual(before);

      const files = [blobcat.imageFile, blobcat.staticFile].map((f) => join(dirname(t.database.path), "media", f));
      expect(files.every((f) => existsSync(f))).toBe(true);
      const gone = await emojis.remove("blobcat");
      expect(gone).toEqual(blobcat);
      // The row first (in the caller's transaction), the files once that committed.
      expect(files.every((f) => existsSync(f))).toBe(true);
      await emojis.removeFiles(gone);
      expect(files.some((f) => existsSync(f))).toBe(false);
      expect((await emojis.list()).map((r) => r.shortcode)).toEqual(["wave"]);
    });
  });
}
