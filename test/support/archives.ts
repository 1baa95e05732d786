import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { crc32 } from "node:zlib";
import sharp from "../../src/media-files/sharp.ts";

// Account archives in Mastodon's layout (its BackupService: actor.json, outbox.json of Create
// and Announce activities, likes.json, bookmarks.json, media_attachments/...), made here
// without Rookery's own writers: a zip of stored entries, and a tar.gz by the system's tar.

export const OLD = "https://old.example";
export const ACTOR = `${OLD}/users/ann`;
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const FOLLOWERS = `${ACTOR}/followers`;

export const RED_SQUARE = "media_attachments/files/109/000/001/original/red.png";

const note = (id: number, published: string, content: string, extra: Record<string, unknown> = {}) => ({
  id: `${ACTOR}/statuses/${id}/activity`,
  type: "Create",
  actor: ACTOR,
  published,
  to: [PUBLIC],
  cc: [FOLLOWERS],
  object: {
    id: `${ACTOR}/statuses/${id}`,
    type: "Note",
    summary: null,
    inReplyTo: null,
    published,
    url: `${OLD}/@ann/${id}`,
    attributedTo: ACTOR,
    to: [PUBLIC],
    cc: [FOLLOWERS],
    sensitive: false,
    content,
    contentMap: { en: content },
    attachment: [],
    tag: [],
    ...extra,
  },
});

/** What the fixture archive holds, and what an import of it should make. */
export const FIXTURE = {
  /** Public and unlisted posts of ann's own (boosts, private and direct posts, and a reply to someone else left out). */
  imported: 7,
  dates: {
    early: "2017-05-06T07:08:09Z",
    cw: "2021-03-04T10:00:00Z",
    root: "2022-01-01T09:00:00Z",
    reply: "2022-01-02T09:00:00Z",
    poll: "2022-06-01T12:00:00Z",
    image: "2023-02-02T15:30:00Z",
    script: "2023-08-08T08:08:08Z",
  },
};

/** A red square PNG (real pixels: the import processes it as an upload). */
export async function redSquare(): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 255, g: 0, b: 0 } } }).png().toBuffer());
}

/** The files of ann's archive from old.example: every kind of item Mastodon's export has. */
export async function mastodonArchiveFiles(): Promise<Record<string, Uint8Array>> {
  const d = FIXTURE.dates;
  const items = [
    note(1, d.early, "<p>Written before Rookery's epoch</p>"),
    note(2, d.cw, "<p>Birds are <a href=\"https://old.example/tags/birds\" class=\"mention hashtag\" rel=\"tag\">#<span>birds</span></a></p>", {
      summary: "spoilers about birds",
      sensitive: true,
      tag: [{ type: "Hashtag", href: "https://old.example/tags/birds", name: "#birds" }],
    }),
    note(3, d.root, "<p>A thread starts</p>"),
    // Unlisted: as:Public in cc.
    { ...note(4, d.reply, "<p>and goes on</p>", { inReplyTo: `${ACTOR}/statuses/3`, to: [FOLLOWERS], cc: [PUBLIC] }), to: [FOLLOWERS], cc: [PUBLIC] },
    note(5, d.poll, "<p>Tea or coffee?</p>", {
      type: "Question",
      endTime: "2022-06-02T12:00:00Z",
      closed: "2022-06-02T12:00:00Z",
      votersCount: 7,
      oneOf: [
        { type: "Note", name: "Tea", replies: { type: "Collection", totalItems: 5 } },
        { type: "Note", name: "Coffee", replies: { type: "Collection", totalItems: 2 } },
      ],
    }),
    note(6, d.image, "<p>A picture</p>", {
      attachment: [{ type: "Document", mediaType: "image/png", url: RED_SQUARE, name: "A red square", blurhash: "LJNMzyj[00fQ00fQ~qj[fQfQfQfQ", focalPoint: [0.5, -0.25], width: 40, height: 30 }],
    }),
    note(7, d.script, "<p>Hello<script>alert(1)</script> <a href=\"javascript:alert(2)\">there</a></p>"),
    // Private: to the followers alone.
    { ...note(8, "2023-09-01T00:00:00Z", "<p>for my followers</p>", { to: [FOLLOWERS], cc: [] }), to: [FOLLOWERS], cc: [] },
    // Direct: to one account.
    { ...note(9, "2023-09-02T00:00:00Z", "<p>@bob a secret</p>", { to: ["https://other.example/users/bob"], cc: [] }), to: ["https://other.example/users/bob"], cc: [] },
    // A reply to somebody else's post.
    note(10, "2023-09-03T00:00:00Z", "<p>@bob I agree</p>", { inReplyTo: "https://other.example/users/bob/statuses/1" }),
    // A boost.
    { id: `${ACTOR}/statuses/11/activity`, type: "Announce", actor: ACTOR, published: "2023-09-04T00:00:00Z", to: [PUBLIC], cc: [FOLLOWERS], object: "https://other.example/users/bob/statuses/2" },
  ];
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  return {
    "outbox.json": json({ "@context": "https://www.w3.org/ns/activitystreams", id: "outbox.json", type: "OrderedCollection", totalItems: items.length, orderedItems: items }),
    [RED_SQUARE]: await redSquare(),
    "likes.json": json({ "@context": "https://www.w3.org/ns/activitystreams", id: "likes.json", type: "OrderedCollection", orderedItems: ["https://other.example/users/bob/statuses/2"] }),
    "bookmarks.json": json({ "@context": "https://www.w3.org/ns/activitystreams", id: "bookmarks.json", type: "OrderedCollection", orderedItems: [] }),
    "actor.json": json({ "@context": "https://www.w3.org/ns/activitystreams", id: ACTOR, type: "Person", preferredUsername: "ann", followers: FOLLOWERS, outbox: "outbox.json", likes: "likes.json", bookmarks: "bookmarks.json" }),
  };
}

/** A zip of stored entries, as plain as zip gets. */
export function storedZip(files: Record<string, Uint8Array>): Uint8Array {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of Object.entries(files)) {
    const n = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt16LE(20, 6);
    record.writeUInt32LE(crc, 16);
    record.writeUInt32LE(data.length, 20);
    record.writeUInt32LE(data.length, 24);
    record.writeUInt16LE(n.length, 28);
    record.writeUInt32LE(offset, 42);
    parts.push(local, n, Buffer.from(data));
    central.push(record, n);
    offset += 30 + n.length + data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, end]);
}

/** A tar.gz of the files, by the system's tar (media first, as Mastodon's tar.gz archives had them). */
export function tarGz(files: Record<string, Uint8Array>, target: string): void {
  const dir = mkdtempSync(join(tmpdir(), "rookery-archive-src-"));
  try {
    for (const [name, data] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), data);
    }
    const names = Object.keys(files).sort((a, b) => Number(b.startsWith("media_")) - Number(a.startsWith("media_")));
    const tar = Bun.spawnSync(["tar", "-czf", target, "-C", dir, ...names]);
    if (tar.exitCode !== 0) throw new Error(`tar failed: ${tar.stderr.toString()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
