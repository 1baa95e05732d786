import { join } from "node:path";

/** Runs the real CLI (`bun src/main.ts ...`) over a DATA_DIR, as an operator would. */
export function cliIn(dataDir: string) {
  return (args: string[], env: Record<string, string> = {}, stdin?: string) => {
    const proc = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
      env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false", ...env },
      cwd: join(import.meta.dir, "..", ".."),
      stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    });
    return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
  };
}
