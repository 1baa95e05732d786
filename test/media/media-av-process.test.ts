import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/connection.ts";
import type { DatabasePort } from "../../src/db/port.ts";
import { MEDIA_LEASE_MS } from "../../src/infra/pg-media-claims.ts";
import { openPortDatabase } from "../../src/server-database.ts";
import { clips, decodes, longClip, removeClips } from "../support/clips.ts";
import { cli, serveProcess, signIn } from "../support/serve-process.ts";
import { databaseEnv, dropDatabase, knownDatabaseEnv } from "../support/test-database.ts";
import { eventually } from "../support/wait.ts";

afterAll(() => removeClips());

/** Processes whose command line mentions `text` (the ffmpeg working on one upload). */
function processesWith(text: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text)) found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The database of the server process on `dataDir`, read beside it: SQLite's file read-only, or its PostgreSQL database in the test mode. */
async function readerOf(dataDir: string): Promise<{ port: DatabasePort; close(): unknown }> {
  const env = knownDatabaseEnv(dataDir);
  if (env.DATABASE_URL) return openPortDatabase(loadConfig({ DATA_DIR: dataDir, ...env }));
  return openDatabase(dataDir, { readonly: true });
}

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

test("kill -9 while a video transcodes: ffmpeg goes with the server, and the restarted server processes the video", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-video-kill-"));
  // In the PostgreSQL test mode the directory's database is made first: the commands run before the server and are told it.
  await databaseEnv(dataDir);
  cli(dataDir, ["migrate"]);
  cli(dataDir, ["accounts", "create", "vic", "--email", "vic@example.test", "--password", "vics password"]);
  const clip = await longClip(60);
  let running = await serveProcess(dataDir);
  try {
    const client = await signIn(running.base, "vic", "vics password");
    const form = new FormData();
    form.append("file", new Blob([clip as Uint8Array<ArrayBuffer>]), "long.mp4");
    const res = await client.post("/api/v2/media", { multipart: form });
    expect(res.status).toBe(202);
    const db = await readerOf(dataDir);
    const row = async () => (await db.port.get<{ processing: string; upload: string | null }>("SELECT processing, upload_file AS upload FROM media_attachments WHERE id = ?", [Number(res.body.id)]))!;
    // The job has claimed the upload and its ffmpeg is running (named by the upload's scratch file).
    await eventually(async () => {
      const now = await row();
      return now.processing === "in_progress" && processesWith(now.upload!.replace(/\.bin$/, ".mp4")).length > 0;
    }, "ffmpeg at work", 20_000);
    const ffmpeg = processesWith((await row()).upload!.replace(/\.bin$/, ".mp4"));
    running.proc.kill("SIGKILL");
    await running.proc.exited;
    // The watchdog beside ffmpeg notices its server is gone.
    await eventually(() => ffmpeg.every((pid) => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[2] === "Z"), "ffmpeg to end");
    expect((await row()).processing).toBe("in_progress");
    // What a v1 upload killed in the middle leaves: an upload no row names, and its output.
    const stray = join(dataDir, "media", "media_uploads", "2026", "01");
    mkdirSync(stray, { recursive: true });
    writeFileSync(join(stray, "StrayUploadOfAKilledRequest.bin"), "x");
    writeFileSync(join(stray, "StrayUploadOfAKilledRequest.mp4"), "x");
    // Left two hours ago: on PostgreSQL a younger stray may be another process's upload under
    // way, and is kept (src/services/media/scratch.ts).
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    for (const name of ["StrayUploadOfAKilledRequest.bin", "StrayUploadOfAKilledRequest.mp4"]) utimesSync(join(stray, name), twoHoursAgo, twoHoursAgo);

    running = await serveProcess(dataDir);
    const again = await signIn(running.base, "vic", "vics password");
    // On PostgreSQL the dead process's claim holds the job until its lease runs out (the restart
    // has another worker name: src/infra/pg-media-claims.ts), then the transcode starts over.
    const lease = knownDatabaseEnv(dataDir).DATABASE_URL ? MEDIA_LEASE_MS : 0;
    await eventually(async () => (await again.get(`/api/v1/media/${res.body.id}`)).status !== 206, "the video to be processed", 60_000 + lease);
    const done = await again.get(`/api/v1/media/${res.body.id}`);
    expect(done.status).toBe(200);
    expect(done.body.type).toBe("video");
    expect(done.body.meta.original.duration).toBeCloseTo(60, 0);
    const served = new Uint8Array(await (await fetch(done.body.url)).arrayBuffer());
    expect(await decodes(served)).toBe(true);
    // Nothing of the killed run is left: not the upload, not the half-written output, not the strays.
    expect(files(join(dataDir, "media", "media_uploads"))).toEqual([]);
    expect(files(join(dataDir, "media", "media_attachments"))).toHaveLength(1);
    await db.close();
  } finally {
    running.proc.kill("SIGKILL");
    await running.proc.exited;
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabase(dataDir);
  }
}, 160_000);

test("with no ffmpeg: video is refused with a clear 422, the instance lists no video, and a GIF stays an animated image", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-no-ffmpeg-"));
  await databaseEnv(dataDir);
  cli(dataDir, ["migrate"]);
  cli(dataDir, ["accounts", "create", "nia", "--email", "nia@example.test", "--password", "nias password"]);
  const running = await serveProcess(dataDir, { FFMPEG_PATH: join(dataDir, "missing-ffmpeg"), FFPROBE_PATH: join(dataDir, "missing-ffprobe") });
  try {
    const client = await signIn(running.base, "nia", "nias password");
    const upload = (bytes: Uint8Array) => {
      const form = new FormData();
      form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), "upload.bin");
      return client.post("/api/v1/media", { multipart: form });
    };
    const video = await upload(await clips.mp4());
    expect(video.status).toBe(422);
    expect(video.body).toEqual({ error: "Video and audio uploads are not supported on this server (ffmpeg is not available)" });
    const media = (await client.get("/api/v2/instance")).body.configuration.media_attachments;
    expect(media.supported_mime_types).toEqual(["image/jpeg", "image/png", "image/gif", "image/webp", "image/avif"]);
    expect(media.video_size_limit).toBe(0);
    const gif = await upload(await clips.gif());
    expect(gif.status).toBe(200);
    expect(gif.body.type).toBe("image");
    const served = await fetch(gif.body.url);
    expect(served.headers.get("content-type")).toBe("image/gif");
    expect(files(join(dataDir, "media", "media_uploads"))).toEqual([]);
  } finally {
    running.proc.kill("SIGKILL");
    await running.proc.exited;
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabase(dataDir);
  }
}, 60_000);
