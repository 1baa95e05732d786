import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import type { AccountRow, MediaRow } from "../../src/db/schema.ts";
import { MediaStorage } from "../../src/media-files/storage.ts";
import { MediaService, UNATTACHED_TTL_MS } from "../../src/services/media/media.ts";
import { RemoteMediaCache } from "../../src/services/media/remote-media-cache.ts";
import { StatusMedia } from "../../src/services/media/status-media.ts";
import { RenderCache } from "../../src/services/statuses/render-cache.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Media on the database port (issue 31): uploads, their queue, the short link and the remote
 * media cache run on SQLite and on PostgreSQL. The API's behaviour is tested over HTTP in
 * media.test.ts, uploads.test.ts and federation/media-cache.test.ts; this holds the family's
 * SQL on both. What posting, editing, removal and the reader call (StatusMedia's attaching and
 * reading) stays on the synchronous SQLite API, so attachments are written here through the port.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await closePortArms();
});

function jpeg(width = 40, height = 30): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: "#3366aa" } })
    .jpeg()
    .toBuffer();
}

function file(bytes: Uint8Array): File {
  return new File([bytes as Uint8Array<ArrayBuffer>], "upload.bin", { type: "application/octet-stream" });
}

async function setup(arm: PortArm) {
  const { t, port } = arm;
  const dir = mkdtempSync(join(tmpdir(), "rookery-media-port-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const storage = new MediaStorage(dir, "http://rookery.test");
  const media = new MediaService(port, t.ids, t.clock, storage, new RenderCache(), {
    workers: 1,
    transcodes: 1,
    tools: async () => null,
    available: false,
  });
  cleanups.push(() => media.queue.stop());
  const alice = await arm.mirror(await t.local("alice"));
  const bob = await arm.mirror(await t.local("bob"));
  const rowOf = async (id: number): Promise<MediaRow | undefined> =>
    (await port.orm.select().from(port.tables.mediaAttachments).where(eq(port.tables.mediaAttachments.id, id)))[0];
  /** A public status of `author` in the port's database, made as posting makes one. */
  const status = async (author: AccountRow, visibility: "public" | "private" = "public") => {
    const row = await t.post(author, { text: "with media", visibility });
    if (port !== t.database.port) await port.orm.insert(port.tables.statuses).values(row);
    return row;
  };
  const attach = (mediaId: number, statusId: number) =>
    port.orm.update(port.tables.mediaAttachments).set({ statusId }).where(eq(port.tables.mediaAttachments.id, mediaId));
  return { t, port, storage, media, alice, bob, rowOf, status, attach };
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`media on ${arm.name}`, () => {
    test("an upload is made, read, described, refused to others and deleted with its files", async () => {
      const { media, storage, alice, bob, rowOf } = await setup(await arm.open());
      const made = await media.upload(alice.id, { file: file(await jpeg()), description: "a square", focus: "0.5,-0.5" }, { background: false });
      expect(made).toMatchObject({ accountId: alice.id, type: "image", processing: "complete", description: "a square", statusId: null });
      expect(await rowOf(made.id)).toEqual(made);
      expect(existsSync(storage.resolve(made.file!)!)).toBe(true);

      const shown = await media.show(alice.id, made.id);
      expect(shown).toEqual({ row: made, ready: true });
      const updated = await media.update(alice.id, made.id, { description: "a blue square", focus: "0.1,0.2" });
      expect(updated.row.description).toBe("a blue square");
      expect(JSON.parse(updated.row.meta).focus).toEqual({ x: 0.1, y: 0.2 });
      expect(await rowOf(made.id)).toEqual(updated.row);

      // Someone else's, or no id at all: not found, and nothing changed.
      for (const attempt of [() => media.show(bob.id, made.id), () => media.update(bob.id, made.id, { description: "mine now" }), () => media.remove(bob.id, made.id), () => media.show(alice.id, null)]) {
        const refused = await attempt().catch((e: { status: number; message: string }) => e);
        expect(refused).toMatchObject({ status: 404, message: "Record not found" });
      }
      // A bad focus is refused before anything is written.
      const bad = await media.update(alice.id, made.id, { focus: "2,2" }).catch((e: { status: number }) => e);
      expect(bad).toMatchObject({ status: 422 });
      expect(await rowOf(made.id)).toEqual(updated.row);

      await media.remove(alice.id, made.id);
      expect(await rowOf(made.id)).toBeUndefined();
      expect(existsSync(storage.resolve(made.file!)!)).toBe(false);
    });

    test("a v2 upload is processed on the queue; one put back in the queue by a restart is finished", async () => {
      const { media, alice, rowOf } = await setup(await arm.open());
      const queued = await media.upload(alice.id, { file: file(await jpeg(60, 40)) }, { background: true });
      expect(queued).toMatchObject({ processing: "queued", file: null });
      await media.queue.idle();
      const processed = await rowOf(queued.id);
      expect(processed).toMatchObject({ processing: "complete", uploadFile: null });
      expect(processed!.file).toMatch(/^media_attachments\//);
      expect(JSON.parse(processed!.meta).original).toMatchObject({ width: 60, height: 40 });
      expect((await media.show(alice.id, queued.id)).ready).toBe(true);

      // A job a previous run left queued (its upload kept), and a stray upload it left behind.
      const upload = await media.store("media_uploads", await jpeg(20, 20), "bin");
      const stray = await media.store("media_uploads", await jpeg(20, 20), "bin");
      const left = await media.insertUpload({ accountId: alice.id, type: "image", processing: "queued", uploadFile: upload, file: null, preview: null, thumbnail: null, meta: "{}", description: null, blurhash: null });
      await media.restore();
      await media.queue.idle();
      expect(await rowOf(left.id)).toMatchObject({ processing: "complete", uploadFile: null });
      expect(existsSync(media.storage.resolve(stray)!)).toBe(false);
    });

    test("attached media are not deleted; unattached ones go after their day, attached ones stay", async () => {
      const { t, media, alice, rowOf, status, attach } = await setup(await arm.open());
      const loose = await media.upload(alice.id, { file: file(await jpeg()) }, { background: false });
      const kept = await media.upload(alice.id, { file: file(await jpeg()) }, { background: false });
      const posted = await status(alice);
      await attach(kept.id, posted.id);
      const refused = await media.remove(alice.id, kept.id).catch((e: { status: number; message: string }) => e);
      expect(refused).toMatchObject({ status: 422, message: "Media attachment is currently used by a status" });
      expect(await rowOf(kept.id)).toMatchObject({ statusId: posted.id });

      expect(await media.cleanup()).toBe(0);
      t.clock.advance(UNATTACHED_TTL_MS + 1000);
      expect(await media.cleanup()).toBe(1);
      expect(await rowOf(loose.id)).toBeUndefined();
      expect(await rowOf(kept.id)).toMatchObject({ statusId: posted.id });
    });

    test("the short link leads to the file of a public status's processed media only", async () => {
      const { t, port, media, alice, status, attach } = await setup(await arm.open());
      const statusMedia = new StatusMedia(port, t.clock);
      const onPublic = await media.upload(alice.id, { file: file(await jpeg()) }, { background: false });
      const onPrivate = await media.upload(alice.id, { file: file(await jpeg()) }, { background: false });
      await attach(onPublic.id, (await status(alice)).id);
      await attach(onPrivate.id, (await status(alice, "private")).id);
      expect(await statusMedia.publicFileByShortcode(onPublic.shortcode!)).toBe(onPublic.file);
      expect(await statusMedia.publicFileByShortcode(onPrivate.shortcode!)).toBeNull();
      expect(await statusMedia.publicFileByShortcode("nothing-here")).toBeNull();
    });

    test("a remote status's image is copied here, and let go past the cache's bound", async () => {
      const { t, port, storage, alice, rowOf, status } = await setup(await arm.open());
      const posted = await status(alice);
      const remote = (id: number) =>
        port.orm.insert(port.tables.mediaAttachments).values({
          id,
          accountId: alice.id,
          statusId: posted.id,
          type: "image",
          processing: "complete",
          remoteUrl: `https://remote.example/${id}.jpg`,
          meta: "{}",
          shortcode: null,
          createdAt: t.clock.now(),
        });
      const first = t.ids.next();
      await remote(first);
      const image = await jpeg(50, 50);
      const asked: string[] = [];
      const download = async (url: string) => (asked.push(url), image);
      const cache = new RemoteMediaCache(port, storage, new RenderCache(), { maxTotalBytes: 10_000_000, download });
      await cache.cacheStatus(posted.id);
      expect(asked).toEqual([`https://remote.example/${first}.jpg`]);
      const copied = await rowOf(first);
      expect(copied!.file).toMatch(/^remote_media\//);
      expect(JSON.parse(copied!.meta).original).toMatchObject({ width: 50, height: 50 });

      // A bound of one byte: the copies made are let go again, their files too.
      const tight = new RemoteMediaCache(port, storage, new RenderCache(), { maxTotalBytes: 1, download });
      const second = t.ids.next();
      await remote(second);
      await tight.cacheStatus(posted.id);
      expect(await rowOf(first)).toMatchObject({ file: null, preview: null });
      expect(await rowOf(second)).toMatchObject({ file: null, preview: null });
      expect(existsSync(storage.resolve(copied!.file!)!)).toBe(false);
    });
  });
}
