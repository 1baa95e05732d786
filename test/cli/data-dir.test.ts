import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshPgDatabase } from "../support/postgres.ts";
import { startServeProcess } from "../support/serve-process.ts";
import { onPostgres } from "../support/test-database.ts";

// What a new self-hoster meets: which data directory each command uses, a command run where
// there is no database, and the ordinary failures (a folder missing, a port taken, nothing
// piped in) said in one line, without a stack trace.

const ROOT = join(import.meta.dir, "..", "..");
const work = mkdtempSync(join(tmpdir(), "rookery-datadir-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The CLI run from `cwd`, with DATA_DIR only when given (the test's own environment has none). */
function run(args: string[], options: { cwd?: string; dataDir?: string; stdin?: string; env?: Record<string, string> } = {}) {
  const env: Record<string, string | undefined> = { ...process.env, LOG_REQUESTS: "false", ...options.env };
  delete env.DATA_DIR;
  if (options.dataDir !== undefined) env.DATA_DIR = options.dataDir;
  const proc = Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), ...args], {
    cwd: options.cwd ?? work,
    env: env as Record<string, string>,
    stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

/** One line on standard error, naming no source file: no stack trace. */
function expectOneLine(stderr: string, message: string) {
  expect(stderr).toContain(message);
  expect(stderr.trimEnd().split("\n").filter((l) => !l.startsWith("rookery: data directory"))).toHaveLength(1);
  expect(stderr).not.toMatch(/\bat .*\.ts:\d+|^\s+at /m);
}

// Every command that reads or changes a server's data (all but serve and migrate).
const COMMANDS = [
  ["accounts", "list"],
  ["accounts", "create", "ann", "--email", "ann@example.test", "--password", "anns long password"],
  ["accounts", "export", "ann", "--csv", "out"],
  ["accounts", "alias", "list", "ann"],
  ["domains", "list"],
  ["emoji", "list"],
  ["announcements", "list"],
  ["rules", "list"],
  ["description", "show"],
  ["reports", "list"],
  ["relays", "list"],
  ["federation", "status"],
  ["federation", "check"],
  ["backup", "copy.sqlite3"],
];

describe("the data directory", () => {
  test("without DATA_DIR, a command run where no database is refuses, naming the absolute ./data, and makes nothing", () => {
    const cwd = join(work, "elsewhere");
    mkdirSync(cwd);
    for (const args of COMMANDS) {
      const res = run(args, { cwd });
      expect(res.code).toBe(1);
      expect(res.stdout).toBe("");
      expectOneLine(res.stderr, `rookery: ${join(cwd, "data")} does not exist (DATA_DIR is not set: ./data of the current folder): set DATA_DIR to the server's data directory, or run "rookery migrate"`);
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  test("a DATA_DIR without a database is refused the same way, and stays empty", () => {
    const empty = join(work, "empty");
    mkdirSync(empty);
    for (const args of [COMMANDS[0]!, COMMANDS[1]!, COMMANDS[12]!, COMMANDS[13]!]) {
      const res = run(args, { dataDir: empty });
      expect(res.code).toBe(1);
      expect(res.stdout).toBe("");
      expectOneLine(res.stderr, `rookery: no database in ${empty} (no rookery.sqlite3 there; from DATA_DIR)`);
    }
    expect(readdirSync(empty)).toEqual([]);
  });

  test("migrate makes the database; then every command says which directory it uses, as an absolute path, on standard error", () => {
    const cwd = join(work, "relative");
    mkdirSync(cwd);
    const made = run(["migrate"], { cwd, dataDir: "state" });
    expect(made.code).toBe(0);
    const dir = join(cwd, "state");
    expect(made.stderr).toBe(`rookery: data directory ${dir} (from DATA_DIR)\n`);
    expect(made.stdout).toMatch(new RegExp(`^Applied [1-9]\\d* migration\\(s\\) to ${dir}/rookery.sqlite3\\n$`));

    const list = run(["accounts", "list"], { cwd, dataDir: "state" });
    expect(list).toEqual({ code: 0, stdout: "No accounts yet.\n", stderr: `rookery: data directory ${dir} (from DATA_DIR)\n` });
    const defaulted = run(["domains", "list"], { cwd: dir.replace(/\/state$/, ""), dataDir: undefined });
    // ./data of that folder has no database: refused, even though ./state has one.
    expect(defaulted.code).toBe(1);
    expect(run(["migrate"], { cwd }).stderr).toBe(`rookery: data directory ${join(cwd, "data")} (DATA_DIR is not set: ./data of the current folder)\n`);
    expect(run(["rules", "list"], { cwd })).toEqual({ code: 0, stdout: "No rules yet.\n", stderr: `rookery: data directory ${join(cwd, "data")} (DATA_DIR is not set: ./data of the current folder)\n` });
    // --help and --version use no directory, and say none.
    expect(run(["--help"], { cwd: join(work, "elsewhere") }).stderr).toBe("");
    expect(run(["--version"], { cwd: join(work, "elsewhere") }).stderr).toBe("");
  });

  test("the server logs the absolute data directory and how many migrations it applied", async () => {
    const cwd = join(work, "served");
    mkdirSync(cwd);
    // In the PostgreSQL test mode, an empty database (the test mode's others are copies of a migrated one), which the server migrates.
    const empty = onPostgres ? await freshPgDatabase({ empty: true }) : null;
    const database: Record<string, string> = empty ? { DATABASE_URL: empty.url } : {};
    const start = () =>
      startServeProcess([process.execPath, join(ROOT, "src/main.ts"), "serve"], { cwd, env: { ...process.env, DATA_DIR: "data", PORT: "0", HOST: "127.0.0.1", LOG_REQUESTS: "false", ...database } as Record<string, string> });
    try {
      for (const applied of [/migrations_applied=[1-9]\d*/, /migrations_applied=0\b/]) {
        const server = await start();
        try {
          expect(server.output()).toContain(`data=${join(cwd, "data")} `);
          expect(server.output()).toMatch(applied);
        } finally {
          server.proc.kill("SIGTERM");
          await server.proc.exited;
        }
      }
    } finally {
      await empty?.drop();
    }
  });
});

describe("ordinary failures: one line, no stack trace, nothing changed", () => {
  const dataDir = join(work, "data-failures");
  beforeAll(() => {
    expect(run(["migrate"], { dataDir }).code).toBe(0);
  });

  test("a backup into a missing folder", () => {
    const target = join(work, "no-such-folder", "backup.sqlite3");
    const res = run(["backup", target], { dataDir });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expectOneLine(res.stderr, `rookery: ${join(work, "no-such-folder")} does not exist; make the folder first`);
    expect(existsSync(join(work, "no-such-folder"))).toBe(false);
    // A place SQLite cannot write (/proc takes no new files): its error, in one line.
    const proc = run(["backup", "/proc/rookery-backup.sqlite3"], { dataDir });
    expect(proc.code).toBe(1);
    expectOneLine(proc.stderr, "rookery: unable to open database: /proc/rookery-backup.sqlite3");
  });

  test("the backup names the key files and the media to copy beside it", () => {
    expect(run(["accounts", "create", "kay", "--email", "kay@example.test", "--password", "kays long password"], { dataDir }).code).toBe(0);
    // As the server makes it at its first start.
    writeFileSync(join(dataDir, "push-token.key"), randomBytes(32).toString("base64url"), { mode: 0o600 });
    const target = join(work, "backup.sqlite3");
    const res = run(["backup", target], { dataDir });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(
      `Backed up ${join(dataDir, "rookery.sqlite3")} to ${target}\nNot in it, to copy too: ${join(dataDir, "push-token.key")} (without it, apps must subscribe to Web Push again), ${join(dataDir, "media")}/ (the media)\n`,
    );
  });

  test("an emoji image that is a folder", () => {
    const res = run(["emoji", "add", "blob", work], { dataDir });
    expect(res.code).toBe(1);
    expectOneLine(res.stderr, `rookery: ${work}: a folder, not an image file`);
    expect(run(["emoji", "list"], { dataDir }).stdout).toBe("No custom emojis yet.\n");
  });

  test("an archive export into a missing folder", () => {
    const target = join(work, "missing", "kay.zip");
    const res = run(["accounts", "export-archive", "kay", target], { dataDir });
    expect(res.code).toBe(1);
    expectOneLine(res.stderr, `rookery: ${join(work, "missing")} does not exist; make the folder first`);
    expect(existsSync(join(work, "missing"))).toBe(false);
  });

  test("--password-stdin with nothing piped in", () => {
    const before = run(["accounts", "list"], { dataDir }).stdout;
    for (const stdin of ["", "\n"]) {
      const res = run(["accounts", "create", "lee", "--email", "lee@example.test", "--password-stdin"], { dataDir, stdin });
      expect(res.code).toBe(1);
      expect(res.stdout).toBe("");
      expectOneLine(res.stderr, "rookery: --password-stdin read nothing from standard input");
    }
    expect(run(["accounts", "list"], { dataDir }).stdout).toBe(before);
  });

  test("a DATA_DIR that is a file, and a rookery.sqlite3 that is no database", () => {
    const file = join(work, "a-file");
    writeFileSync(file, "not a folder");
    for (const command of ["migrate", "serve"]) {
      const res = run([command], { dataDir: file, env: { PORT: "0" } });
      expect(res.code).toBe(1);
      expectOneLine(res.stderr, `rookery: cannot make the folder ${file}: a file stands in its way`);
    }
    const garbage = join(work, "garbage");
    mkdirSync(garbage);
    writeFileSync(join(garbage, "rookery.sqlite3"), "this is not a database, though it is long enough to be read as one ".repeat(4));
    for (const args of [["accounts", "list"], ["serve"]]) {
      const res = run(args, { dataDir: garbage, env: { PORT: "0" } });
      expect(res.code).toBe(1);
      expectOneLine(res.stderr, "rookery: file is not a database: is DATA_DIR the server's data directory?");
    }
  });

  test("a damaged key file", () => {
    const damaged = join(work, "damaged-key");
    expect(run(["migrate"], { dataDir: damaged }).code).toBe(0);
    writeFileSync(join(damaged, "push-token.key"), "not a key");
    for (const args of [["rules", "list"], ["serve"]]) {
      const res = run(args, { dataDir: damaged, env: { PORT: "0" } });
      expect(res.code).toBe(1);
      expect(res.stdout).not.toContain("listening");
      expectOneLine(res.stderr, `rookery: ${join(damaged, "push-token.key")} does not hold a 32-byte key: put back the one from the backup, or remove it`);
    }
  });

  test("a port another process holds", async () => {
    const holder = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("someone else") });
    try {
      const res = run(["serve"], { dataDir, env: { PORT: String(holder.port), HOST: "127.0.0.1" } });
      expect(res.code).toBe(1);
      expectOneLine(res.stderr, `rookery: cannot listen at 127.0.0.1:${holder.port}: the port is in use (is Rookery already running?)`);
      expect(await (await fetch(`http://127.0.0.1:${holder.port}/`)).text()).toBe("someone else");
    } finally {
      holder.stop(true);
    }
  });

  test("a HOST that is not this machine's", () => {
    const res = run(["serve"], { dataDir, env: { PORT: "0", HOST: "192.0.2.1" } });
    expect(res.code).toBe(1);
    expectOneLine(res.stderr, "rookery: cannot listen at 192.0.2.1:0: HOST is not an address of this machine");
  });
});
