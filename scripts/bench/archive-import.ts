// How long `rookery accounts import-archive` takes over a Mastodon archive of 10,000 posts
// (issue 27: under a minute on the project's machines), and a second run over the same one
// (which adds nothing); then `export-archive` of the account it made.
//
//   bun scripts/bench/archive-import.ts [posts=10000] [one post in N has an image=20]
//
// The archive is Mastodon's layout, made here: public posts with hashtags, one in 7 with a
// content warning, one in 10 a reply to the post before it, one in 50 a poll, one in N with a
// 1280x960 JPEG and its alt text, and on top of them 5% private posts and boosts (skipped).
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "../../src/media-files/sharp.ts";
import { utf8 } from "../../src/services/archive/streams.ts";
import { zipStream, type ArchiveEntry } from "../../src/services/archive/zip.ts";

const POSTS = Number(process.argv[2] ?? 10_000);
const IMAGE_EVERY = Number(process.argv[3] ?? 20);
const ROOT = join(import.meta.dir, "..", "..");
const work = mkdtempSync(join(tmpdir(), "rookery-bench-archive-"));
const dataDir = join(work, "data");
const ACTOR = "https://old.example/users/ann";
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const FOLLOWERS = `${ACTOR}/followers`;

function outboxItems(): unknown[] {
  const items: unknown[] = [];
  const start = Date.UTC(2017, 3, 1);
  const step = Math.floor((Date.UTC(2026, 0, 1) - start) / POSTS);
  for (let i = 1; i <= POSTS; i++) {
    const published = new Date(start + i * step).toISOString().replace(/\.\d{3}Z$/, "Z");
    const id = `${ACTOR}/statuses/${i}`;
    const object: Record<string, unknown> = {
      id,
      type: "Note",
      published,
      attributedTo: ACTOR,
      to: [PUBLIC],
      cc: [FOLLOWERS],
      summary: i % 7 === 0 ? "a content warning" : null,
      sensitive: i % 7 === 0,
      inReplyTo: i % 10 === 0 ? `${ACTOR}/statuses/${i - 1}` : null,
      content: `<p>Post number ${i}, about <a href="https://old.example/tags/bench" class="mention hashtag" rel="tag">#<span>bench</span></a> and other things, with a <a href="https://example.com/${i}">link</a>.</p>`,
      contentMap: { en: "" },
      tag: [{ type: "Hashtag", href: "https://old.example/tags/bench", name: "#bench" }],
      attachment: i % IMAGE_EVERY === 0 ? [{ type: "Document", mediaType: "image/jpeg", url: `media_attachments/files/${i}/original/photo.jpg`, name: `Photo ${i}` }] : [],
    };
    if (i % 50 === 0) {
      Object.assign(object, { type: "Question", endTime: published, closed: published, votersCount: 3, oneOf: [{ type: "Note", name: "yes", replies: { totalItems: 2 } }, { type: "Note", name: "no", replies: { totalItems: 1 } }] });
    }
    items.push({ id: `${id}/activity`, type: "Create", actor: ACTOR, published, to: object.to, cc: object.cc, object });
    // Skipped by the import: a private post and a boost every 20 posts.
    if (i % 20 === 0) {
      items.push({ id: `${id}p/activity`, type: "Create", actor: ACTOR, published, to: [FOLLOWERS], cc: [], object: { ...object, id: `${id}p`, to: [FOLLOWERS], cc: [], attachment: [], type: "Note" } });
      items.push({ id: `${id}b/activity`, type: "Announce", actor: ACTOR, published, to: [PUBLIC], cc: [FOLLOWERS], object: "https://other.example/users/bob/statuses/1" });
    }
  }
  return items;
}

async function makeArchive(path: string) {
  // Noise compresses like a photograph's detail: a JPEG of a few hundred KB, as phones send.
  const photo = new Uint8Array(await sharp({ create: { width: 1280, height: 960, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 20 } } }).jpeg({ quality: 80 }).toBuffer());
  const items = outboxItems();
  const date = new Date();
  const entries: ArchiveEntry[] = [
    { name: "outbox.json", date, body: () => utf8([JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: "outbox.json", type: "OrderedCollection", totalItems: items.length, orderedItems: items })]) },
  ];
  for (let i = IMAGE_EVERY; i <= POSTS; i += IMAGE_EVERY) {
    entries.push({ name: `media_attachments/files/${i}/original/photo.jpg`, date, size: photo.length, body: async function* () { yield photo; } });
  }
  entries.push({ name: "actor.json", date, body: () => utf8([JSON.stringify({ id: ACTOR, type: "Person", followers: FOLLOWERS, outbox: "outbox.json" })]) });
  const chunks: Uint8Array[] = [];
  for await (const chunk of zipStream(entries)) chunks.push(chunk);
  writeFileSync(path, Buffer.concat(chunks));
  return { items: items.length, images: Math.floor(POSTS / IMAGE_EVERY), photoBytes: photo.length };
}

function run(args: string[]) {
  const started = performance.now();
  const proc = Bun.spawnSync([process.execPath, "src/main.ts", ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false" }, stderr: "ignore" });
  const seconds = (performance.now() - started) / 1000;
  if (proc.exitCode !== 0) throw new Error(`${args.join(" ")} failed: ${proc.stdout.toString()}`);
  return { seconds, stdout: proc.stdout.toString().trim() };
}

try {
  const archive = join(work, "archive.zip");
  const made = await makeArchive(archive);
  console.log(`archive: ${made.items} outbox items (${POSTS} public posts), ${made.images} JPEGs of ${(made.photoBytes / 1024).toFixed(0)} KB, ${(statSync(archive).size / (1024 * 1024)).toFixed(1)} MB`);
  run(["migrate"]);
  run(["accounts", "create", "ann", "--email", "ann@example.test", "--password", "correct horse battery staple"]);
  const first = run(["accounts", "import-archive", "ann", archive]);
  console.log(`import:        ${first.seconds.toFixed(1)} s\n${first.stdout}`);
  const second = run(["accounts", "import-archive", "ann", archive]);
  console.log(`import again:  ${second.seconds.toFixed(1)} s (${second.stdout.split("\n")[0]})`);
  const exported = run(["accounts", "export-archive", "ann", join(work, "export.zip")]);
  console.log(`export:        ${exported.seconds.toFixed(1)} s (${exported.stdout})`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
