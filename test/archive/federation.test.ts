import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FIXTURE, mastodonArchiveFiles, storedZip } from "../support/archives.ts";
import { eventually, getAp, startFederatedPair } from "../support/federation.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import type { TestServer } from "../support/server.ts";

// An import on a server that federates (the CLI's import, run in the server's process): the
// old posts are not sent to the followers' servers as new ones; a post written after is.

const work = mkdtempSync(join(tmpdir(), "rookery-archive-fed-"));
let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  rmSync(work, { recursive: true, force: true });
});

test("imported posts are not delivered to a remote follower; they can be fetched, dated as written", async () => {
  const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
  await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
  await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteAlice.id) } })).body[0]?.following === true, "bob follows alice");

  const zip = join(work, "ann.zip");
  writeFileSync(zip, storedZip(await mastodonArchiveFiles()));
  const summary = await a.ctx.services.archiveImport.importArchive(alice.account, zip);
  expect(summary.imported).toBe(FIXTURE.imported);
  const fresh = await postStatus(alice, { status: "written here, after the import" });
  await a.federation!.idle();
  const home = await eventually(async () => {
    const res = await bob.client.get("/api/v1/timelines/home");
    return res.body.length > 0 ? res.body : null;
  }, "the new post in bob's home");
  expect(home.map((s: any) => s.uri)).toEqual([fresh.uri]);

  const imported = (await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`, { query: { limit: "40" } })).body as any[];
  const early = imported.find((s) => s.created_at === FIXTURE.dates.early.replace("Z", ".000Z"));
  const note = await getAp(early.uri);
  expect(note.status).toBe(200);
  expect(note.body).toMatchObject({ type: "Note", id: early.uri, published: FIXTURE.dates.early, content: "<p>Written before Rookery's epoch</p>" });
});
