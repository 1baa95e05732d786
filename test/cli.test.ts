import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { Client } from "./support/http.ts";
import { startTestServer } from "./support/server.ts";

const dataDir = mkdtempSync(join(tmpdir(), "rookery-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false", ...env },
    cwd: join(import.meta.dir, ".."),
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

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
      env: { ...process.env, DATA_DIR: dataDir },
      cwd: join(import.meta.dir, ".."),
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

  test("migrate and backup", () => {
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
