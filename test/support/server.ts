import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/clock.ts";
import { loadConfig } from "../../src/config.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import type { Resolver } from "../../src/net/outgoing.ts";
import { databaseEnv, dropDatabase } from "./test-database.ts";

export interface TestServer extends RunningServer {
  /** Base URL the server calls itself by (PUBLIC_URL). */
  base: string;
  clock: ManualClock;
  dataDir: string;
  env: Record<string, string>;
  /** Stops the server and starts a new one on the same data directory; `whileDown` runs in between. */
  restart(whileDown?: () => void): Promise<TestServer>;
  close(): Promise<void>;
}

/**
 * A real server on a random loopback port, over a fresh DATA_DIR, with a clock the test
 * can move. Rate limits are off unless the test turns them on. In the PostgreSQL test mode
 * (test-database.ts) its database is a fresh one of the throwaway cluster, kept across restarts.
 */
export async function startTestServer(env: Record<string, string> = {}, options: { clock?: ManualClock; dataDir?: string; resolve?: Resolver; transport?: typeof fetch } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "rookery-test-"));
  const clock = options.clock ?? new ManualClock();
  // The server's settings, its database's included (what commands run beside it are given).
  env = { ...(await databaseEnv(dataDir, env)), ...env };
  const fullEnv = { DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_REQUESTS: "false", RATE_LIMITS: "off", ...env };
  const config = loadConfig(fullEnv);
  const running = await startServer(config, { clock, derivePublicUrl: !env.PUBLIC_URL, resolve: options.resolve, transport: options.transport });
  const server: TestServer = {
    ...running,
    base: running.ctx.config.publicUrl,
    clock,
    dataDir,
    env,
    async restart(whileDown?: () => void) {
      await running.stop();
      whileDown?.();
      return startTestServer(env, { clock, dataDir, resolve: options.resolve, transport: options.transport });
    },
    async close() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
      await dropDatabase(dataDir);
    },
  };
  return server;
}
