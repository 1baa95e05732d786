/**
 * Media uploads of a 12-megapixel JPEG: images/s through POST /api/v1/media (processed before
 * answering) and the latency of POST /api/v2/media answers (the original is made in the
 * background), with the server's peak memory. Baselines from the same run: a bare Elysia
 * route receiving the same upload, and sharp alone doing the same processing in-process.
 *
 *   bun scripts/bench/media.ts [uploads per run, default 24] [concurrent uploads, default 4]
 */
import sharp from "sharp";
import { blurhashOf, inspect, renderOriginal, renderPreview } from "../../src/media-files/images.ts";
import { fmt, rss, seedUser, startBaseline, startRookery } from "./lib.ts";

const total = Number(process.argv[2] ?? 24);
const concurrency = Number(process.argv[3] ?? 4);

function percentile(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function run(label: string, send: () => Promise<Response>, expected: number[], ids: string[] = []) {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const t = performance.now();
        const res = await send();
        const body = (await res.json().catch(() => ({}))) as { id?: string };
        if (body.id) ids.push(body.id);
        if (!expected.includes(res.status)) failures++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${label.padEnd(36)} ${fmt(total / seconds, 2).padStart(7)} uploads/s   p50 ${fmt(percentile(latencies, 50)).padStart(6)} ms   p99 ${fmt(percentile(latencies, 99)).padStart(6)} ms${failures ? `   failures: ${failures}` : ""}`,
  );
  return seconds;
}

// Noise softened a little: about the size and texture of a 12-megapixel phone photo (4.5 MB).
const noise = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 40 } } })
  .png()
  .toBuffer();
const jpeg = await sharp(noise).blur(0.8).jpeg({ quality: 90 }).toBuffer();
console.log(`Input: 4000x3000 JPEG of ${fmt(jpeg.length / 1024 / 1024, 1)} MB; ${total} uploads per run, ${concurrency} at a time\n`);

// Baseline 1: the same processing with nothing around it.
let t = performance.now();
for (let i = 0; i < 4; i++) {
  const info = await inspect(jpeg);
  const [, preview] = await Promise.all([renderOriginal(jpeg, info), renderPreview(jpeg, info)]);
  await blurhashOf(preview.data);
}
console.log(`${"baseline: sharp alone, in-process".padEnd(36)} ${fmt(4 / ((performance.now() - t) / 1000), 2).padStart(7)} images/s (one at a time)`);

const baseline = await startBaseline(3911);
const rookery = await startRookery(3912);
try {
  const user = await seedUser(rookery, "uploader");
  const form = () => {
    const f = new FormData();
    f.append("file", new Blob([jpeg], { type: "image/jpeg" }), "photo.jpg");
    return f;
  };
  const auth = { authorization: `Bearer ${user.token}` };
  await run("baseline: bare Elysia receives upload", () => fetch(`${baseline.url}/upload`, { method: "POST", body: form() }), [200]);
  await run("POST /api/v1/media (processed)", () => fetch(`${rookery.url}/api/v1/media`, { method: "POST", body: form(), headers: auth }), [200]);
  const ids: string[] = [];
  t = performance.now();
  await run("POST /api/v2/media (answer only)", () => fetch(`${rookery.url}/api/v2/media`, { method: "POST", body: form(), headers: auth }), [202], ids);
  // Then until the queue has made every original (GET answers 200 instead of 206).
  let waiting = [...ids];
  while (waiting.length > 0) {
    await Bun.sleep(100);
    const statuses = await Promise.all(waiting.map((id) => fetch(`${rookery.url}/api/v1/media/${id}`, { headers: auth }).then((r) => r.status)));
    waiting = waiting.filter((_, i) => statuses[i] === 206);
  }
  const drained = (performance.now() - t) / 1000;
  console.log(`${"v2 including background processing".padEnd(36)} ${fmt(total / drained, 2).padStart(7)} uploads/s`);
  const memory = rss(rookery.proc.pid);
  console.log(`Rookery RSS: ${fmt(memory.now, 1)} MB now, peak ${fmt(memory.peak, 1)} MB`);
} finally {
  await rookery.stop();
  await baseline.stop();
}
