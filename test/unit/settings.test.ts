import { expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { SETTINGS, settingsHelp } from "../../src/settings.ts";

const ROOT = join(import.meta.dir, "..", "..");
const names = new Set<string>(SETTINGS.map((s) => s.name));

function sources(): { path: string; text: string }[] {
  return [...new Glob("src/**/*.ts").scanSync({ cwd: ROOT })].sort().map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
}

const ENV = /\b(?:process\.env|Bun\.env|import\.meta\.env)\b/g;
/** A read of one variable by its name: `process.env.NAME`, `process.env["NAME"]`. */
const NAMED = /^\s*(?:\?\.|\.)\s*([A-Za-z_][A-Za-z0-9_]*)|^\s*(?:\?\.)?\[\s*["'`]([A-Za-z_][A-Za-z0-9_]*)["'`]\s*\]/;
/** Where the whole environment may be handed on: the default of `setting(name, env)` and `loadConfig(env)`. */
const WHOLE_ENV_ALLOWED = new Set(["src/settings.ts", "src/config.ts"]);

test("every environment variable read anywhere in src/ is declared in the settings table", () => {
  const undeclared: string[] = [];
  const unchecked: string[] = [];
  const read = new Set<string>();
  for (const { path, text } of sources()) {
    for (const m of text.matchAll(ENV)) {
      const after = text.slice(m.index + m[0].length, m.index + m[0].length + 80);
      const named = NAMED.exec(after);
      if (named) {
        const name = (named[1] ?? named[2]) as string;
        read.add(name);
        if (!names.has(name)) undeclared.push(`${path}: ${name}`);
      } else if (!WHOLE_ENV_ALLOWED.has(path)) {
        // Destructured or read by a computed name: nothing here can tell which variable.
        unchecked.push(`${path}: ${m[0]}${after.split("\n")[0]}`);
      }
    }
    for (const m of text.matchAll(/\bsetting(?:Given)?\(\s*["'`]([A-Za-z_][A-Za-z0-9_]*)["'`]/g)) {
      read.add(m[1] as string);
      if (!names.has(m[1] as string)) undeclared.push(`${path}: ${m[1]}`);
    }
    for (const m of text.matchAll(/\b(?:choice|bool|positiveInt|megabytes|perPeriod)\(\s*env,\s*["'`]([A-Za-z_][A-Za-z0-9_]*)["'`]/g)) read.add(m[1] as string);
  }
  expect(undeclared).toEqual([]);
  expect(unchecked).toEqual([]);
  // And nothing declared that nothing reads.
  expect([...names].filter((n) => !read.has(n))).toEqual([]);
  expect(read.size).toBeGreaterThan(20);
});

test("--help lists every setting with its default, INBOX_RATE_LIMIT and the media cache's among them", () => {
  const help = settingsHelp();
  // Each setting's block: its line and the wrapped lines under it, ending with its default.
  const block = (name: string) => new RegExp(`^  ${name} +[^\\n]*(?:\\n {4,}[^\\n]*)*`, "m").exec(help)?.[0] ?? "";
  for (const s of SETTINGS) expect(block(s.name)).toMatch(/\(default: [^)]+\)$/);
  expect(block("INBOX_RATE_LIMIT")).toEndWith("(default: 2000/300)");
  expect(block("CACHE_REMOTE_MEDIA")).toEndWith("(default: true)");
  expect(block("REMOTE_MEDIA_CACHE_MB")).toEndWith("(default: 1024)");
  for (const line of help.split("\n")) expect(line.length).toBeLessThanOrEqual(100);

  const proc = Bun.spawnSync([process.execPath, "src/main.ts", "--help"], { cwd: ROOT, env: { ...process.env, DATA_DIR: "/nonexistent" } });
  expect(proc.exitCode).toBe(0);
  expect(proc.stdout.toString()).toContain(help);
  expect(proc.stderr.toString()).toBe("");
});

test("the README's settings table names every setting", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("## Settings"), readme.indexOf("## Operating it"));
  expect([...names].filter((n) => !table.includes(`\`${n}\``))).toEqual([]);
});

test("a declared default is parsed as a value would be: the defaults are the table's", () => {
  const config = loadConfig({});
  expect(config.inboxRateLimit).toEqual({ limit: 2000, periodMs: 300_000 });
  expect(config.importRates).toEqual({ perHost: { limit: 60, periodMs: 60_000 }, total: { limit: 300, periodMs: 60_000 } });
  expect(config.port).toBe(3000);
  expect(config.instanceTitle).toBe("Rookery");
  // Empty is unset, as before: the default, not an error.
  expect(loadConfig({ PORT: " ", INSTANCE_TITLE: "", INBOX_RATE_LIMIT: "" }).port).toBe(3000);
});
