import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";
import sharp from "sharp";
import { cliBeside } from "../support/cli.ts";
import { mediaFiles } from "../support/files.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startS3, type TestS3 } from "../support/s3.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// `rookery media migrate-to-s3`: a server's existing files copied to a bucket, resumably, and
// then served from there once the server is started with MEDIA_STORAGE=s3.
let s3: TestS3;
let server: TestServer;
let alice: TestUser;
const uploaded: { id: string; url: string }[] = [];

const png = (colour: string) => sharp({ create: { width: 48, height: 32, channels: 3, background: colour } }).png().toBuffer();

beforeAll(async () => {
  s3 = await startS3();
  server = await startTestServer();
  alice = await createUser(server, "alice");
  for (const colour of ["#ff0000", "#00ff00", "#0000ff"]) {
    const form = new FormData();
    form.append("file", new File([await png(colour)], "a.png"));
    const res = await alice.client.post("/api/v1/media", { multipart: form });
    expect(res.status).toBe(200);
    uploaded.push(res.body);
  }
  const avatar = new FormData();
  avatar.append("avatar", new File([await png("#888888")], "me.png"));
  expect((await alice.client.patch("/api/v1/accounts/update_credentials", { multipart: avatar })).status).toBe(200);
});
afterAll(async () => {
  await server?.close();
  await s3?.stop();
});

const keys = () => mediaFiles(server).map((f) => relative(join(server.dataDir, "media"), f)).sort();

describe("rookery media migrate-to-s3", () => {
  test("without the bucket's settings it refuses, copying nothing", async () => {
    const run = await cliBeside(server)(["media", "migrate-to-s3"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("run it with MEDIA_STORAGE=s3");
    expect(await s3.keys()).toEqual([]);
    const unknown = await cliBeside(server)(["media", "migrate"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown media command "migrate"; use media migrate-to-s3');
  });

  test("a file that fails stops the run halfway; run again, it copies the rest and skips what is there; a third run copies nothing", async () => {
    const local = keys();
    expect(local.length).toBe(7); // three originals, three previews, the avatar
    // A file gone between the listing and the copy (a dangling link): sorted after the avatar.
    const broken = "media_attachments/0000/00/broken.png";
    mkdirSync(join(server.dataDir, "media", "media_attachments/0000/00"), { recursive: true });
    symlinkSync(join(server.dataDir, "nowhere.png"), join(server.dataDir, "media", broken));
    const cli = cliBeside(server, s3.env());
    const first = await cli(["media", "migrate-to-s3"]);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain(`could not copy ${broken}`);
    expect(first.stderr).toContain("run the command again to go on from there");
    const halfway = await s3.keys();
    expect(halfway.length).toBeGreaterThan(0);
    expect(halfway.length).toBeLessThan(local.length);
    for (const key of halfway) expect(local).toContain(key);

    rmSync(join(server.dataDir, "media", broken));
    // An object of the same key but another size (a copy cut short elsewhere) is copied again.
    const stale = local.find((k) => !halfway.includes(k))!;
    await s3.client.write(stale, "cut");
    const second = await cli(["media", "migrate-to-s3"]);
    // The progress line, its last state (one a hundred files, and the last, when not on a terminal).
    expect(second.stderr).toMatch(new RegExp(`^media migrate-to-s3: ${local.length}/${local.length} files, \\d+ KB of \\d+ KB \\(${local.length - halfway.length} copied, ${halfway.length} already there\\)\n$`));
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`Copied ${local.length - halfway.length} file(s) to the bucket ${s3.bucket}; ${halfway.length} were there already.`);
    expect(second.stdout).toContain("Nothing is switched");
    expect(await s3.keys()).toEqual(local);
    for (const key of local) expect(await s3.bytes(key)).toEqual(new Uint8Array(readFileSync(join(server.dataDir, "media", key))));

    const third = await cli(["media", "migrate-to-s3"]);
    expect(third.code).toBe(0);
    expect(third.stdout).toContain(`Copied 0 file(s) to the bucket ${s3.bucket}; ${local.length} were there already.`);
  });

  test("started with MEDIA_STORAGE=s3 on the same data, the server shows the copies from the bucket, and old /system/ links redirect there", async () => {
    const oldUrl = uploaded[0]!.url;
    const key = oldUrl.slice(oldUrl.indexOf("/system/") + "/system/".length);
    await server.stop();
    server = await startTestServer(s3.env(), { dataDir: server.dataDir, clock: server.clock });
    const media = alice.client.withToken(alice.token);
    media.base = server.base;
    const shown = await media.get(`/api/v1/media/${uploaded[0]!.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.url).toBe(`${s3.publicBase}/${key}`);
    const bytes = new Uint8Array(await (await fetch(shown.body.url)).arrayBuffer());
    expect(bytes).toEqual(new Uint8Array(readFileSync(join(server.dataDir, "media", key))));
    const redirect = await fetch(`${server.base}/system/${key}`, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe(shown.body.url);
  });
});
