import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { benchmarkFigures, quoted, readmeFigures, readRun } from "../../scripts/bench/executable-figures.ts";

// The README is a self-hoster's only guide: its figures are the last benchmark run's, its links
// lead somewhere inside the repository, and its backup copies everything a restore needs.

const ROOT = join(import.meta.dir, "..", "..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

test("the README and docs/benchmarks.md quote the last run of scripts/bench/executable.ts, with its date", () => {
  const run = readRun();
  expect(run.date).toMatch(/^\d{4}-\d\d-\d\d$/);
  expect(quoted(readme)).toBe(readmeFigures(run));
  expect(quoted(readme)).toContain(`run of ${run.date}`);
  expect(quoted(readFileSync(join(ROOT, "docs", "benchmarks.md"), "utf8"))).toBe(benchmarkFigures(run));
});

test("every relative link of the README leads to a file in the repository", () => {
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((href) => !/^[a-z]+:/i.test(href) && !href.startsWith("#"));
  expect(links.length).toBeGreaterThan(0);
  expect(links.filter((href) => href.startsWith("../") || href.startsWith("/"))).toEqual([]);
  expect(links.filter((href) => !existsSync(join(ROOT, href.split("#")[0] as string)))).toEqual([]);
  expect(links).toContain("docs/mastodon-api-subset.md");
});

test("the backup section copies the key files and the media, with tools every machine has", () => {
  const section = readme.slice(readme.indexOf("### Backups and restores"), readme.indexOf("### Upgrading"));
  expect(section).toContain("push-token.key");
  expect(section).toContain('cp -p "$DATA_DIR"/*.key');
  expect(section).toContain('cp -a "$DATA_DIR/media"');
  expect(section).not.toContain("rsync");
});
