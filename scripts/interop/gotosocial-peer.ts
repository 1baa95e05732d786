/**
 * A GoToSocial server for the interop script (`scripts/interop/gotosocial.ts`), from a binary
 * someone built (GTS_BIN): its configuration in a temporary folder (SQLite database, local
 * storage), TLS served by itself from the test certificate on port 443 of a loopback address,
 * accounts made with its admin CLI, and tokens from its sign-in form (it has no password grant).
 * Nothing here builds GoToSocial: docs/interop.md says how.
 */
import { spawn, spawnSync, type Subprocess } from "bun";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ApiClient, waitFor } from "./support.ts";

export const GTS_PASSWORD = "Interop-peer-passphrase-7431!";

export interface GtsOptions {
  bin: string;
  /** Folder holding its `template/` and `assets/` (the source tree's `web/`). */
  webDir: string;
  host: string;
  port: number;
  /** The certificate it serves, which is also the CA it trusts (SSL_CERT_FILE). */
  cert: string;
  key: string;
  dir: string;
  users: string[];
  timeoutMs: number;
}

export interface GtsPeer {
  base: string;
  domain: string;
  logFile: string;
  /** A signed-in client (token from the sign-in form) of each account made at start-up. */
  clients: Map<string, ApiClient>;
  stop(): Promise<void>;
}

/** Where the web templates are by default: `web/` beside the binary. */
export function defaultWebDir(bin: string): string {
  return join(dirname(bin), "web");
}

export async function startGoToSocial(options: GtsOptions): Promise<GtsPeer> {
  const { bin, host, port, dir } = options;
  if (!existsSync(join(options.webDir, "template", "sign-in.tmpl"))) {
    throw new Error(`no GoToSocial web templates in ${options.webDir} (set GTS_WEB_DIR to the source tree's web/ folder)`);
  }
  const storage = join(dir, "storage");
  mkdirSync(storage, { recursive: true });
  const configPath = join(dir, "config.json");
  // JSON is read by viper like YAML; keys as in GoToSocial's example/config.yaml.
  const config = {
    "log-level": "info",
    "log-client-ip": false,
    host,
    protocol: "https",
    "bind-address": host,
    port,
    "trusted-proxies": [],
    "db-type": "sqlite",
    "db-address": join(dir, "gts.sqlite"),
    "web-template-base-dir": join(options.webDir, "template") + "/",
    "web-asset-base-dir": join(options.webDir, "assets") + "/",
    "instance-federation-mode": "blocklist",
    "instance-deliver-to-shared-inboxes": true,
    "accounts-registration-open": false,
    "storage-backend": "local",
    "storage-local-base-path": storage,
    "letsencrypt-enabled": false,
    "tls-certificate-chain": options.cert,
    "tls-certificate-key": options.key,
    "media-ffmpeg-pool-size": 1,
    cache: { "memory-target": "64MiB" },
    "http-client": {
      timeout: "20s",
      // GoToSocial refuses to dial loopback otherwise.
      "allow-ips": ["127.0.0.0/8"],
      "block-ips": [],
      // The test certificate is trusted through SSL_CERT_FILE, not by skipping verification.
      "tls-insecure-skip-verify": false,
    },
    "advanced-rate-limit-requests": 0,
    "advanced-throttling-multiplier": 0,
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    // Go reads the trusted roots from this file instead of the system's.
    SSL_CERT_FILE: options.cert,
    TZ: "UTC",
  };
  const logFile = join(dir, "gotosocial.log");
  const cli = (...args: string[]) => {
    const out = spawnSync([bin, "--config-path", configPath, ...args], { env, stdout: "pipe", stderr: "pipe" });
    if (out.exitCode === 0) return;
    const lines = `${out.stdout.toString()}${out.stderr.toString()}`.trim().split("\n");
    throw new Error(`gotosocial ${args.slice(0, 3).join(" ")} failed: ${lines.slice(-2).join(" / ")}`);
  };
  const proc: Subprocess = spawn([bin, "--config-path", configPath, "server", "start"], { env, stdout: Bun.file(logFile), stderr: Bun.file(logFile) });
  const base = port === 443 ? `https://${host}` : `https://${host}:${port}`;
  const anonymous = new ApiClient(base, undefined, options.cert);
  try {
    await waitFor(
      "GoToSocial to answer /api/v1/instance",
      async () => {
        if (proc.exitCode !== null) throw new Error(`gotosocial exited (${proc.exitCode}); see ${logFile}`);
        const r = await anonymous.get("/api/v1/instance").catch(() => null);
        return r?.status === 200 ? r : null;
      },
      Math.max(options.timeoutMs, 60_000),
    );
    // Accounts once the server has run (it makes its instance application on first start),
    // before anyone signs in (the server caches what it reads of them).
    for (const username of options.users) {
      cli("admin", "account", "create", "--username", username, "--email", emailOf(username), "--password", GTS_PASSWORD);
      cli("admin", "account", "confirm", "--username", username);
    }
    const clients = new Map<string, ApiClient>();
    for (const username of options.users) clients.set(username, await signIn(anonymous, emailOf(username), GTS_PASSWORD));
    return {
      base,
      domain: host,
      logFile,
      clients,
      stop: () => stopProcess(proc),
    };
  } catch (error) {
    await stopProcess(proc);
    throw error;
  }
}

function emailOf(username: string) {
  return `${username}@gts.interop.test`;
}

async function stopProcess(proc: Subprocess) {
  if (proc.exitCode !== null) return;
  proc.kill("SIGTERM");
  const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
  if (!done) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
}

/**
 * A token the way a browser gets one: register an app, open /oauth/authorize (which sends the
 * browser to the sign-in form with a session cookie), post the credentials, approve on the
 * authorize page, read the code from the redirect and exchange it at /oauth/token.
 */
export async function signIn(anonymous: ApiClient, email: string, password: string): Promise<ApiClient> {
  const redirectUri = "https://client.interop.test/callback";
  const scope = "read write follow";
  const app = await anonymous.post("/api/v1/apps", { json: { client_name: "rookery interop", redirect_uris: redirectUri, scopes: scope } });
  if (app.status !== 200) throw new Error(`app registration failed: ${app.status} ${app.text}`);
  const cookies = new Map<string, string>();
  const browse = async (method: string, path: string, form?: Record<string, string>) => {
    const headers: Record<string, string> = { accept: "text/html" };
    if (cookies.size) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const r = await anonymous.request(method, path, { form, headers });
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    return r;
  };
  const authorize = `/oauth/authorize?${new URLSearchParams({ client_id: app.body.client_id, redirect_uri: redirectUri, response_type: "code", scope })}`;
  const first = await browse("GET", authorize);
  if (first.status !== 303 || first.headers.get("location") !== "/auth/sign_in") throw new Error(`authorize did not send to the sign-in form: ${first.status} ${first.headers.get("location")}`);
  const form = await browse("GET", "/auth/sign_in");
  if (form.status !== 200 || !form.text.includes('name="password"')) throw new Error(`no sign-in form: ${form.status}`);
  const signedIn = await browse("POST", "/auth/sign_in", { username: email, password });
  if (signedIn.status !== 302 || signedIn.headers.get("location") !== "/oauth/authorize") throw new Error(`sign-in failed: ${signedIn.status} ${signedIn.text.slice(0, 200)}`);
  const page = await browse("GET", "/oauth/authorize");
  if (page.status !== 200) throw new Error(`no authorize page: ${page.status} ${page.text.slice(0, 200)}`);
  const approved = await browse("POST", "/oauth/authorize", {});
  const location = approved.headers.get("location") ?? "";
  const code = location.startsWith(redirectUri) ? new URL(location).searchParams.get("code") : null;
  if (!code) throw new Error(`no code after authorizing: ${approved.status} ${location} ${approved.text.slice(0, 200)}`);
  const token = await anonymous.post("/oauth/token", {
    json: { grant_type: "authorization_code", code, client_id: app.body.client_id, client_secret: app.body.client_secret, redirect_uri: redirectUri },
  });
  if (token.status !== 200) throw new Error(`code exchange failed: ${token.status} ${token.text}`);
  return anonymous.withToken(token.body.access_token);
}
