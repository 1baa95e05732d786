import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openArchive } from "../../src/services/archive/files.ts";
import { collect } from "../../src/services/archive/streams.ts";
import { redSquare } from "../support/archives.ts";
import { cliIn } from "../support/cli.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

// An account's archive in Mastodon's layout, from GET /api/v1/exports/archive.zip (and .tar.gz),
// read back file by file, then imported into another account.

const work = mkdtempSync(join(tmpdir(), "rookery-archive-export-"));
const dataDir = join(work, "data");
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
const posted: Record<string, any> = {};
let bobs: any;

beforeAll(async () => {
  server = await startTestServer({}, { dataDir });
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  const avatar = new FormData();
  avatar.append("avatar", new File([await redSquare()], "me.png", { type: "image/png" }));
  expect((await alice.client.patch("/api/v1/accounts/update_credentials", { multipart: avatar })).status).toBe(200);
  const form = new FormData();
  form.append("file", new File([await redSquare()], "red.png", { type: "image/png" }));
  form.append("description", "A red square");
  const media = (await alice.client.post("/api/v1/media", { multipart: form })).body;
  posted.cw = await postStatus(alice, { status: "about birds #birds", spoiler_text: "birds ahead" });
  posted.reply = await postStatus(alice, { status: "and more", in_reply_to_id: posted.cw.id, visibility: "unlisted" });
  posted.poll = await postStatus(alice, { status: "tea or coffee?", poll: { options: ["tea", "coffee"], expires_in: 3600 } });
  posted.image = await postStatus(alice, { status: "a picture", media_ids: [media.id] });
  posted.private = await postStatus(alice, { status: "for my followers", visibility: "private" });
  bobs = await postStatus(bob, { status: "bob's post" });
  posted.boost = (await alice.client.post(`/api/v1/statuses/${bobs.id}/reblog`)).body;
  expect((await alice.client.post(`/api/v1/statuses/${bobs.id}/favourite`)).status).toBe(200);
  expect((await alice.client.post(`/api/v1/statuses/${bobs.id}/bookmark`)).status).toBe(200);
});

afterAll(async () => {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Downloads the archive, keeps it under `name` and reads every file of it. */
async function download(format: "zip" | "tar.gz", name: string) {
  const res = await fetch(`${server.base}/api/v1/exports/archive.${format}`, { headers: { authorization: `Bearer ${alice.token}` } });
  expect(res.status).toBe(200);
  const path = join(work, name);
  writeFileSync(path, new Uint8Array(await res.arrayBuffer()));
  const files = new Map<string, Uint8Array>();
  const archive = await openArchive(path);
  await archive.scan(() => true, async (file, _size, body) => void files.set(file, await collect(body, 1e8, file)));
  await archive.close();
  const json = (file: string) => JSON.parse(new TextDecoder().decode(files.get(file)!));
  return { res, path, files, json };
}

describe("the archive of an account", () => {
  test("is Mastodon's layout: outbox.json of Create and Announce activities, media at the paths they name, likes, bookmarks, avatar, actor", async () => {
    const { res, files, json } = await download("zip", "alice.zip");
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="archive-\d{14}-[0-9a-f]{32}\.zip"$/);
    const names = [...files.keys()];
    expect(names[0]).toBe("outbox.json");
    expect(names.slice(-4)).toEqual(["likes.json", "bookmarks.json", "avatar.webp", "actor.json"]);
    expect(names.slice(1, -4)).toEqual([expect.stringMatching(/^media_attachments\/\d{4}\/\d{2}\/[A-Za-z0-9_-]+\.png$/)]);

    const actor = json("actor.json");
    expect(actor).toMatchObject({ id: `${server.base}/users/alice`, type: "Person", preferredUsername: "alice", outbox: "outbox.json", likes: "likes.json", bookmarks: "bookmarks.json", icon: { url: "avatar.webp" } });
    expect(actor.image).toBeUndefined();
    expect(actor.publicKey.id).toBe(`${server.base}/users/alice#main-key`);

    const outbox = json("outbox.json");
    expect(outbox).toMatchObject({ id: "outbox.json", type: "OrderedCollection", totalItems: 6 });
    expect(outbox["@context"]).toContain("https://www.w3.org/ns/activitystreams");
    const items = outbox.orderedItems as any[];
    expect(items.map((i) => i.type)).toEqual(["Create", "Create", "Create", "Create", "Create", "Announce"]);
    expect(items.every((i) => i["@context"] === undefined)).toBe(true);
    // The objects are the statuses at the addresses the API gives, in the order they were written.
    expect(items.slice(0, 5).map((i) => i.object.id)).toEqual([posted.cw.uri, posted.reply.uri, posted.poll.uri, posted.image.uri, posted.private.uri]);
    const [cw, reply, poll, image] = items.map((i) => i.object);
    expect(cw).toMatchObject({ type: "Note", summary: "birds ahead", sensitive: true, to: "as:Public" });
    expect(Date.parse(cw.published)).toBe(Date.parse(posted.cw.created_at));
    expect(reply.inReplyTo).toBe(posted.cw.uri);
    expect(poll.type).toBe("Question");
    expect(poll.oneOf.map((o: any) => o.name)).toEqual(["tea", "coffee"]);
    const attachment = [image.attachment].flat()[0];
    expect(attachment.name).toBe("A red square");
    expect(attachment.url).toMatch(/^media_attachments\/\d{4}\/\d{2}\/[A-Za-z0-9_-]+\.png$/);
    expect(files.get(attachment.url)!.length).toBeGreaterThan(0);
    expect(items[5]).toMatchObject({ actor: `${server.base}/users/alice`, object: bobs.uri });
    expect(json("likes.json")).toEqual({ "@context": "https://www.w3.org/ns/activitystreams", id: "likes.json", type: "OrderedCollection", orderedItems: [bobs.uri] });
    expect(json("bookmarks.json").orderedItems).toEqual([bobs.uri]);
  });

  test("as tar.gz holds the same files", async () => {
    const zip = await download("zip", "again.zip");
    const tgz = await download("tar.gz", "alice.tar.gz");
    expect(tgz.res.headers.get("content-type")).toBe("application/gzip");
    expect([...tgz.files.keys()]).toEqual([...zip.files.keys()]);
    expect(tgz.json("outbox.json")).toEqual(zip.json("outbox.json"));
  });

  test("imports into another account with dates, media, threads and polls, and a second time adds nothing", async () => {
    const path = join(work, "alice.zip");
    const cli = cliIn(dataDir);
    const carol = await createUser(server, "carol");
    const runs: ReturnType<typeof cli>[] = [];
    server = await server.restart(() => {
      runs.push(cli(["accounts", "import-archive", "carol", path]));
      runs.push(cli(["accounts", "import-archive", "carol", path]));
    });
    expect(runs.map((r) => r.code)).toEqual([0, 0]);
    expect(runs[0]!.stdout).toContain("Imported 4 post(s) into carol (1 as replies in their threads, 1 poll(s))");
    expect(runs[0]!.stdout).toContain("Media: 1 imported");
    expect(runs[0]!.stdout).toContain("Skipped: 1 boost(s), 1 private");
    expect(runs[1]!.stdout).toContain("Imported 0 post(s)");
    const client = new Client(server.base, carol.token);
    const statuses = (await client.get(`/api/v1/accounts/${carol.id}/statuses`)).body as any[];
    // The HTML as written (its links to where it was written), as text.
    const text = (html: string) => html.replace(/<[^>]+>/g, "");
    expect(statuses.map((s) => text(s.content))).toEqual(["a picture", "tea or coffee?", "and more", "about birds #birds"]);
    expect(statuses[3].tags.map((t: any) => t.name)).toEqual(["birds"]);
    expect(statuses.map((s) => s.created_at)).toEqual([posted.image, posted.poll, posted.reply, posted.cw].map((s) => s.created_at));
    expect(statuses[0].media_attachments[0]).toMatchObject({ type: "image", description: "A red square" });
    expect(statuses[1].poll).toMatchObject({ expired: true, options: [{ title: "tea" }, { title: "coffee" }] });
    expect(statuses[2]).toMatchObject({ in_reply_to_id: statuses[3].id, spoiler_text: "" });
    expect(statuses[3]).toMatchObject({ spoiler_text: "birds ahead", sensitive: true });
  });

  test("rookery accounts export-archive writes the same files, and refuses what it cannot do", async () => {
    const cli = cliIn(dataDir);
    const target = join(work, "cli.tar.gz");
    const res = cli(["accounts", "export-archive", "alice", target], { PUBLIC_URL: server.base });
    expect(res.stderr).toBe("");
    expect(res.stdout).toStartWith(`Wrote the archive of alice to ${target} (`);
    const archive = await openArchive(target);
    const names: string[] = [];
    await archive.scan(() => true, async (name) => void names.push(name));
    expect(names).toEqual([...(await download("zip", "api.zip")).files.keys()]);
    for (const [args, message] of [
      [["accounts", "export-archive", "alice", target], "already exists; choose a new file"],
      [["accounts", "export-archive", "nobody", join(work, "n.zip")], "no local account named nobody"],
      [["accounts", "export-archive", "alice", join(work, "x.rar"), "--format", "rar"], 'unknown archive format "rar"'],
      [["accounts", "export-archive", "alice"], "accounts export-archive needs an account and a file"],
    ] as const) {
      const bad = cli([...args]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(message);
    }
    expect(existsSync(join(work, "n.zip"))).toBe(false);
  });

  test("needs a user's token with the read scope, and one archive at a time", async () => {
    alice = { ...alice, client: new Client(server.base, alice.token) };
    const path = "/api/v1/exports/archive.zip";
    expect(await new Client(server.base).get(path).then((r) => [r.status, r.body])).toEqual([401, { error: "The access token is invalid" }]);
    const writer = await createUser(server, "writer", { scopes: "write" });
    expect(await writer.client.get(path).then((r) => [r.status, r.body])).toEqual([403, { error: "This action is outside the authorized scopes" }]);
    const partial = await createUser(server, "partial", { scopes: "read:statuses" });
    expect((await partial.client.get(path)).status).toBe(403);
    // While one is being downloaded, a second is refused; once it is dropped, one may start again.
    const first = await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${alice.token}` } });
    expect(first.status).toBe(200);
    expect(await alice.client.get(path).then((r) => [r.status, r.body])).toEqual([429, { error: "An archive of this account is being written already; try again once it is done" }]);
    await first.body!.cancel();
    await eventually(async () => (await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${alice.token}` } }).then(async (r) => (await r.arrayBuffer(), r.status))) === 200, "a new archive after the first was dropped");
  });
});
