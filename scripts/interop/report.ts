/**
 * The result table of an interop run: one row per check, one column per direction, each cell
 * PASS with what was seen or FAIL with why.
 */

export const R2G = "Rookery → GoToSocial";
export const G2R = "GoToSocial → Rookery";
export type Direction = typeof R2G | typeof G2R;

export interface Result {
  check: string;
  direction: Direction | "both";
  ok: boolean;
  seen: string;
}

export class Report {
  readonly results: Result[] = [];

  /** Runs one check in one direction: `run` answers what it saw, or throws why it failed. */
  async check(name: string, direction: Direction, run: () => Promise<string>): Promise<boolean> {
    const started = Date.now();
    let result: Result;
    try {
      result = { check: name, direction, ok: true, seen: await run() };
    } catch (error) {
      result = { check: name, direction, ok: false, seen: error instanceof Error ? error.message : String(error) };
    }
    this.results.push(result);
    console.error(`${result.ok ? "PASS" : "FAIL"} ${name} (${direction}) ${((Date.now() - started) / 1000).toFixed(1)} s: ${result.seen}`);
    return result.ok;
  }

  /** A failure outside any check (the servers did not start). */
  fail(name: string, why: string) {
    this.results.push({ check: name, direction: "both", ok: false, seen: why });
  }

  get passed() {
    return this.results.filter((r) => r.ok).length;
  }

  get failed() {
    return this.results.length - this.passed;
  }

  /** Markdown: | Check | Rookery → GoToSocial | GoToSocial → Rookery |, in the order checks ran. */
  table(): string {
    const cell = (r: Result | undefined) => (r ? `${r.ok ? "PASS" : "**FAIL**"}: ${r.seen.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim()}` : "not run");
    const names = [...new Set(this.results.map((r) => r.check))];
    const lines = [`| Check | ${R2G} | ${G2R} |`, "|---|---|---|"];
    for (const name of names) {
      const of = (d: Direction) => this.results.find((r) => r.check === name && (r.direction === d || r.direction === "both"));
      lines.push(`| ${name} | ${cell(of(R2G))} | ${cell(of(G2R))} |`);
    }
    return lines.join("\n");
  }
}
