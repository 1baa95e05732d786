import { spawn, spawnSync, type Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "../support/wait.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** Builds the executable the way `bun run build` does, into a temporary folder. */
export function buildExecutable(): { file: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "rookery-exe-"));
  const file = join(dir, "rookery");
  const out = spawnSync([process.execPath, join(ROOT, "scripts/build.ts"), "--outfile", file], { cwd: ROOT });
  if (out.exitCode !== 0) throw new Error(`build failed: ${out.stderr.toString()}${out.stdout.toString()}`);
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunningExecutable {
  url: string;
  dataDir: string;
  /** A folder unrelated to the project, where the executable runs. */
  cwd: string;
  env: Record<string, string>;
  proc: Subprocess;
  log(): string;
  /** Runs a subcommand of the same executable with the same settings. */
  run(args: string[], stdin?: string): { code: number; stdout: string; stderr: string };
  stop(): Promise<void>;
}

/** A port the OS calls free now (another process may still take it before the executable does). */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

/** Starts `rookery serve` from a folder away from the project, on a fresh DATA_DIR. */
export async function startExecutable(file: string, env: Record<string, string> = {}): Promise<RunningExecutable> {
  const cwd = mkdtempSync(join(tmpdir(), "rookery-cwd-"));
  const dataDir = join(cwd, "state");
  // The port is part of PUBLIC_URL, so it is chosen here; when another process took it first
  // the executable exits, and it is started again on another.
  for (let attempt = 1; ; attempt++) {
    const port = freePort();
    const fullEnv: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? cwd, TMPDIR: tmpdir(), DATA_DIR: dataDir, PORT: String(port), ...env };
    let output = "";
    const proc = spawn([file, "serve"], { cwd, env: fullEnv, stdout: "pipe", stderr: "pipe" });
    const collect = async (stream: ReadableStream<Uint8Array>) => {
      const decoder = new TextDecoder();
      const reader = stream.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        output += decoder.decode(value);
      }
    };
    void collect(proc.stdout as ReadableStream<Uint8Array>);
    void collect(proc.stderr as ReadableStream<Uint8Array>);
    // Up once it says so: its own start-up line, not an answer on a port some other process may hold.
    await waitFor(() => output.includes("Rookery is listening") || proc.exitCode !== null, 30_000, `the executable to start: ${output}`);
    if (proc.exitCode !== null) {
      if (attempt < 3 && /EADDRINUSE|address already in use|in use/i.test(output)) continue;
      throw new Error(`the executable exited (${proc.exitCode}): ${output}`);
    }
    const url = `http://localhost:${port}`;
    return {
      url,
      dataDir,
      cwd,
      env: fullEnv,
      proc,
      log: () => output,
      run(args, stdin) {
        const out = spawnSync([file, ...args], { cwd, env: fullEnv, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
        return { code: out.exitCode ?? -1, stdout: out.stdout.toString(), stderr: out.stderr.toString() };
      },
      async stop() {
        proc.kill("SIGTERM");
        await proc.exited;
        rmSync(cwd, { recursive: true, force: true });
      },
    };
  }
}
