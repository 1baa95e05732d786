import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { withoutNotice } from "../support/cli.ts";

/**
 * `rookery accounts export|import` beside a running server: the export writes Mastodon's files
 * into a folder; the import is queued, the server works it off, and the command follows it
 * with a progress bar on stderr, then says what became of it.
 */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  [alice, bob, carol] = [await createUser(server, "alice"), await createUser(server, "bob"), await createUser(server, "carol")];
  dir = mkdtempSync(join(tmpdir(), "rookery-csv-"));
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI in a process of its own, awaited (the server in this process goes on working meanwhile). */
async function cli(args: string[]) {
  const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    // The server's settings (its database's, in the PostgreSQL test mode), at its public URL.
    env: { ...process.env, ...server.env, DATA_DIR: server.dataDir, PUBLIC_URL: server.base, LOG_REQUESTS: "false" },
    cwd: join(import.meta.dir, "..", ".."),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr: withoutNotice(stderr) };
}

test("accounts export writes each list into the folder, as the API gives it", async () => {
  await alice.client.post(`/api/v1/accounts/${bob.id}/follow`, { json: { notify: true } });
  await alice.client.post(`/api/v1/accounts/${carol.id}/mute`);
  const out = join(dir, "out");
  const res = await cli(["accounts", "export", "alice", "--csv", out]);
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  expect(readdirSync(out).sort()).toEqual(["blocked_accounts.csv", "blocked_domains.csv", "bookmarks.csv", "followers.csv", "following_accounts.csv", "lists.csv", "muted_accounts.csv"]);
  expect(res.stdout).toContain(`${join(out, "following_accounts.csv")}\t2 line(s)`);
  for (const [file, api] of [["following_accounts.csv", "following.csv"], ["muted_accounts.csv", "mutes.csv"], ["blocked_accounts.csv", "blocks.csv"]]) {
    expect([file, readFileSync(join(out, file!), "utf8")]).toEqual([file, (await alice.client.get(`/api/v1/exports/${api}`)).text]);
  }
});

test("accounts import queues the file; the server works it off while the command shows its progress", async () => {
  const file = join(dir, "following.csv");
  writeFileSync(file, `Account address,Show boosts,Notify on new posts,Languages\nbob,false,true,en\nnobody,true,false,\n`);
  const res = await cli(["accounts", "import", "carol", file, "--type", "following"]);
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(/^Queued import \d+: 2 following entries\n/);
  expect(res.stdout).toContain("finished: 1 imported, 0 awaiting an answer, 1 failed\nFailed: 1 unknown account\n  line 3\tnobody\tunknown_account\tthere is no account nobody on this server\n");
  expect(res.stderr).toContain("[##############################] 2/2  imported 1  awaiting 0  failed 1\n");
  const relationship = (await carol.client.get("/api/v1/accounts/relationships", { query: { "id[]": bob.id } })).body[0];
  expect(relationship).toMatchObject({ following: true, showing_reblogs: false, notifying: true, languages: ["en"] });
});

test("a bad file or account is refused by the command, and nothing is queued", async () => {
  const count = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM imports"))!.n;
  const before = await count();
  const mutes = join(dir, "mutes.csv");
  writeFileSync(mutes, "Account address,Hide notifications\nbob,true\n");
  const wrong = await cli(["accounts", "import", "carol", mutes, "--type", "following"]);
  expect([wrong.code, wrong.stderr]).toEqual([1, "rookery: Data is incompatible with the selected import type (following): its columns are Account address, Hide notifications, as in a mutes file\n"]);
  const nobody = await cli(["accounts", "import", "nobody", mutes, "--type", "mutes"]);
  expect([nobody.code, nobody.stderr]).toEqual([1, "rookery: no local account nobody\n"]);
  const untyped = await cli(["accounts", "import", "carol", mutes]);
  expect([untyped.code, untyped.stderr]).toEqual([1, "rookery: Type can't be blank\n"]);
  const missing = await cli(["accounts", "import", "carol", join(dir, "absent.csv"), "--type", "mutes"]);
  expect([missing.code, missing.stderr]).toEqual([1, `rookery: cannot read ${join(dir, "absent.csv")}\n`]);
  expect(await count()).toBe(before);
});
