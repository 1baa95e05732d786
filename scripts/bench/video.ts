/**
 * Video uploads: a 1080p phone clip (HEVC in a QuickTime .mov, AAC sound, so it is fully
 * transcoded) through POST /api/v1/media, timed to its 200 answer, with the peak memory of the
 * server and of the ffmpeg it starts; then what image uploads and a cheap read cost while a
 * v2 upload of the same clip is transcoded in the background, against the idle server.
 * Baseline from the same run: the bundled ffmpeg alone, with the server's transcode options.
 *
 *   bun scripts/bench/video.ts [seconds of clip, default 30]
 */
import sharp from "sharp";
import { spawn, spawnSync } from "bun";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, fmt, ROOT, rss, seedUser, startRookery, wrkAsync, type WrkResult } from "./lib.ts";

const seconds = Number(process.argv[2] ?? 30);
const FFMPEG = join(ROOT, "node_modules/@ffmpeg-installer/linux-x64/ffmpeg");
const FFPROBE = join(ROOT, "node_modules/@ffprobe-installer/linux-x64/ffprobe");
const IMAGE_UPLOADS = 12;
const IMAGE_CONCURRENCY = 2;
const work = mkdtempSync(join(tmpdir(), "rookery-video-bench-"));
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 1)} MB`;
const label = (s: string) => s.padEnd(44);

function percentile(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function ffmpeg(args: string[]) {
  const out = spawnSync([FFMPEG, "-nostdin", "-hide_banner", "-loglevel", "error", ...args]);
  if (out.exitCode !== 0) throw new Error(`ffmpeg failed: ${out.stderr.toString().slice(-500)}`);
}

type Probe = { format: { duration: string; size: string; bit_rate: string; tags?: { major_brand?: string } }; streams: { codec_type: string; codec_name: string; width?: number; height?: number; avg_frame_rate?: string }[] };
function probe(path: string): Probe {
  return JSON.parse(spawnSync([FFPROBE, "-v", "error", "-show_format", "-show_streams", "-of", "json", path]).stdout.toString()) as Probe;
}
function describe(p: Probe) {
  const v = p.streams.find((s) => s.codec_type === "video");
  const a = p.streams.find((s) => s.codec_type === "audio");
  return `[${p.format.tags?.major_brand?.trim() ?? "?"}] ${v?.codec_name} ${v?.width}x${v?.height} @ ${v?.avg_frame_rate}${a ? ` + ${a.codec_name}` : ""}, ${fmt(Number(p.format.duration), 1)} s, ${mb(Number(p.format.size))} (${fmt(Number(p.format.bit_rate) / 1e6, 1)} Mbit/s)`;
}

/**
 * A process's descendants, from /proc/<pid>/task/<tid>/children: the server starts ffmpeg
 * through /bin/sh, which execs it (so the child's pid becomes ffmpeg's), but walking the
 * whole tree also catches a shell that has not exec'd yet.
 */
function descendants(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((tid) => {
    let text = "";
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8");
    } catch {}
    return text.split(/\s+/).filter(Boolean).map(Number).flatMap((child) => [child, ...descendants(child)]);
  });
}
const rssOf = (pid: number) => {
  try {
    return rss(pid);
  } catch {
    return null; // exited between listing and reading
  }
};
const comm = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
};

/**
 * Samples every 100 ms the RSS of a process and of its descendants. The root's peak is the
 * largest sample (its VmHWM would include everything before the watch); a child's is its own
 * VmHWM, which also holds what came between samples. The total is the largest sampled sum.
 */
function watchMemory(root: number) {
  let server = 0;
  let children = 0;
  let total = 0;
  const tick = () => {
    const own = rssOf(root);
    let sum = own?.now ?? 0;
    for (const pid of descendants(root)) {
      const m = rssOf(pid);
      if (!m) continue;
      sum += m.now;
      children = Math.max(children, m.peak);
    }
    server = Math.max(server, own?.now ?? 0);
    total = Math.max(total, sum);
  };
  tick();
  const timer = setInterval(tick, 100);
  return {
    stop() {
      clearInterval(timer);
      tick();
      return { server, children, total };
    },
  };
}

// 1. The clip: testsrc2's moving pattern with temporal noise (as a phone sensor gives, so the
// encoders have detail to spend bits on), a 440 Hz tone in 48 kHz stereo. HEVC in .mov tagged
// hvc1 as an iPhone writes it; the same as an H.264 MP4 within the server's bitrate (passed through).
const clip = join(work, "clip.mov");
const clipMp4 = join(work, "clip.mp4");
let t = performance.now();
// prettier-ignore
ffmpeg([
  "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30,noise=alls=10:allf=t",
  "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
  "-t", String(seconds), "-map", "0:v", "-map", "1:a", "-pix_fmt", "yuv420p", "-ac", "2",
  "-c:v", "libx265", "-preset", "ultrafast", "-b:v", "9M", "-x265-params", "log-level=error", "-tag:v", "hvc1",
  "-c:a", "aac", "-b:a", "192k", "-f", "mov", "-y", clip,
  "-t", String(seconds), "-map", "0:v", "-map", "1:a", "-pix_fmt", "yuv420p", "-ac", "2",
  "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "5M", "-maxrate", "5.5M", "-bufsize", "10M",
  "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", "-f", "mp4", "-y", clipMp4,
]);
console.log(`Generated in ${fmt((performance.now() - t) / 1000, 1)} s:`);
const input = probe(clip);
console.log(`  phone clip  ${describe(input)}`);
console.log(`  passthrough ${describe(probe(clipMp4))}\n`);

// 2. Baseline: ffmpeg alone with transcodeVideo's options (src/media-files/video.ts), at the
// bitrate it computes: 0.11 bits per pixel per frame at 30 fps, capped to fit 99 MB.
const video = input.streams.find((s) => s.codec_type === "video") as { width: number; height: number };
const duration = Math.max(Number(input.format.duration), 1);
const bitrate = Math.max(100_000, Math.min(Math.floor(video.width * video.height * 30 * 0.11), Math.floor((99 * 1024 * 1024 * 8) / duration) - 192_000));
const baselineOut = join(work, "baseline.mp4");
t = performance.now();
// prettier-ignore
const direct = spawn([
  FFMPEG, "-nostdin", "-hide_banner", "-loglevel", "error", "-threads", "1", "-filter_threads", "1", "-i", clip,
  "-map", "0:v:0", "-map", "0:a:0", "-threads", "1", "-map_metadata", "-1", "-map_chapters", "-1", "-sn", "-dn", "-vf", "crop=floor(iw/2)*2:floor(ih/2)*2",
  "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-b:v", String(bitrate), "-maxrate", String(bitrate + 192_000),
  "-bufsize", String(bitrate * 5), "-frames:v", "36000", "-c:a", "aac", "-b:a", "192k", "-movflags", "+faststart", "-f", "mp4", "-y", baselineOut,
], { stdout: "ignore", stderr: "inherit" });
// The process's own VmHWM, sampled until it exits (watchMemory's root figure is its RSS).
let directPeak = 0;
const directTimer = setInterval(() => (directPeak = Math.max(directPeak, rssOf(direct.pid)?.peak ?? 0)), 100);
await direct.exited;
clearInterval(directTimer);
const baselineSeconds = (performance.now() - t) / 1000;
console.log(`${label("baseline: ffmpeg alone (same options)")} ${fmt(baselineSeconds, 1).padStart(6)} s   ffmpeg peak ${fmt(directPeak)} MB   (${fmt(seconds / baselineSeconds, 2)}x real time, ${fmt(bitrate / 1e6, 2)} Mbit/s target)`);
console.log(`  ${describe(probe(baselineOut))}`);

// A phone photo: 4032x3024 (12 megapixels), noise softened as in media.ts, about 4.5 MB.
const noise = await sharp({ create: { width: 4032, height: 3024, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 40 } } })
  .png()
  .toBuffer();
const jpeg = await sharp(noise).blur(0.8).jpeg({ quality: 90 }).toBuffer();

const rookery = await startRookery(3941);
try {
  const user = await seedUser(rookery, "filmer");
  const auth = { authorization: `Bearer ${user.token}` };
  // Something for the home timeline to read (20 statuses), so the cheap request is a real one.
  for (let i = 0; i < 20; i++) await fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ status: `status ${i}` }) });
  const upload = (version: "v1" | "v2", file: Blob, name: string) => {
    const form = new FormData();
    form.append("file", file, name);
    return fetch(`${rookery.url}/api/${version}/media`, { method: "POST", body: form, headers: auth });
  };
  const mediaStatus = (id: string) => fetch(`${rookery.url}/api/v1/media/${id}`, { headers: auth }).then((r) => r.status);

  // 3. v1: transcoded before the answer, watched from the request to the 200.
  for (const [what, path, name] of [["POST /api/v1/media, HEVC .mov", clip, "clip.mov"], ["POST /api/v1/media, H.264 MP4 (passthrough)", clipMp4, "clip.mp4"]] as const) {
    const before = rss(rookery.proc.pid).now;
    const watch = watchMemory(rookery.proc.pid);
    t = performance.now();
    const res = await upload("v1", Bun.file(path), name);
    const elapsed = (performance.now() - t) / 1000;
    const memory = watch.stop();
    const body = (await res.json()) as { type: string; url: string; meta?: { original?: Record<string, unknown> } };
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(body)}`);
    console.log(`${label(what)} ${fmt(elapsed, 1).padStart(6)} s   server ${fmt(memory.server)} MB + ffmpeg ${fmt(memory.children)} MB = ${fmt(memory.total)} MB peak (server ${fmt(before)} MB before)`);
    const out = join(work, `result-${name}.mp4`);
    await Bun.write(out, await fetch(body.url));
    console.log(`  type ${body.type}, ${describe(probe(out))}\n  meta.original ${JSON.stringify(body.meta?.original)}`);
  }

  // 4. Image uploads and a cheap read, idle and then during a v2 transcode of the clip.
  const imageRun = async () => {
    const latencies: number[] = [];
    let failures = 0;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: IMAGE_CONCURRENCY }, async () => {
        while (next++ < IMAGE_UPLOADS) {
          const start = performance.now();
          const res = await upload("v1", new Blob([jpeg], { type: "image/jpeg" }), "photo.jpg");
          await res.arrayBuffer();
          if (res.status !== 200) failures++;
          latencies.push(performance.now() - start);
        }
      }),
    );
    return { perSecond: IMAGE_UPLOADS / ((performance.now() - started) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), failures };
  };
  const cheap = () => wrkAsync(`${rookery.url}/api/v1/timelines/home`, { seconds: 5, connections: 8, headers: auth });
  const printImages = (what: string, r: Awaited<ReturnType<typeof imageRun>>) =>
    console.log(`${label(what)} ${fmt(r.perSecond, 2).padStart(7)} uploads/s   p50 ${fmt(r.p50).padStart(5)} ms   p99 ${fmt(r.p99).padStart(5)} ms${r.failures ? `   failures: ${r.failures}` : ""}`);
  const printCheap = (what: string, r: WrkResult) =>
    console.log(`${label(what)} ${fmt(r.requestsPerSecond).padStart(7)} req/s       p50 ${fmt(r.p50ms, 2).padStart(5)} ms   p99 ${fmt(r.p99ms, 2).padStart(5)} ms${r.non2xx ? `   non-2xx: ${r.non2xx}` : ""}`);

  console.log(`\nImages: 4032x3024 JPEG of ${mb(jpeg.length)}, ${IMAGE_UPLOADS} uploads ${IMAGE_CONCURRENCY} at a time; cheap read: wrk 8 connections 5 s`);
  printImages("idle: image uploads (POST /api/v1/media)", await imageRun());
  printCheap("idle: GET /api/v1/timelines/home", await cheap());

  t = performance.now();
  const res = await upload("v2", Bun.file(clip), "clip.mov");
  const { id } = (await res.json()) as { id: string };
  const accepted = performance.now();
  console.log(`v2 upload of the clip answered ${res.status} in ${fmt((accepted - t) / 1000, 1)} s (probe and preview frame)`);
  // The transcode's ffmpeg, to read how much CPU it got while requests ran.
  let transcoder = 0;
  for (let i = 0; i < 100 && !transcoder; i++, await Bun.sleep(50)) transcoder = descendants(rookery.proc.pid).find((pid) => comm(pid) === "ffmpeg") ?? 0;
  const cpu = (pid: number) => {
    try {
      return cpuSeconds(pid);
    } catch {
      return NaN;
    }
  };
  for (const [what, runIt] of [
    ["transcoding: image uploads", async () => printImages("transcoding: image uploads", await imageRun())],
    ["transcoding: GET /api/v1/timelines/home", async () => printCheap("transcoding: GET /api/v1/timelines/home", await cheap())],
  ] as const) {
    const [cpu0, w0] = [cpu(transcoder), performance.now()];
    await runIt();
    const [cpu1, w1] = [cpu(transcoder), performance.now()];
    const status = await mediaStatus(id);
    console.log(`  (${what}) video still ${status === 206 ? "processing (206)" : `done (${status})`}; its ffmpeg used ${fmt(((cpu1 - cpu0) / ((w1 - w0) / 1000)) * 100)}% of a core meanwhile`);
  }
  while ((await mediaStatus(id)) === 206) await Bun.sleep(100);
  console.log(`v2 transcode finished ${fmt((performance.now() - accepted) / 1000, 1)} s after the 202 (the request runs above included)`);
} finally {
  await rookery.stop();
  rmSync(work, { recursive: true, force: true });
}
