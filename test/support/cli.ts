import { join } from "node:path";
import { knownDatabaseEnv } from "./test-database.ts";

/**
 * Every command's first line on standard error names its data directory (src/cli/data-dir.ts,
 * tested in test/cli/data-dir.test.ts); the helpers leave it out so that a test sees what the
 * command itself said.
 */
export function withoutNotice(stderr: string): string {
  return stderr.replace(/^rookery: data directory .*\n/, "");
}

/** Runs the real CLI (`bun src/main.ts ...`) over a DATA_DIR, as an operator would. */
export function cliIn(dataDir: string) {
  return (args: string[], env: Record<string, string> = {}, stdin?: string) => {
    const proc = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
      env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false", ...knownDatabaseEnv(dataDir), ...env },
      cwd: join(import.meta.dir, "..", ".."),
      stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    });
    return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: withoutNotice(proc.stderr.toString()) };
  };
}

/**
 * The real CLI over a running test server's data directory and with its settings, run beside it (not waited for
 * synchronously: the command may ask servers that run in this test process).
 */
export function cliBeside(server: { dataDir: string; base: string; env: Record<string, string> }, env: Record<string, string> = {}) {
  return async (args: string[]) => {
    const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], {
      // The server's settings (WHITELIST_MODE...), at its public URL.
      env: { ...process.env, ...server.env, DATA_DIR: server.dataDir, PUBLIC_URL: server.base, LOG_REQUESTS: "false", ...env },
      cwd: join(import.meta.dir, "..", ".."),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr: withoutNotice(stderr) };
  };
}
