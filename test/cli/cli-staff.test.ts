import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cliBeside } from "../support/cli.ts";
import { createUser, PASSWORD, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, pendingUser } from "../support/staff.ts";

// The operator's staff commands, run beside a server on its data directory: the server's
// next answer shows what they did, and every action is in the audit log, by nobody (the operator).
let server: TestServer;
let cli: ReturnType<typeof cliBeside>;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  cli = cliBeside(server);
  alice = await createUser(server, "alice");
});
afterAll(() => server?.close());

const signIn = (username: string, password: string) => {
  const { app, clientSecret } = { app: alice.app, clientSecret: alice.clientSecret };
  return new Client(server.base).post("/oauth/token", { form: { grant_type: "password", username, password, client_id: app.clientId, client_secret: clientSecret, scope: "read" } });
};

describe("rookery accounts suspend|unsuspend|delete", () => {
  test("suspend signs the account out and hides it; unsuspend brings it back; both logged by the operator", async () => {
    const bob = await createUser(server, "bob");
    const post = await postStatus(bob, { status: "hello" });
    const before = (await auditLines(server)).length;
    const res = await cli(["accounts", "suspend", "bob"]);
    expect([res.code, res.stderr]).toEqual([0, ""]);
    expect(res.stdout).toBe("Suspended bob: signed out everywhere, hidden, and its followers' servers told\n");
    expect((await bob.client.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    expect((await alice.client.get(`/api/v1/statuses/${post.id}`)).status).toBe(404);
    expect((await signIn("bob", PASSWORD)).status).toBe(400);
    const again = await cli(["accounts", "suspend", "bob"]);
    expect([again.code, again.stdout, again.stderr]).toEqual([1, "", "rookery: bob is suspended already\n"]);
    const back = await cli(["accounts", "unsuspend", "bob"]);
    expect([back.code, back.stdout]).toEqual([0, "Unsuspended bob\n"]);
    expect((await alice.client.get(`/api/v1/statuses/${post.id}`)).status).toBe(200);
    expect((await auditSince(server, before))).toEqual([
      ["suspend", "Account", bob.id, null],
      ["unsuspend", "Account", bob.id, null],
    ]);
  });

  test("delete removes the account's data at once and keeps its name taken", async () => {
    const dora = await createUser(server, "dora");
    await postStatus(dora, { status: "bye" });
    const res = await cli(["accounts", "delete", "dora"]);
    expect([res.code, res.stderr]).toEqual([0, ""]);
    expect(res.stdout).toStartWith("Deleted dora: its statuses, follows and profile are gone, its name stays taken");
    expect((await server.ctx.services.accounts.getUser(dora.account.id))).toBeUndefined();
    expect((await fetch(`${server.base}/users/dora`, { headers: { accept: "application/activity+json" } })).status).toBe(410);
    const twice = await cli(["accounts", "delete", "dora"]);
    expect([twice.code, twice.stderr]).toEqual([1, "rookery: dora was deleted\n"]);
  });

  test("ordinary mistakes are one line on stderr, with no stack", async () => {
    for (const [args, message] of [
      [["accounts", "suspend"], "needs an account: accounts suspend <username|user@domain>"],
      [["accounts", "suspend", "nobody"], "no local account named nobody"],
      [["accounts", "suspend", "someone@nowhere.example"], "no account someone@nowhere.example is known here"],
      [["accounts", "unsuspend", "alice"], "alice is not suspended"],
      [["accounts", "role", "alice", "king"], "needs one of user, moderator, admin, owner: accounts role <username> user|moderator|admin|owner"],
      [["accounts", "approve", "alice"], "alice is approved already"],
    ] as const) {
      const res = await cli([...args]);
      expect([args.join(" "), res.code, res.stdout, res.stderr]).toEqual([args.join(" "), 1, "", `rookery: ${message}\n`]);
    }
  });
});

describe("rookery accounts password|role|approve", () => {
  test("password prints a new random one (or sets the one on stdin) and signs the account out", async () => {
    const carl = await createUser(server, "carl");
    const res = await cli(["accounts", "password", "carl"]);
    expect(res.code).toBe(0);
    const password = /^New password for carl: (\S+)\n/.exec(res.stdout)?.[1];
    expect(password).toBeDefined();
    expect(res.stdout).toEndWith("Signed out of every app and browser\n");
    expect((await carl.client.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    expect((await signIn("carl", PASSWORD)).status).toBe(400);
    expect((await signIn("carl", password!)).status).toBe(200);
    expect((await auditLines(server)).at(-1)).toEqual(["reset_password", "User", carl.id, null]);
  });

  test("role gives a staff role, which the admin API then honours", async () => {
    const res = await cli(["accounts", "role", "alice", "moderator"]);
    expect([res.code, res.stdout]).toEqual([0, "alice is now moderator (was user)\n"]);
    expect((await alice.client.get("/api/v1/accounts/verify_credentials")).body.role).toMatchObject({ id: "1", name: "Moderator" });
    expect((await auditLines(server)).at(-1)).toEqual(["change_role", "User", alice.id, null]);
  });

  test("approve lets a waiting sign-up in", async () => {
    const waiting = await pendingUser(server, "wendy");
    expect((await waiting.client.get("/api/v1/accounts/verify_credentials")).status).toBe(403);
    const res = await cli(["accounts", "approve", "wendy"]);
    expect([res.code, res.stdout]).toEqual([0, "Approved wendy: they can sign in now\n"]);
    expect((await waiting.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    expect((await auditLines(server)).at(-1)).toEqual(["approve", "User", waiting.id, null]);
  });
});
