/**
 * The two servers of the side-by-side benchmark, each on loopback with its own temporary
 * folder and SQLite database, rate limits off and no per-request log lines:
 *
 * - GoToSocial from a binary (GTS_BIN), configured as scripts/interop/gotosocial-peer.ts does
 *   but over plain HTTP (Rookery is measured without TLS too), accounts made with its admin
 *   CLI, tokens from its sign-in form (it has no password grant).
 * - Rookery's executable (built by scripts/build.ts, or the command given), accounts made with
 *   its CLI, tokens from the password grant; federation on, with loopback allowed for the
 *   follower, the link-card page and the push service of the posting measurement.
 *
 * Both are started once untimed (migrations; Rookery unpacks its ffmpeg), then `start()` is
 * timed from spawn to the first 200 of /api/v1/instance.
 */
import { spawn, spawnSync, type Subprocess } from "bun";
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { signIn } from "../interop/gotosocial-peer.ts";
import { ApiClient } from "../interop/support.ts";
import { ROOT } from "./lib.ts";
import { assertFree, Refusal, stopChild, track } from "./sbs-procs.ts";
import { pin } from "./sbs-wrk.ts";

export const PASSWORD = "Side-by-side-passphrase-5210!";
export const emailOf = (username: string) => `${username}@sbs.bench.test`;

export interface Server {
  name: "GoToSocial" | "Rookery";
  url: string;
  logFile: string;
  /** Starts it and waits for the first 200 of /api/v1/instance; the milliseconds since spawn. */
  start(): Promise<number>;
  stop(): Promise<void>;
  pid(): number;
  /** A client of the account's own, with a fresh token. */
  signIn(username: string): Promise<ApiClient>;
  statusPage(username: string, id: string): string;
}

/** Polls /api/v1/instance every 5 ms (the same for both) until it answers 200. */
async function firstAnswer(name: string, url: string, proc: Subprocess, started: number, logFile: string, timeoutMs: number): Promise<number> {
  for (;;) {
    const ok = await fetch(`${url}/api/v1/instance`, { headers: { "user-agent": "rookery-side-by-side/1" } }).then((r) => r.status === 200, () => false);
    if (ok) return performance.now() - started;
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${name} exited (${proc.exitCode ?? proc.signalCode}) before answering; its log: ${logFile}\n${tail(logFile)}`);
    if (performance.now() - started > timeoutMs) throw new Error(`${name} did not answer ${url}/api/v1/instance within ${timeoutMs / 1000} s; its log: ${logFile}\n${tail(logFile)}`);
    await Bun.sleep(5);
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-8).join("\n");
  } catch {
    return "(no log)";
  }
}

export interface GtsOptions {
  bin: string;
  webDir: string;
  port: number;
  dir: string;
  cpus: string | undefined;
  users: string[];
}

export function checkGtsBinary(bin: string, webDir: string) {
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    throw new Refusal(`no GoToSocial binary at ${bin}: set GTS_BIN to an executable GoToSocial v0.19.2 (docs/interop.md says how to build one)`);
  }
  if (!existsSync(join(webDir, "template", "sign-in.tmpl"))) throw new Refusal(`no GoToSocial web templates in ${webDir} (set GTS_WEB_DIR to the source tree's web/ folder)`);
}

export async function prepareGoToSocial(options: GtsOptions): Promise<Server> {
  const { bin, port, dir } = options;
  const host = "127.0.0.1";
  const url = `http://${host}:${port}`;
  await assertFree(url);
  const storage = join(dir, "storage");
  mkdirSync(storage, { recursive: true });
  const configPath = join(dir, "config.json");
  // Keys as in GoToSocial's example/config.yaml. log-level warn: no line per request, as
  // Rookery runs with LOG_REQUESTS=false.
  const config = {
    "log-level": "warn",
    "log-client-ip": false,
    host,
    protocol: "http",
    "bind-address": host,
    port,
    "trusted-proxies": [],
    "db-type": "sqlite",
    "db-address": join(dir, "gts.sqlite"),
    "web-template-base-dir": join(options.webDir, "template") + "/",
    "web-asset-base-dir": join(options.webDir, "assets") + "/",
    "accounts-registration-open": false,
    "storage-backend": "local",
    "storage-local-base-path": storage,
    "letsencrypt-enabled": false,
    "media-ffmpeg-pool-size": 1,
    // Loopback allowed for the push service stand-in, as Rookery's ALLOW_PRIVATE_ADDRESSES.
    "http-client": { timeout: "20s", "allow-ips": ["127.0.0.0/8"], "block-ips": [] },
    "advanced-rate-limit-requests": 0,
    "advanced-throttling-multiplier": 0,
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, TZ: "UTC" };
  const logFile = join(dir, "gotosocial.log");
  let proc: Subprocess | null = null;
  const cli = (...args: string[]) => {
    const out = spawnSync([bin, "--config-path", configPath, ...args], { env, stdout: "pipe", stderr: "pipe" });
    if (out.exitCode !== 0) throw new Error(`gotosocial ${args.slice(0, 3).join(" ")} failed: ${`${out.stdout}${out.stderr}`.trim().split("\n").slice(-2).join(" / ")}`);
  };
  const server: Server = {
    name: "GoToSocial",
    url,
    logFile,
    async start() {
      const started = performance.now();
      proc = track(spawn(pin(options.cpus, [bin, "--config-path", configPath, "server", "start"]), { env, stdout: Bun.file(logFile), stderr: Bun.file(logFile) }));
      return firstAnswer("GoToSocial", url, proc, started, logFile, 120_000);
    },
    async stop() {
      if (proc) await stopChild(proc);
      proc = null;
    },
    pid: () => proc!.pid,
    async signIn(username) {
      return signIn(new ApiClient(url), emailOf(username), PASSWORD);
    },
    statusPage: (username, id) => `/@${username}/statuses/${id}`,
  };
  // The first start makes the database and its instance application; accounts are made once
  // it has run, with the server up (as the interop script does).
  await server.start();
  for (const username of options.users) {
    cli("admin", "account", "create", "--username", username, "--email", emailOf(username), "--password", PASSWORD);
    cli("admin", "account", "confirm", "--username", username);
  }
  await server.stop();
  return server;
}

export interface RookeryOptions {
  /** The command that runs Rookery (an executable, or e.g. "bun src/main.ts"). */
  command: string[];
  port: number;
  dir: string;
  cpus: string | undefined;
  env: Record<string, string>;
  users: string[];
}

export async function prepareRookery(options: RookeryOptions): Promise<Server> {
  const { port, dir } = options;
  const url = `http://127.0.0.1:${port}`;
  await assertFree(url);
  const dataDir = join(dir, "data");
  mkdirSync(dataDir, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    TMPDIR: process.env.TMPDIR ?? "/tmp",
    // As `npm start` runs it: glibc's per-thread arenas otherwise keep image decoding's memory.
    MALLOC_ARENA_MAX: "2",
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: String(port),
    PUBLIC_URL: url,
    RATE_LIMITS: "off",
    LOG_REQUESTS: "false",
    FEDERATION: "on",
    // The follower, the link-card page and the push service are all on loopback.
    ALLOW_PRIVATE_ADDRESSES: "true",
    ...options.env,
  };
  const logFile = join(dir, "rookery.log");
  const cli = (...args: string[]) => {
    const out = spawnSync([...options.command, ...args], { env, cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (out.exitCode !== 0) throw new Error(`rookery ${args.slice(0, 2).join(" ")} failed: ${`${out.stdout}${out.stderr}`.trim().split("\n").slice(-3).join(" / ")}`);
    return out.stdout.toString().trim();
  };
  let proc: Subprocess | null = null;
  const server: Server = {
    name: "Rookery",
    url,
    logFile,
    async start() {
      const started = performance.now();
      proc = track(spawn(pin(options.cpus, [...options.command, "serve"]), { env, cwd: ROOT, stdout: Bun.file(logFile), stderr: Bun.file(logFile) }));
      return firstAnswer("Rookery", url, proc, started, logFile, 60_000);
    },
    async stop() {
      if (proc) await stopChild(proc);
      proc = null;
    },
    pid: () => proc!.pid,
    async signIn(username) {
      const client = new ApiClient(url);
      const app = await client.post("/api/v1/apps", { json: { client_name: "side-by-side", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow push" } });
      if (app.status !== 200) throw new Error(`Rookery app registration: ${app.status} ${app.text}`);
      const token = await client.post("/oauth/token", {
        json: { grant_type: "password", username, password: PASSWORD, client_id: app.body.client_id, client_secret: app.body.client_secret, scope: "read write follow push" },
      });
      if (token.status !== 200) throw new Error(`Rookery password grant for ${username}: ${token.status} ${token.text}`);
      return client.withToken(token.body.access_token);
    },
    statusPage: (username, id) => `/@${username}/${id}`,
  };
  cli("migrate");
  for (const username of options.users) cli("accounts", "create", username, "--email", emailOf(username), "--password", PASSWORD);
  // The first start unpacks the embedded ffmpeg into DATA_DIR/tools; later starts find it.
  await server.start();
  await server.stop();
  return server;
}
