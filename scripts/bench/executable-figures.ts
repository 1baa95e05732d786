import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The figures of `scripts/bench/executable.ts`, kept in docs/executable-run.json and quoted
 * from there, between markers, by the README and docs/benchmarks.md: the script rewrites all
 * three after a run, and test/unit/readme.test.ts checks that the quotes are the file's, so
 * the README cannot go on quoting a run long past.
 */
export interface Figures {
  sizeMb: number;
  medianMs: number;
  worstMs: number;
  idleMb: number;
}

export interface ExecutableRun {
  /** The day of the run (UTC), YYYY-MM-DD. */
  date: string;
  starts: number;
  cores: number;
  /** The one-minute load average when the run began: a busy machine starts slower. */
  load: number;
  bare: Figures;
  rookery: Figures;
}

const ROOT = join(import.meta.dir, "..", "..");
export const RUN_FILE = join(ROOT, "docs", "executable-run.json");
const README = join(ROOT, "README.md");
const BENCHMARKS = join(ROOT, "docs", "benchmarks.md");
const BEGIN = "<!-- executable-run: written by scripts/bench/executable.ts -->";
const END = "<!-- /executable-run -->";

const one = (n: number) => n.toFixed(1);

/** The README's sentence. */
export function readmeFigures(run: ExecutableRun): string {
  const r = run.rookery;
  return (
    `The executable is ${one(r.sizeMb)} MB; it answers its first request ${Math.round(r.medianMs)} ms after it is started ` +
    `(median of ${run.starts} starts, worst ${Math.round(r.worstMs)} ms) and idles at ${Math.round(r.idleMb)} MB of memory: ` +
    `\`bun scripts/bench/executable.ts\`, run of ${run.date} on ${run.cores} cores (load ${one(run.load)}), in \`docs/benchmarks.md\`.`
  );
}

/** docs/benchmarks.md's table. */
export function benchmarkFigures(run: ExecutableRun): string {
  const { bare: b, rookery: r } = run;
  return [
    `Run of ${run.date}, ${run.starts} starts each, ${run.cores} cores, load average ${one(run.load)} when it began:`,
    "",
    "| Measure | Bare Bun.serve executable | Rookery |",
    "|---|---|---|",
    `| executable size | ${one(b.sizeMb)} MB | **${one(r.sizeMb)} MB** |`,
    `| start-up to the first answered request, median / worst | ${one(b.medianMs)} / ${one(b.worstMs)} ms | **${one(r.medianMs)} / ${one(r.worstMs)} ms** |`,
    `| idle RSS | ${one(b.idleMb)} MB | **${one(r.idleMb)} MB** |`,
  ].join("\n");
}

export function readRun(): ExecutableRun {
  return JSON.parse(readFileSync(RUN_FILE, "utf8")) as ExecutableRun;
}

/** What stands between the markers of a file, or null without them. */
export function quoted(text: string): string | null {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  return start < 0 || end < start ? null : text.slice(start + BEGIN.length, end).trim();
}

function replaceQuote(file: string, body: string) {
  const text = readFileSync(file, "utf8");
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${file} has no ${BEGIN} ... ${END} block`);
  writeFileSync(file, `${text.slice(0, start + BEGIN.length)}\n${body}\n${text.slice(end)}`);
}

/** Records a run and rewrites the quotes of it. */
export function writeRun(run: ExecutableRun) {
  writeFileSync(RUN_FILE, `${JSON.stringify(run, null, 2)}\n`);
  replaceQuote(README, readmeFigures(run));
  replaceQuote(BENCHMARKS, benchmarkFigures(run));
}
