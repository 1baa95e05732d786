import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { statuses, type AccountRow, type StatusRow } from "../../src/db/schema.ts";
import type { ApiError } from "../../src/errors.ts";
import { EventBus } from "../../src/infra/events.ts";
import { MediaStorage } from "../../src/media-files/storage.ts";
import { ArchiveImport } from "../../src/services/archive/import.ts";
import { MediaService } from "../../src/services/media/media.ts";
import { StatusMedia } from "../../src/services/media/status-media.ts";
import { QUOTED_NOT_FOUND, QuoteService } from "../../src/services/quotes/quotes.ts";
import { EditingService, type EditInput } from "../../src/services/statuses/editing.ts";
import { NewStatuses } from "../../src/services/statuses/new-status.ts";
import { PostingService } from "../../src/services/statuses/posting.ts";
import { RenderCache } from "../../src/services/statuses/render-cache.ts";
import { FIXTURE, mastodonArchiveFiles, storedZip } from "../support/archives.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Media and quotes attached by posting and editing, on the database port (issue 31): a post
 * with an upload, an edit of its media, a quote post and an archive's posts run on SQLite and on
 * PostgreSQL. Their behaviour over HTTP is tested in media.test.ts, editing.test.ts, quotes*.test.ts
 * and archive/import.test.ts; this holds their SQL on both. The collaborators not converted yet
 * (the reader, accounts, the quote policy) read the arm's SQLite services, so the statuses they
 * must find are written there too (`known`); the family gets an event bus of its own, whose
 * consequences (counters, notifications) are not the family's and stay on SQLite.
 */

const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) c();
  await closePortArms();
});

const rejection = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as ApiError);
const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

async function jpeg(): Promise<File> {
  const bytes = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#3366aa" } }).jpeg().toBuffer();
  return new File([bytes as Uint8Array<ArrayBuffer>], "upload.bin", { type: "application/octet-stream" });
}

function family(arm: PortArm) {
  const { t, port } = arm;
  const s = t.services;
  const dir = mkdtempSync(join(tmpdir(), "rookery-media-quotes-port-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const events = new EventBus(port);
  const rows = new NewStatuses(port);
  const media = new MediaService(port, t.ids, t.clock, new MediaStorage(dir, "http://rookery.test"), new RenderCache(), { workers: 1, transcodes: 1, tools: async () => null, available: false });
  cleanups.push(() => void media.queue.stop());
  const statusMedia = new StatusMedia(port, t.clock);
  const quotes = new QuoteService(port, t.ids, t.clock, events, s.quotes.policy, s.reader, s.renderCache, t.config.publicUrl);
  const posting = new PostingService(port, t.ids, t.clock, t.config, s.accounts, s.moderation, s.reader, events, s.counters, statusMedia, rows, quotes, s.posting.localEmojis);
  const editing = new EditingService(port, t.ids, t.clock, s.reader, posting, events, s.renderCache, { uploads: media, statuses: statusMedia }, rows, async () => null);
  const upload = async (author: AccountRow) => media.upload(author.id, { file: await jpeg() }, { background: false });
  /** A status of the arm's SQLite services, in the port's database too. */
  const copied = async (row: StatusRow) => {
    if (port.dialect === "postgres") await port.orm.insert(port.tables.statuses).values(row);
    return row;
  };
  /** A status the family wrote, where the SQLite reader finds it too. */
  const known = async (row: StatusRow) => {
    if (port.dialect === "postgres") await t.database.port.orm.insert(statuses).values(row);
    return row;
  };
  const mediaRow = (id: number) => port.get("SELECT status_id, position, description, detached_at FROM media_attachments WHERE id = ?", [id]);
  return { t, port, events, media, posting, editing, upload, copied, known, mediaRow };
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`media and quotes attached on ${arm.name}`, () => {
    test("a post with an upload: attached in order; someone else's or an attached upload refused with nothing changed", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const { posting, upload, mediaRow } = family(a);
      const first = await upload(alice);
      const second = await upload(alice);
      const bobs = await upload(bob);

      const row = await posting.publish(await posting.prepare(alice.id, null, { text: "two pictures", mediaIds: [String(second.id), String(first.id)] }));
      expect(await a.port.get("SELECT has_media FROM statuses WHERE id = ?", [row.id])).toEqual({ has_media: a.port.dialect === "postgres" ? true : 1 });
      expect(await mediaRow(second.id)).toMatchObject({ status_id: row.id, position: 0 });
      expect(await mediaRow(first.id)).toMatchObject({ status_id: row.id, position: 1 });

      const before = await count(a, "statuses");
      for (const [ids, missing] of [[[String(bobs.id)], bobs.id], [[String(first.id)], first.id], [["not-a-number"], "not-a-number"]] as const) {
        const refused = await rejection(posting.prepare(alice.id, null, { text: "not mine", mediaIds: [...ids] }));
        expect(refused).toMatchObject({ status: 422, message: `Media ${missing} not found or already attached to another post` });
      }
      expect(await count(a, "statuses")).toBe(before);
      expect(await mediaRow(bobs.id)).toMatchObject({ status_id: null });
      expect(await mediaRow(first.id)).toMatchObject({ status_id: row.id, position: 1 });
    });

    test("an edit swaps the media and describes the new one; the dropped one is detached; bad edits change nothing", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const { posting, editing, upload, known, mediaRow } = family(a);
      const first = await upload(alice);
      const second = await upload(alice);
      const row = await known(await posting.publish(await posting.prepare(alice.id, null, { text: "a picture", mediaIds: [String(first.id)] })));

      a.t.clock.advance(60_000);
      const edited = await editing.edit(alice.id, row.id, { text: "a picture", mediaIds: [String(second.id)], mediaAttributes: [{ id: String(second.id), description: "a blue square" }] });
      expect(edited).toMatchObject({ hasMedia: true, editedAt: a.t.clock.now() });
      expect(await mediaRow(first.id)).toMatchObject({ status_id: null, detached_at: a.t.clock.now() });
      expect(await mediaRow(second.id)).toMatchObject({ status_id: row.id, position: 0, description: "a blue square" });
      expect(await a.port.all("SELECT media_ids, media_descriptions FROM status_edits WHERE status_id = ? ORDER BY id", [row.id])).toEqual([
        { media_ids: JSON.stringify([first.id]), media_descriptions: JSON.stringify([null]) },
        { media_ids: JSON.stringify([second.id]), media_descriptions: JSON.stringify(["a blue square"]) },
      ]);

      const five = [first, second, first, second, first].map((m) => String(m.id));
      const bad: [number, EditInput, object][] = [
        [bob.id, { text: "mine now", mediaIds: [String(second.id)] }, { status: 404 }],
        [alice.id, { text: "too many", mediaIds: five }, { status: 422, message: "Cannot attach more than 4 files" }],
        [alice.id, { text: "bad focus", mediaIds: [String(second.id)], mediaAttributes: [{ id: String(second.id), focus: "2,2" }] }, { status: 422 }],
      ];
      for (const [who, input, answer] of bad) expect(await rejection(editing.edit(who, row.id, input))).toMatchObject(answer);
      expect(await count(a, "status_edits")).toBe(2);
      expect(await mediaRow(second.id)).toMatchObject({ status_id: row.id, description: "a blue square" });
      expect(await mediaRow(first.id)).toMatchObject({ status_id: null });
    });

    test("a quote post: its quote row accepted and the quoted author mentioned silently; a missing or refusing status answered 404 with nothing written", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const { t, posting, events, copied } = family(a);
      const quoted = await copied(await t.post(alice, { text: "quote me" }));
      const closed = await copied(await t.post(alice, { text: "not this one", quotePolicy: "nobody" }));
      const heard: string[] = [];
      events.within("quote.accepted", (e) => void heard.push(`${e.type} ${e.quote.statusId} ${e.withStatus}`));

      const row = await posting.publish(await posting.prepare(bob.id, null, { text: "look at this", quotedStatusId: String(quoted.id) }));
      expect(row.contentHtml).toContain(`<p class="quote-inline">RE: <a href="${t.config.publicUrl}/@alice/${quoted.id}">`);
      expect(await a.port.all("SELECT status_id, account_id, quoted_status_id, quoted_account_id, state, activity_uri FROM quotes")).toEqual([
        { status_id: row.id, account_id: bob.id, quoted_status_id: quoted.id, quoted_account_id: alice.id, state: "accepted", activity_uri: null },
      ]);
      expect(await a.port.all("SELECT account_id FROM mentions WHERE status_id = ?", [row.id])).toEqual([{ account_id: alice.id }]);
      expect(heard).toEqual([`quote.accepted ${row.id} true`]);

      const before = await count(a, "statuses");
      for (const id of [String(closed.id), "999999999", "nothing"]) {
        expect(await rejection(posting.prepare(bob.id, null, { text: "and this", quotedStatusId: id }))).toMatchObject({ status: 404, message: QUOTED_NOT_FOUND });
      }
      expect(await count(a, "statuses")).toBe(before);
      expect(await count(a, "quotes")).toBe(1);
      expect(heard).toHaveLength(1);
    });

    test("an archive's posts with their media; the same archive again brings nothing new", async () => {
      const a = await arm.open();
      const ann = await a.mirror(await a.t.local("ann"));
      const { t, port, media, posting } = family(a);
      const dir = mkdtempSync(join(tmpdir(), "rookery-archive-port-"));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const zip = join(dir, "ann.zip");
      writeFileSync(zip, storedZip(await mastodonArchiveFiles()));
      const archives = new ArchiveImport(port, t.clock, posting, media);

      const summary = await archives.importArchive(ann, zip);
      expect(summary).toMatchObject({ imported: FIXTURE.imported, media: { imported: 1, missing: 0, failed: 0 } });
      expect(Number((await port.get<{ n: number }>("SELECT count(*) AS n FROM statuses WHERE account_id = ?", [ann.id]))!.n)).toBe(FIXTURE.imported);
      const attached = await port.all<{ description: string; position: number; has_media: unknown }>(
        "SELECT m.description, m.position, s.has_media FROM media_attachments m JOIN statuses s ON s.id = m.status_id WHERE s.account_id = ?",
        [ann.id],
      );
      expect(attached).toEqual([{ description: "A red square", position: 0, has_media: port.dialect === "postgres" ? true : 1 }]);

      const again = await archives.importArchive(ann, zip);
      expect(again).toMatchObject({ imported: 0, alreadyImported: FIXTURE.imported });
      expect(Number((await port.get<{ n: number }>("SELECT count(*) AS n FROM statuses WHERE account_id = ?", [ann.id]))!.n)).toBe(FIXTURE.imported);
      expect(await count(a, "media_attachments")).toBe(1);
    });
  });
}
