import { spawnSync, type Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServeProcess } from "../support/serve-process.ts";
import { knownDatabaseEnv } from "../support/test-database.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** Builds the executable the way `bun run build` does (two builds and a profiling run between them), into a temporary folder. */
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

/** Starts `rookery serve` from a folder away from the project, on a fresh DATA_DIR, on a port the kernel picks. */
export async function startExecutable(file: string, env: Record<string, string> = {}): Promise<RunningExecutable> {
  const cwd = mkdtempSync(join(tmpdir(), "rookery-cwd-"));
  const dataDir = join(cwd, "state");
  // PORT=0 and no PUBLIC_URL: the executable's public URL follows the port it bound, which
  // its start-up line names.
  const fullEnv: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? cwd, TMPDIR: tmpdir(), DATA_DIR: dataDir, PORT: "0", ...env };
  const server = await startServeProcess([file, "serve"], { cwd, env: fullEnv, deadlineMs: 30_000 });
  const proc = server.proc;
  // Subcommands run with the port and public URL the server ended up with, as if they were set,
  // and on its database (PostgreSQL's in that test mode: test-database.ts).
  const runEnv = { ...fullEnv, ...knownDatabaseEnv(dataDir), PORT: String(server.port), PUBLIC_URL: server.url };
  return {
    url: server.url,
    dataDir,
    cwd,
    env: runEnv,
    proc,
    log: server.output,
    run(args, stdin) {
      const out = spawnSync([file, ...args], { cwd, env: runEnv, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
      return { code: out.exitCode ?? -1, stdout: out.stdout.toString(), stderr: out.stderr.toString() };
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}
