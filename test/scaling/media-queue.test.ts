import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { MEDIA_LEASE_MS, PgMediaClaims } from "../../src/infra/pg-media-claims.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { freshPgDatabaseWithPool, postgresAvailable } from "../support/postgres.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";
import { startProcess } from "./processes.ts";

/**
 * The media queue across processes on one PostgreSQL (src/infra/pg-media-claims.ts,
 * src/services/media/shared-queue.ts): an upload's job is its row, claimed by one process
 * (FOR UPDATE SKIP LOCKED) under a lease; a process killed holding a job lets it go when the
 * lease runs out, and another finishes it. The processes share DATA_DIR (the scratch folder the
 * uploads wait in), as processes on one machine do.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const database = () => freshPgDatabaseWithPool(cleanups);

/** A data directory the servers share, removed once they all stopped. */
function sharedDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "rookery-mediaq-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function server(url: string, dataDir: string): Promise<TestServer> {
  // One image worker each: with two jobs held, each process must hold one.
  const started = await startTestServer({ DATABASE_URL: url, MEDIA_WORKERS: "1" }, { dataDir });
  cleanups.push(() => started.stop());
  return started;
}

async function upload(user: TestUser, shade: number): Promise<string> {
  const image = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: shade, g: 80, b: 160 } } }).png().toBuffer();
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(image)]), "file.png");
  const res = await user.client.post("/api/v2/media", { multipart: form });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

function filesUnder(dataDir: string, kind: string): string[] {
  const dir = join(dataDir, "media", kind);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

type Job = { id: string; processing: string; claimed_by: string | null };
async function jobs(sql: SQL): Promise<Job[]> {
  return [...(await sql`SELECT id::text AS id, processing, claimed_by FROM media_attachments ORDER BY id`)] as Job[];
}

describe.skipIf(!postgresAvailable)("the media queue across processes", () => {
  test("two claimers at once take ten waiting jobs, each once; a job under a live lease is nobody else's, and only its holder renews it", async () => {
    const { url, sql } = await database();
    const a = await server(url, sharedDataDir());
    // The server's own queue takes nothing: the jobs wait for the two claimers below.
    await a.ctx.services.media.queue.stop();
    const alice = await createUser(a, "alice");
    for (let i = 0; i < 10; i++) await upload(alice, i * 20);
    expect((await jobs(sql)).map((j) => j.processing)).toEqual(Array(10).fill("queued"));
    const x = new PgMediaClaims({ sql, holder: "x" });
    const y = new PgMediaClaims({ sql, holder: "y" });
    // Twenty claims at once, ten by each: SKIP LOCKED gives each job to one of them. Which claimer
    // gets how many is the machine's to decide (on a loaded one, one may get all ten).
    const asked = await Promise.all(Array.from({ length: 10 }, () => [x.claim("image"), y.claim("image")]).flat());
    const byX = asked.filter((id, i): id is number => id !== null && i % 2 === 0);
    const byY = asked.filter((id, i): id is number => id !== null && i % 2 === 1);
    expect(byX.filter((id) => byY.includes(id))).toEqual([]);
    expect([...byX, ...byY].sort()).toEqual((await jobs(sql)).map((j) => Number(j.id)).sort());
    const after = await jobs(sql);
    expect(after.every((j) => j.processing === "in_progress" && j.claimed_by === (byX.includes(Number(j.id)) ? "x" : "y"))).toBe(true);
    // Video and audio are the other lane's; live leases are not taken by a third.
    expect(await x.claim("av")).toBeNull();
    expect(await new PgMediaClaims({ sql, holder: "z" }).claim("image")).toBeNull();
    const [holder, other, held] = byX.length > 0 ? [x, y, byX[0]!] : [y, x, byY[0]!];
    expect(await other.renew(held)).toBe(false);
    expect(await holder.renew(held)).toBe(true);
  });

  test("an upload through one process is processed once, by either, and is readable through both", async () => {
    const { url, sql } = await database();
    const dataDir = sharedDataDir();
    const a = await server(url, dataDir);
    const b = await server(url, dataDir);
    const alice = await createUser(a, "alice");
    const holdA = a.ctx.services.media.queue.hold("rendered");
    const holdB = b.ctx.services.media.queue.hold("rendered");
    const ids = [await upload(alice, 10), await upload(alice, 90), await upload(alice, 170)];
    // One worker each: the first two jobs are held one in each process, the third waits.
    await eventually(() => holdA.held() === 1 && holdB.held() === 1, "each process to hold one job");
    const during = await jobs(sql);
    expect(during.map((j) => j.processing).sort()).toEqual(["in_progress", "in_progress", "queued"]);
    const claimers = during.filter((j) => j.processing === "in_progress").map((j) => j.claimed_by);
    expect(new Set(claimers).size).toBe(2);
    const fromB = new Client(b.base, alice.token);
    for (const id of ids) expect((await fromB.get(`/api/v1/media/${id}`)).status).toBe(206);
    holdA.release();
    holdB.release();
    await eventually(async () => (await jobs(sql)).every((j) => j.processing === "complete"), "every job to be done");
    const done = await jobs(sql);
    expect(done.every((j) => j.claimed_by !== null && claimers.includes(j.claimed_by))).toBe(true);
    for (const id of ids) {
      const seenA = await alice.client.get(`/api/v1/media/${id}`);
      const seenB = await fromB.get(`/api/v1/media/${id}`);
      expect([seenA.status, seenB.status]).toEqual([200, 200]);
      // Each test server has a PUBLIC_URL of its own (its port): the file is the same.
      const path = new URL(seenA.body.url).pathname;
      expect(new URL(seenB.body.url).pathname).toBe(path);
      expect(seenA.body.meta.original.size).toBe("640x480");
      expect((await fetch(`${a.base}${path}`)).status).toBe(200);
      expect((await fetch(`${b.base}${path}`)).status).toBe(200);
    }
    // Rendered once each: no second render left a file behind, and every upload is gone.
    expect(filesUnder(dataDir, "media_attachments").length).toBe(3);
    await eventually(() => filesUnder(dataDir, "media_uploads").length === 0, "the uploads to be removed");
  });

  test("a process killed with kill -9 holding a job: another finishes it once its lease has run out", async () => {
    const { url, sql } = await database();
    const dataDir = sharedDataDir();
    const a = await server(url, dataDir);
    await a.ctx.services.media.queue.stop();
    const alice = await createUser(a, "alice");
    const id = await upload(alice, 50);
    const doomed = await startProcess(["media", url, "doomed", "3000"]);
    cleanups.push(() => doomed.kill());
    expect(await doomed.line()).toBe(`claimed ${id}`);
    const [held] = await sql`SELECT processing, claimed_by, claimed_until FROM media_attachments WHERE id = ${id}`;
    expect([held.processing, held.claimed_by]).toEqual(["in_progress", "doomed"]);
    doomed.kill();
    await doomed.exited;
    const b = await server(url, dataDir);
    const fromB = new Client(b.base, alice.token);
    await eventually(async () => (await fromB.get(`/api/v1/media/${id}`)).status === 200, "another process to finish the job", 30_000);
    const [after] = await sql`SELECT processing, claimed_by, claimed_until FROM media_attachments WHERE id = ${id}`;
    expect(after.processing).toBe("complete");
    expect(after.claimed_by).not.toBe("doomed");
    // Taken only after the dead one's lease ended: the new lease began after it.
    expect(Number(after.claimed_until) - MEDIA_LEASE_MS).toBeGreaterThanOrEqual(Number(held.claimed_until));
    expect(filesUnder(dataDir, "media_attachments").length).toBe(1);
    await eventually(() => filesUnder(dataDir, "media_uploads").length === 0, "the upload to be removed");
  });
});
