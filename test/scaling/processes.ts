import type { Subprocess } from "bun";
import { join } from "node:path";

const PROCESS = join(import.meta.dir, "..", "support", "pg-share-process.ts");

/** A second process (test/support/pg-share-process.ts) and the lines it prints, one at a time. */
export async function startProcess(args: string[]) {
  const proc: Subprocess<"ignore", "pipe", "inherit"> = Bun.spawn([process.execPath, PROCESS, ...args], { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  void (async () => {
    const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += value;
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        const waiter = waiting.shift();
        if (waiter) waiter(line);
        else lines.push(line);
      }
    }
  })();
  return {
    /** The next line it prints. */
    line: (): Promise<string> => {
      const line = lines.shift();
      return line !== undefined ? Promise.resolve(line) : new Promise((resolve) => waiting.push(resolve));
    },
    /** Waits for the line `want`, returning the lines before it. */
    async until(want: string): Promise<string[]> {
      const before: string[] = [];
      for (let line = await this.line(); line !== want; line = await this.line()) before.push(line);
      return before;
    },
    /** kill -9: no handler of the process runs. */
    kill: () => proc.kill("SIGKILL"),
    exited: proc.exited,
  };
}
