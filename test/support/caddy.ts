import { spawn, type Subprocess } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "./wait.ts";

/**
 * Caddy (Debian's package, installed by .ci/run) as the load balancer in front of several Rookery
 * processes: round-robin over `upstreams`, each request to the next, streams passed through as
 * they come (`flush_interval -1`: an SSE event is not held in a buffer). Caddy sets
 * X-Forwarded-For, which the processes believe from 127.0.0.1 (TRUSTED_PROXIES).
 * `port` must be known before the processes start (their PUBLIC_URL names it).
 */
export interface Caddy {
  url: string;
  stop(): Promise<void>;
  output(): string;
}

export const CADDY_BIN = "/usr/bin/caddy";

export async function startCaddy(port: number, upstreams: string[], host = "127.0.0.1"): Promise<Caddy> {
  const dir = mkdtempSync(join(tmpdir(), "rookery-caddy-"));
  const config = join(dir, "Caddyfile");
  writeFileSync(
    config,
    `{
  admin off
  auto_https off
  storage file_system ${join(dir, "data")}
}
http://${host}:${port} {
  bind ${host}
  reverse_proxy ${upstreams.join(" ")} {
    lb_policy round_robin
    flush_interval -1
  }
}
`,
  );
  const proc: Subprocess = spawn([CADDY_BIN, "run", "--adapter", "caddyfile", "--config", config], {
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, "data"), XDG_CONFIG_HOME: join(dir, "config") },
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  for (const stream of [proc.stdout, proc.stderr] as ReadableStream<Uint8Array>[]) {
    void (async () => {
      const decoder = new TextDecoder();
      const reader = stream.getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    })();
  }
  const url = `http://${host}:${port}`;
  try {
    await eventually(
      async () => {
        if (proc.exitCode !== null) return "exited";
        return fetch(`${url}/api/v1/instance`).then((r) => r.status > 0, () => false);
      },
      () => `Caddy listening on ${url}; it printed: ${text}`,
      15_000,
    );
    if (proc.exitCode !== null) throw new Error(`Caddy exited (${proc.exitCode}): ${text}`);
  } catch (e) {
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    url,
    output: () => text,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
