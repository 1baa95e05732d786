import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eventually } from "../support/federation.ts";
import { makeCertificate, startTlsPeer, type TlsPeer } from "../support/federation-tls.ts";
import type { Client } from "../support/http.ts";
import { withoutNotice } from "../support/cli.ts";
import { knownDatabaseEnv } from "../support/test-database.ts";

// The operator's commands, against two running servers behind TLS (handles are resolved
// through WebFinger, which is https only): `accounts alias` names the old account by its
// handle, `accounts move` moves it, and the server delivers the Move the command queued.

let cert: ReturnType<typeof makeCertificate>;
let a: TlsPeer;
let b: TlsPeer;
let alice: { client: Client; id: string };
let alice2: { client: Client; id: string };
let fan: { client: Client; id: string };

/**
 * The command line over a peer's data directory, as its operator runs it. Not waited for
 * synchronously (as cliIn does): the peers' TLS proxies run in this process, and the command
 * asks them.
 */
const cli = (peer: TlsPeer) => async (args: string[]) => {
  const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    env: { ...process.env, DATA_DIR: peer.dataDir, LOG_REQUESTS: "false", PUBLIC_URL: peer.base, NODE_EXTRA_CA_CERTS: cert.cert, ALLOW_PRIVATE_ADDRESSES: "true", ...knownDatabaseEnv(peer.dataDir) },
    cwd: join(import.meta.dir, "..", ".."),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr: withoutNotice(stderr) };
};

beforeAll(async () => {
  cert = makeCertificate();
  [a, b] = await Promise.all([startTlsPeer("127.0.0.2", cert), startTlsPeer("127.0.0.3", cert)]);
  [alice, alice2, fan] = await Promise.all([a.user("alice"), b.user("alice2"), b.user("fan")]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  cert?.cleanup();
});

const relationship = async (user: { client: Client }, id: string) => (await user.client.get("/api/v1/accounts/relationships", { query: { "id[]": id } })).body[0];

describe("rookery accounts alias and accounts move", () => {
  test("alias add names the old account by its handle (stored as its IRI), list shows it, remove takes it off; bad input fails with a message", async () => {
    const add = await cli(b)(["accounts", "alias", "add", "alice2", `@alice@${a.domain}`]);
    expect(add.stderr).toBe("");
    expect([add.code, add.stdout]).toEqual([0, `alice2 is also known as ${a.base}/users/alice\n`]);
    expect((await cli(b)(["accounts", "alias", "list", "alice2"])).stdout).toBe(`${a.base}/users/alice\n`);
    expect((await alice2.client.get("/api/v1/accounts/verify_credentials")).body.source.also_known_as_uris).toEqual([`${a.base}/users/alice`]);

    const removed = await cli(b)(["accounts", "alias", "remove", "alice2", `${a.base}/users/alice`]);
    expect([removed.code, removed.stdout]).toEqual([0, `Removed ${a.base}/users/alice from the aliases of alice2\n`]);
    expect((await cli(b)(["accounts", "alias", "list", "alice2"])).stdout).toBe("alice2 has no aliases.\n");

    const failures: [string[], string][] = [
      [["accounts", "alias", "add", "nobody", `@alice@${a.domain}`], "rookery: no local account named nobody\n"],
      [["accounts", "alias", "add", "alice2", `@nobody@${a.domain}`], `rookery: error dereferencing also_known_as_uri (@nobody@${a.domain}) account: no account could be fetched there\n`],
      [["accounts", "alias", "add", "alice2", "javascript:alert(1)"], "rookery: invalid also_known_as_uri (javascript:alert(1)) provided in account alias request: uri must not be empty and scheme must be http or https\n"],
      [["accounts", "alias", "remove", "alice2", `${a.base}/users/alice`], `rookery: ${a.base}/users/alice is not an alias of alice2\n`],
      [["accounts", "alias", "add", "alice2"], "rookery: accounts alias add needs an account: accounts alias add|remove <username> <url-or-handle>, or accounts alias list <username>\n"],
    ];
    for (const [args, stderr] of failures) expect(await cli(b)(args)).toMatchObject({ code: 1, stderr });
    expect((await cli(b)(["accounts", "alias", "list", "alice2"])).stdout).toBe("alice2 has no aliases.\n");
  });

  test("move is refused while the target does not name alice; once it does, alice moves, and her follower on B follows alice2 when the Move arrives", async () => {
    const aliceOnB = (await fan.client.get("/api/v1/accounts/lookup", { query: { acct: `alice@${a.domain}` } })).body;
    expect((await fan.client.post(`/api/v1/accounts/${aliceOnB.id}/follow`)).status).toBe(200);
    await eventually(async () => (await relationship(fan, aliceOnB.id)).following === true, "fan follows alice", 20_000);

    const refused = await cli(a)(["accounts", "move", "alice", "--to", `@alice2@${b.domain}`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is not aliased to this account via alsoKnownAs`);
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.moved).toBeUndefined();
    expect(await cli(a)(["accounts", "move", "alice"])).toMatchObject({ code: 1, stderr: "rookery: accounts move needs --to: accounts move <username> --to <handle-or-url> [--redirect-only], or accounts move <username> --cancel\n" });

    expect((await cli(b)(["accounts", "alias", "add", "alice2", `alice@${a.domain}`])).code).toBe(0);
    const moved = await cli(a)(["accounts", "move", "alice", "--to", `@alice2@${b.domain}`]);
    expect(moved.stderr).toBe("");
    expect(moved).toMatchObject({ code: 0, stdout: `alice moved to ${b.base}/users/alice2; its followers here follow the new account, and 1 remote follower(s) are being sent the Move\n` });
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.moved).toMatchObject({ acct: `alice2@${b.domain}` });
    // The running server A delivers the Move the command queued; B moves fan to alice2, its own account.
    // Following the new account and leaving the old are two writes, as in Mastodon's MoveWorker:
    // on PostgreSQL a read may fall between them.
    await eventually(async () => (await relationship(fan, alice2.id)).following === true && (await relationship(fan, aliceOnB.id)).following === false, "fan follows alice2, not alice", 20_000);
    const refusedPost = await alice.client.post("/api/v1/statuses", { json: { status: "hello?" } });
    expect([refusedPost.status, refusedPost.body]).toEqual([403, { error: "Your login is currently disabled" }]);
  });

  test("move --cancel takes the redirect back: alice shows no move and posts again; her moved follower stays with alice2", async () => {
    expect(await cli(a)(["accounts", "move", "alice", "--cancel"])).toMatchObject({ code: 0, stdout: "alice no longer points to another account\n" });
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.moved).toBeUndefined();
    expect((await alice.client.post("/api/v1/statuses", { json: { status: "back" } })).status).toBe(200);
    expect(await relationship(fan, alice2.id)).toMatchObject({ following: true });
    expect(await cli(a)(["accounts", "move", "alice", "--cancel"])).toMatchObject({ code: 0, stdout: "alice had not moved\n" });
  });
});
