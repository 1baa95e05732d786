import { join } from "node:path";
import { Client } from "./http.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** `rookery <args>` as a process of its own on `dataDir` (the CLI), expected to succeed. */
/** Runs the admin CLI on a data directory; what it printed. */
export function cli(dataDir: string, args: string[]): string {
  const made = Bun.spawnSync([process.execPath, "src/main.ts", ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false" } });
  if (made.exitCode !== 0) throw new Error(`rookery ${args.join(" ")} failed: ${made.stderr.toString()}`);
  return made.stdout.toString();
}

/** A free port on `host`, from the kernel. */
export function freePort(host = "127.0.0.1"): number {
  const probe = Bun.serve({ port: 0, hostname: host, fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

/**
 * `rookery serve` as its own process on `dataDir` (so that a test can kill -9 it), answering
 * once it is up. `env` adds settings; host and port default to 127.0.0.1 and a free port.
 */
export async function serveProcess(dataDir: string, env: Record<string, string> = {}) {
  const host = env.HOST ?? "127.0.0.1";
  const port = env.PORT ?? String(freePort(host));
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, HOST: host, PORT: port, LOG_REQUESTS: "false", RATE_LIMITS: "off", ...env },
    stdout: "ignore",
    stderr: "ignore",
  });
  const base = `http://${host}:${port}`;
  const deadline = Date.now() + 15_000;
  let up = false;
  while (!up && Date.now() < deadline) {
    up = await fetch(`${base}/api/v1/streaming/health`).then((r) => r.ok, () => false);
    if (!up) await Bun.sleep(50);
  }
  if (!up) {
    proc.kill("SIGKILL");
    throw new Error("rookery serve did not come up");
  }
  return { proc, base, port };
}

/** A password-grant token for a user made with `cli`, as a bot would sign in. */
export async function signIn(base: string, username: string, password: string): Promise<Client> {
  const http = new Client(base);
  const app = await http.post("/api/v1/apps", { json: { client_name: "test", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" } });
  const token = await http.post("/oauth/token", {
    json: { grant_type: "password", username, password, client_id: app.body.client_id, client_secret: app.body.client_secret, scope: "read write" },
  });
  if (token.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify(token.body)}`);
  return new Client(base, token.body.access_token);
}
