import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliIn } from "../support/cli.ts";
import { Client } from "../support/http.ts";
import { startTestServer } from "../support/server.ts";
import { databaseEnv, dropDatabase } from "../support/test-database.ts";

// `rookery invites create|list|revoke` over one DATA_DIR, and the links they print working on a
// server over it (closed registrations, the default).
const dataDir = mkdtempSync(join(tmpdir(), "rookery-cli-invites-"));
// In the PostgreSQL test mode the directory's database is made first: the commands run before any server and are told it.
await databaseEnv(dataDir);
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await dropDatabase(dataDir);
});
const cli = cliIn(dataDir);

describe("rookery invites", () => {
  test("create prints the link once (the note on stderr), list shows it without its code, revoke expires it", async () => {
    // Commands other than migrate and serve refuse a data directory without a database.
    expect(cli(["migrate"]).code).toBe(0);
    expect(cli(["accounts", "create", "alice", "--email", "alice@example.test", "--password", "longenough"]).code).toBe(0);
    expect(cli(["invites", "list"]).stdout).toBe("No invites yet.\n");

    // A fresh server's accounts are plain users: the maker must be named.
    const nobody = cli(["invites", "create"]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toBe("rookery: no owner or admin account to make the invite: name its maker with --by <username>\n");
    expect(cli(["invites", "create", "--by", "zed"]).stderr).toBe("rookery: no local account named zed\n");
    for (const [args, words] of [
      [["--expires", "soon"], '--expires must be a duration such as 30m, 12h, 1d or 2w, or never (got "soon")'],
      [["--uses", "0"], '--uses must be a whole number of sign-ups from 1 (got "0")'],
      [["--uses", "lots"], '--uses must be a whole number of sign-ups from 1 (got "lots")'],
    ] as const) {
      const res = cli(["invites", "create", "--by", "alice", ...args]);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`rookery: ${words}\n`);
    }
    expect(cli(["invites", "list"]).stdout).toBe("No invites yet.\n");

    const made = cli(["invites", "create", "--by", "alice", "--expires", "1d", "--uses", "2", "--comment", "for Bob"]);
    expect(made.code).toBe(0);
    const link = made.stdout.trim();
    expect(link).toMatch(/^http:\/\/localhost:3000\/invite\/[A-Za-z0-9_-]{22}$/);
    expect(made.stderr).toContain("2 sign-up(s)");
    expect(made.stderr).toContain("cannot be shown again");

    // The owner makes them unless told.
    expect(cli(["accounts", "role", "alice", "owner"]).code).toBe(0);
    const forever = cli(["invites", "create", "--expires", "never"]);
    expect(forever.code).toBe(0);
    expect(forever.stderr).toContain("any number of sign-ups, never expires");

    const list = cli(["invites", "list"]).stdout.trim().split("\n");
    expect(list).toHaveLength(2);
    const code = link.slice(link.lastIndexOf("/") + 1);
    expect(list.join("\n")).not.toContain(code);
    const [newest, first] = list.map((l) => l.split("\t"));
    expect(newest!.slice(1, 5)).toEqual(["@alice", "usable", "0/∞ uses", "never expires"]);
    expect(first!.slice(1, 4)).toEqual(["@alice", "usable", "0/2 uses"]);
    expect(first![4]).toMatch(/^expires \d{4}-\d\d-\d\dT/);
    expect(first![5]).toBe("for Bob");

    // The link works on the server (closed registrations), until revoked.
    const server = await startTestServer({}, { dataDir });
    try {
      const http = new Client(server.base);
      const path = new URL(link).pathname;
      expect((await http.get(path)).status).toBe(200);
      const id = first![0]!;
      expect(cli(["invites", "revoke", id]).stdout).toBe(`Revoked invite ${id}: its link lets nobody in now\n`);
      const gone = await http.get(path);
      expect(gone.status).toBe(410);
      expect(gone.text).toContain("This invite link has expired");
      expect(cli(["invites", "revoke", id]).stdout).toBe(`Invite ${id} had already expired\n`);
      expect(cli(["invites", "list"]).stdout).toContain(`${id}\t@alice\texpired\t0/2 uses\texpired `);
    } finally {
      await server.stop();
    }

    const missing = cli(["invites", "revoke", "12345"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("rookery: no invite with id 12345\n");
    expect(cli(["invites", "revoke"]).stderr).toBe("rookery: invites revoke needs the invite's id (see invites list): invites revoke <id>\n");
    expect(cli(["invites", "frobnicate"]).stderr).toBe('rookery: unknown invites command "frobnicate"; use invites create, list or revoke\n');
  });
});
