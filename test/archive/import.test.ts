import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliIn } from "../support/cli.ts";
import { ACTOR, FIXTURE, mastodonArchiveFiles, storedZip, tarGz } from "../support/archives.ts";
import { AP, getAp } from "../support/federation.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// rookery accounts import-archive: a Mastodon archive made here (every kind of item its export
// has) brought into a local account, with a follower who must not see the old posts as new.

const work = mkdtempSync(join(tmpdir(), "rookery-archive-import-"));
const dataDir = join(work, "data");
const cli = cliIn(dataDir);
const zip = join(work, "ann.zip");
const tgz = join(work, "ann.tar.gz");
let server: TestServer;
let ann: TestUser;
let bob: TestUser;
let fresh: { id: string };

beforeAll(async () => {
  const files = await mastodonArchiveFiles();
  writeFileSync(zip, storedZip(files));
  tarGz(files, tgz);
  server = await startTestServer({}, { dataDir });
  ann = await createUser(server, "ann");
  bob = await createUser(server, "bob");
  expect((await bob.client.post(`/api/v1/accounts/${ann.id}/follow`)).status).toBe(200);
  fresh = await postStatus(ann, { status: "new here" });
});

afterAll(async () => {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Runs the CLI while the server is down, and comes back with clients of the restarted one. */
async function whileDown(run: () => void) {
  server = await server.restart(run);
  ann = { ...ann, client: new Client(server.base, ann.token) };
  bob = { ...bob, client: new Client(server.base, bob.token) };
}

/** The profile's statuses, with the server's address (new at each restart) left out. */
const profile = async () => JSON.parse((await ann.client.get(`/api/v1/accounts/${ann.id}/statuses`, { query: { limit: "40" } })).text.replaceAll(server.base, "BASE")) as any[];

describe("importing a Mastodon archive", () => {
  test("brings the public and unlisted posts in with their dates, text, warnings, media, threads and polls", async () => {
    let res!: ReturnType<typeof cli>;
    await whileDown(() => (res = cli(["accounts", "import-archive", "ann", zip])));
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Imported ${FIXTURE.imported} post(s) into ann (1 as replies in their threads, 1 poll(s))`);
    expect(res.stdout).toContain("Media: 1 imported, 0 missing from the archive, 0 not readable");
    expect(res.stdout).toContain("Skipped: 1 boost(s), 1 private and 1 direct post(s), 1 repl(ies) to other people");
    // The progress bar, on standard error.
    expect(res.stderr).toContain(`posts [${"#".repeat(30)}] ${FIXTURE.imported}/${FIXTURE.imported}`);

    const statuses = await profile();
    const d = FIXTURE.dates;
    // Newest first, by date and by id alike; the post written here is the newest.
    expect(statuses.slice(1).map((s) => s.created_at)).toEqual([d.script, d.image, d.poll, d.reply, d.root, d.cw, d.early].map((t) => t.replace("Z", ".000Z")));
    expect(statuses[0].id).toBe(fresh.id);
    const ids = statuses.map((s) => BigInt(s.id));
    expect([...ids].sort((a, b) => (a < b ? 1 : -1))).toEqual(ids);
    const [, script, image, poll, reply, root, cw, early] = statuses;
    expect(early.content).toBe("<p>Written before Rookery's epoch</p>");
    expect(cw).toMatchObject({ spoiler_text: "spoilers about birds", sensitive: true, visibility: "public", language: "en" });
    expect(cw.tags.map((t: any) => t.name)).toEqual(["birds"]);
    expect(reply).toMatchObject({ in_reply_to_id: root.id, in_reply_to_account_id: ann.id, visibility: "unlisted" });
    expect(root.replies_count).toBe(1);
    expect(poll.poll).toMatchObject({ expired: true, multiple: false, votes_count: 7, voters_count: 7, options: [{ title: "Tea", votes_count: 5 }, { title: "Coffee", votes_count: 2 }] });
    expect(poll.poll.expires_at).toBe("2022-06-02T12:00:00.000Z");
    expect(image.media_attachments).toHaveLength(1);
    expect(image.media_attachments[0]).toMatchObject({ type: "image", description: "A red square", meta: { focus: { x: 0.5, y: -0.25 }, original: { width: 40, height: 30 } } });
    expect((await fetch(image.media_attachments[0].url.replace("BASE", server.base))).status).toBe(200);
    // Sanitized as remote HTML is.
    expect(script.content).not.toContain("script");
    expect(script.content).not.toContain("javascript:");
    expect(script.content).toContain("Hello");
    const all = JSON.stringify(statuses);
    for (const left of ["for my followers", "a secret", "I agree"]) expect(all).not.toContain(left);

    const account = (await ann.client.get(`/api/v1/accounts/${ann.id}`)).body;
    expect(account.statuses_count).toBe(FIXTURE.imported + 1);
    // The last status is still the one written here, not an imported one.
    expect(account.last_status_at).toBe(new Date(server.clock.now()).toISOString().slice(0, 10));
  });

  test("the imported posts are not in a follower's home timeline, and are in the outbox", async () => {
    const home = (await bob.client.get("/api/v1/timelines/home")).body as any[];
    expect(home.map((s) => s.id)).toEqual([fresh.id]);
    const outbox = (await getAp(`${server.base}/users/ann/outbox`)).body;
    expect(outbox.totalItems).toBe(FIXTURE.imported + 1);
    const first = (await getAp(typeof outbox.first === "string" ? outbox.first : outbox.first.id, AP)).body;
    const published = first.orderedItems.map((i: any) => i.object.published);
    expect(published).toContain("2017-05-06T07:08:09Z");
    expect(published).toContain(FIXTURE.dates.image);
  });

  test("importing it again, from the tar.gz of the same files, adds nothing", async () => {
    const before = await profile();
    let res!: ReturnType<typeof cli>;
    await whileDown(() => (res = cli(["accounts", "import-archive", "ann", tgz])));
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Imported 0 post(s)");
    expect(res.stdout).toContain(`Already imported before: ${FIXTURE.imported}`);
    expect(await profile()).toEqual(before);
    expect((await ann.client.get(`/api/v1/accounts/${ann.id}`)).body.statuses_count).toBe(FIXTURE.imported + 1);
  });

  test("with --with-replies, a reply to someone else's post comes in as a post of its own", async () => {
    let res!: ReturnType<typeof cli>;
    await whileDown(() => (res = cli(["accounts", "import-archive", "ann", zip, "--with-replies"])));
    expect(res.stdout).toContain("Imported 1 post(s)");
    const statuses = await profile();
    const agreed = statuses.find((s) => s.content.includes("I agree"));
    expect(agreed).toMatchObject({ in_reply_to_id: null, created_at: "2023-09-03T00:00:00.000Z" });
    expect(agreed.uri).toStartWith("BASE/users/ann/statuses/");
    expect(JSON.stringify(statuses)).not.toContain(ACTOR);
  });

  test("bad archives and unknown accounts stop with a message and change nothing", async () => {
    const before = await profile();
    const junk = join(work, "junk.zip");
    writeFileSync(junk, "this is no archive at all");
    const noOutbox = join(work, "no-outbox.zip");
    writeFileSync(noOutbox, storedZip({ "actor.json": new TextEncoder().encode("{}") }));
    const badJson = join(work, "bad-json.zip");
    writeFileSync(badJson, storedZip({ "outbox.json": new TextEncoder().encode("{not json") }));
    const runs: [string[], string][] = [];
    await whileDown(() => {
      for (const [args, message] of [
        [["accounts", "import-archive", "ann", join(work, "missing.zip")], "does not exist"],
        [["accounts", "import-archive", "ann", junk], "not a zip or tar.gz archive"],
        [["accounts", "import-archive", "ann", noOutbox], "outbox.json is missing"],
        [["accounts", "import-archive", "ann", badJson], "outbox.json is not JSON"],
        [["accounts", "import-archive", "nobody", zip], "no local account named nobody"],
        [["accounts", "import-archive", "ann"], "accounts import-archive needs an account and an archive"],
      ] as const) {
        const res = cli([...args]);
        expect(res.code).toBe(1);
        runs.push([[...args], res.stderr]);
        expect(res.stderr).toContain(message);
      }
    });
    expect(runs).toHaveLength(6);
    expect(await profile()).toEqual(before);
  });
});
