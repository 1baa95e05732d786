import { spawn, type Subprocess } from "bun";
import { join, resolve } from "node:path";
import { Client } from "./http.ts";
import { databaseEnv, knownDatabaseEnv } from "./test-database.ts";
import { eventually } from "./wait.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** `rookery <args>` as a process of its own on `dataDir` (the CLI), `env` added, expected to succeed; what it printed. */
export function cli(dataDir: string, args: string[], env: Record<string, string> = {}): string {
  const made = Bun.spawnSync([process.execPath, "src/main.ts", ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false", ...knownDatabaseEnv(dataDir), ...env } });
  if (made.exitCode !== 0) throw new Error(`rookery ${args.join(" ")} failed: ${made.stderr.toString()}`);
  return made.stdout.toString();
}

/**
 * A free port on `host`, from the kernel; another process may take it before the server does.
 * Only for a port that must be known before the server starts: an origin kept across restarts
 * (PUBLIC_URL names the port), or a check that nothing listens there. Otherwise start on
 * PORT=0 and read the port the server bound (`startServeProcess`).
 */
export function freePort(host = "127.0.0.1"): number {
  const probe = Bun.serve({ port: 0, hostname: host, fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

export interface ServeProcess {
  proc: Subprocess;
  /** Where the server listens (http://host:port), as its start-up line says. */
  listen: string;
  /** The port it bound. */
  port: number;
  /** Its PUBLIC_URL, as the same line says. */
  url: string;
  /** Everything it has printed so far, stdout and stderr. */
  output(): string;
  /** Resolves once stdout and stderr have both ended (the process is gone, all it said read). */
  ended: Promise<void>;
}

/** The line `rookery serve` logs once it listens (src/main.ts), with its public and listening URLs. */
const LISTENING = /msg="Rookery is listening".* url=(\S+) listen=(\S+)/;

/**
 * The suite's one way to start `rookery serve` as a process of its own (from source or a built
 * executable: `command`) and wait for it: up once its start-up line says it listens, read from
 * its output. Under PORT=0 (the caller's env decides) the kernel picks the port as the server
 * binds it and that line names it, so no port is probed free first and then raced for. Fails,
 * the process killed, if the server exits first or says nothing by the deadline; the error
 * carries what it printed.
 */
export async function startServeProcess(command: string[], options: { cwd: string; env: Record<string, string>; deadlineMs?: number }): Promise<ServeProcess> {
  // In the PostgreSQL test mode, the database of its DATA_DIR (test-database.ts), the same after a kill and a start again.
  const database = options.env.DATA_DIR ? await databaseEnv(resolve(options.cwd, options.env.DATA_DIR), options.env) : {};
  const proc = spawn(command, { cwd: options.cwd, env: { ...options.env, ...database }, stdout: "pipe", stderr: "pipe" });
  let text = "";
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
  };
  const ended = Promise.all([read(proc.stdout as ReadableStream<Uint8Array>), read(proc.stderr as ReadableStream<Uint8Array>)]).then(() => {});
  let line: RegExpExecArray | "exited";
  try {
    line = await eventually(() => (proc.exitCode !== null ? "exited" : LISTENING.exec(text)), () => `"Rookery is listening" from ${command.join(" ")}; it printed: ${text}`, options.deadlineMs ?? 20_000);
  } catch (e) {
    proc.kill("SIGKILL");
    throw e;
  }
  if (line === "exited") {
    await ended;
    throw new Error(`${command.join(" ")} exited (${proc.exitCode}) before listening: ${text}`);
  }
  const [, url, listen] = line as RegExpExecArray;
  return { proc, listen: listen!, port: Number(new URL(listen!).port), url: url!, output: () => text, ended };
}

/**
 * `rookery serve` from source as its own process on `dataDir` (so that a test can kill -9 it),
 * answering once it is up. `env` adds settings; host and port default to 127.0.0.1 and one the
 * kernel picks (PUBLIC_URL then follows the port, as http://localhost:<port>).
 */
export async function serveProcess(dataDir: string, env: Record<string, string> = {}) {
  const running = await startServeProcess([process.execPath, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: "0", LOG_REQUESTS: "false", RATE_LIMITS: "off", ...env } as Record<string, string>,
  });
  return { proc: running.proc, base: running.listen, port: String(running.port) };
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
