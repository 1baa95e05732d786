import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines } from "../support/staff.ts";
import { enableTwoFactor } from "./support.ts";
import { eventually } from "../support/wait.ts";
import { onPostgres } from "../support/test-database.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function cli(args: string[]) {
  const proc = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
    // server.env: its database too (PostgreSQL in that test mode).
    env: { ...process.env, ...server.env, DATA_DIR: server.dataDir, LOG_REQUESTS: "false" },
    cwd: join(import.meta.dir, "..", ".."),
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

describe("rookery accounts two-factor", () => {
  test("status, and off for a member who lost the phone and the codes; mistakes stop with a line and change nothing", async () => {
    const alice = await createUser(server, "alice");
    await createUser(server, "bob");
    expect(cli(["accounts", "two-factor", "alice", "status"]).stdout).toBe("off\n");
    await enableTwoFactor(server, alice.account.id, "alice");
    const status = cli(["accounts", "two-factor", "ALICE", "status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^on since \d{4}-\d\d-\d\dT[\d:.]+Z, 10 recovery codes left\n$/);
    for (const [args, message] of [
      [["accounts", "two-factor", "nobody", "off"], "no local account named nobody"],
      [["accounts", "two-factor", "bob", "off"], "two-factor sign-in is not on for bob"],
      [["accounts", "two-factor", "alice"], "usage: rookery accounts two-factor <username> status|off"],
      [["accounts", "two-factor", "alice", "of"], "usage: rookery accounts two-factor <username> status|off"],
    ] as const) {
      const res = cli([...args]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(message);
      expect(res.stderr).not.toContain("    at ");
      expect(await server.ctx.services.twoFactor.enabled(alice.account.id)).toBe(true);
    }
    const off = cli(["accounts", "two-factor", "alice", "off"]);
    expect(off.code).toBe(0);
    expect(off.stdout).toBe("Two-factor sign-in turned off for alice; the password alone signs in now.\n");
    // The command is another process: the server's reads of this turn may share a read transaction begun before its commit.
    await eventually(async () => (await server.ctx.services.twoFactor.enabled(alice.account.id)) === false, "two-factor off as the server sees it");
    expect((await server.ctx.services.twoFactor.state(alice.account.id)).recoveryCodesLeft).toBe(0);
    // In the audit log as the operator's, as the admin page's is the admin's.
    expect((await auditLines(server)).at(-1)).toEqual(["disable_2fa", "User", String(alice.account.id), null]);
  });

  // Skipped in the PostgreSQL test mode: `backup` copies SQLite's database file.
  test.skipIf(onPostgres)("--help names it, and a backup says its key is not in the copy", () => {
    expect(cli(["--help"]).stdout).toContain("rookery accounts two-factor <username> status|off");
    const backup = cli(["backup", join(server.dataDir, "copy.sqlite3")]);
    expect(backup.code).toBe(0);
    expect(backup.stdout).toContain(`${server.dataDir}/two-factor.key (without it, members with two-factor must sign in with recovery codes)`);
  });
});
