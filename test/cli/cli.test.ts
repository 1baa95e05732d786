import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { Client } from "../support/http.ts";
import { startTestServer } from "../support/server.ts";
import { createUser, postStatus } from "../support/fixtures.ts";
import { eventually } from "../support/wait.ts";
import { withoutNotice } from "../support/cli.ts";
import { databaseEnv, dropDatabase, knownDatabaseEnv, onPostgres } from "../support/test-database.ts";

const dataDir = mkdtempSync(join(tmpdir(), "rookery-cli-"));
// In the PostgreSQL test mode the directory's database is made first: the commands run before any server and are told it.
await databaseEnv(dataDir);
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await dropDatabase(dataDir);
});

function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false", ...knownDatabaseEnv(dataDir), ...env },
    cwd: join(import.meta.dir, "..", ".."),
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: withoutNotice(proc.stderr.toString()) };
}

// A new data directory: the database is made by migrate (or the server), never by another command.
if (cli(["migrate"]).code !== 0) throw new Error("migrate failed");

describe("the admin CLI", () => {
  test("--help and --version", () => {
    const help = cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("accounts create <username>");
    expect(cli(["serve", "--help"]).stdout).toContain("Usage:");
    expect(cli(["--version"]).stdout).toMatch(/^rookery \d+\.\d+\.\d+/);
  });

  test("accounts create prints the id; the account can sign in over HTTP", async () => {
    const made = cli(["accounts", "create", "zoe", "--email", "zoe@example.test", "--password", "zoes password"]);
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    expect(made.stdout.trim()).toMatch(/^\d+$/);

    const taken = cli(["accounts", "create", "ZOE", "--email", "other@example.test", "--password", "zoes password"]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("Username has already been taken");
    const bad = cli(["accounts", "create", "bad-name", "--email", "nope", "--password", "short"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("E-mail address is invalid");
    expect(bad.stderr).toContain("Password is too short");
    expect(bad.stderr).toContain("Username must contain only letters, numbers and underscores");
    expect(cli(["accounts", "create", "nopass", "--email", "n@example.test"]).stderr).toContain("--password");

    const list = cli(["accounts", "list"]);
    expect(list.stdout).toContain("zoe\tzoe@example.test");
    expect(list.stdout).not.toContain("bad-name");

    const server = await startTestServer({}, { dataDir });
    try {
      const http = new Client(server.base);
      const app = await http.post("/api/v1/apps", { json: { client_name: "cli test", redirect_uris: "urn:ietf:wg:oauth:2.0:oob" } });
      const token = await http.post("/oauth/token", {
        json: { grant_type: "password", username: "zoe", password: "zoes password", client_id: app.body.client_id, client_secret: app.body.client_secret },
      });
      expect(token.status).toBe(200);
      const me = await http.get("/api/v1/accounts/verify_credentials", { token: token.body.access_token });
      expect(me.body.id).toBe(made.stdout.trim());
    } finally {
      await server.stop();
    }
  });

  test("options may come as --name=value, and the password from standard input", () => {
    const inline = cli(["accounts", "create", "--email=yan@example.test", "--password=yans password", "yan"]);
    expect(inline.stderr).toBe("");
    expect(inline.stdout.trim()).toMatch(/^\d+$/);
    const proc = Bun.spawnSync([process.execPath, "src/main.ts", "accounts", "create", "xia", "--email", "xia@example.test", "--password-stdin"], {
      env: { ...process.env, DATA_DIR: dataDir, ...knownDatabaseEnv(dataDir) },
      cwd: join(import.meta.dir, "..", ".."),
      stdin: new TextEncoder().encode("xias long password\n"),
    });
    expect(proc.exitCode).toBe(0);
    expect(cli(["accounts", "list"]).stdout).toContain("xia\txia@example.test");
  });

  test("bad settings stop with a message naming the variable", () => {
    const res = cli(["accounts", "list"], { REGISTRATIONS: "sometimes" });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("REGISTRATIONS");
    expect(cli(["nonsense"]).stderr).toContain("unknown command");
  });

  // Skipped in the PostgreSQL test mode: `migrate` and `backup` are SQLite's (DATA_DIR's database file).
  test.skipIf(onPostgres)("migrate and backup", () => {
    expect(cli(["migrate"]).stdout).toMatch(/Applied 0 migration\(s\)/);
    const target = join(dataDir, "backup.sqlite3");
    const res = cli(["backup", target]);
    expect(res.code).toBe(0);
    expect(existsSync(target)).toBe(true);
    const copy = new Database(target, { readonly: true });
    expect((copy.query("SELECT username FROM accounts").all() as { username: string }[]).map((r) => r.username)).toContain("zoe");
    copy.close();
    expect(cli(["backup", target]).stderr).toContain("already exists");
  });
});

describe("rookery domains", () => {
  test("block, unblock, allow, disallow and list; a bad domain or command stops with a message and changes nothing", () => {
    expect(cli(["domains", "list"])).toEqual({ code: 0, stdout: "No blocked or allowed domains.\n", stderr: "" });
    expect(cli(["domains", "block", "Spam.Example"])).toEqual({ code: 0, stdout: "Blocked spam.example and its subdomains\n", stderr: "" });
    expect(cli(["domains", "block", "spam.example"]).stdout).toBe("Already blocked: spam.example and its subdomains\n");
    expect(cli(["domains", "allow", "friendly.example"]).stdout).toBe("Allowed friendly.example (the allow list applies under WHITELIST_MODE=true)\n");
    expect(cli(["domains", "allow", "friendly.example"], { WHITELIST_MODE: "true" }).stdout).toBe("Already allowed: friendly.example\n");
    const listed = "blocked\tspam.example\nallowed\tfriendly.example\n";
    expect(cli(["domains", "list"]).stdout).toBe(listed);

    for (const [args, message] of [
      [["domains", "block"], "domains block needs a domain: domains block <domain>"],
      [["domains", "allow", "  "], "Domain can't be blank"],
      [["domains", "block", "https://x.example/"], "Domain is invalid"],
      [["domains", "block", "x.example:8443"], "Domain is invalid"],
      [["domains", "unblock", "exa mple.com"], "Domain is invalid"],
      [["domains", "ban", "x.example"], 'unknown domains command "ban"'],
    ] as const) {
      const res = cli([...args]);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe("");
      expect(res.stderr).toContain(message);
    }
    expect(cli(["domains", "list"]).stdout).toBe(listed);

    expect(cli(["domains", "unblock", "spam.example"]).stdout).toBe("Unblocked spam.example\n");
    expect(cli(["domains", "unblock", "spam.example"]).stdout).toBe("spam.example was not blocked\n");
    expect(cli(["domains", "disallow", "friendly.example"]).stdout).toBe("Disallowed friendly.example\n");
    expect(cli(["domains", "disallow", "friendly.example"]).stdout).toBe("friendly.example was not allowed\n");
    expect(cli(["domains", "list"]).stdout).toBe("No blocked or allowed domains.\n");
  });

  test("a block made while the server runs removes that domain's accounts, and the server shows it at once", async () => {
    const server = await startTestServer({}, { dataDir });
    try {
      const kit = await createUser(server, "kit");
      const { Person } = await import("@fedify/fedify/vocab");
      const mal = (await server.federation!.storeActor(
        new Person({ id: new URL("https://social.spam.example/users/mal"), preferredUsername: "mal", inbox: new URL("https://social.spam.example/users/mal/inbox") }),
      ))!;
      await server.ctx.services.follows.follow(mal.id, kit.account.id, {});
      const status = await postStatus(kit, { status: "counted", visibility: "public" });
      // Rendered once: the server now holds kit's status with its counters.
      expect((await kit.client.get(`/api/v1/statuses/${status.id}`)).body.account.followers_count).toBe(1);

      const res = cli(["domains", "block", "spam.example"]);
      expect(res.stdout).toBe("Blocked spam.example and its subdomains; 1 account(s) from there removed\n");
      expect((await kit.client.get(`/api/v1/accounts/${mal.id}`)).status).toBe(404);
      expect((await kit.client.get(`/api/v1/accounts/${kit.id}`)).body.followers_count).toBe(0);
      await eventually(async () => (await kit.client.get(`/api/v1/statuses/${status.id}`)).body.account.followers_count === 0, "the rendered status shows the follower gone");
      expect(server.ctx.services.federationDomains.refuses("https://spam.example/inbox")).toBe(true);
    } finally {
      await server.stop();
      cli(["domains", "unblock", "spam.example"]);
    }
  });
});
