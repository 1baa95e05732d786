import { spawnSync } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "./http.ts";
import { startServeProcess } from "./serve-process.ts";
import { dropDatabase, knownDatabaseEnv } from "./test-database.ts";

const ROOT = join(import.meta.dir, "..", "..");
export const TLS_PASSWORD = "correct horse battery staple";

/**
 * A self-signed certificate for the loopback addresses the federation tests use, made with
 * openssl. It is its own CA: servers trust it through NODE_EXTRA_CA_CERTS.
 */
export function makeCertificate(addresses: string[] = ["127.0.0.2", "127.0.0.3"], days = 2): { dir: string; cert: string; key: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "rookery-tls-"));
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const out = spawnSync(
    ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert, "-days", String(days), "-subj", "/CN=rookery-test", "-addext", `subjectAltName=${addresses.map((a) => `IP:${a}`).join(",")}`],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (out.exitCode !== 0) throw new Error(`openssl failed: ${out.stderr.toString()}`);
  return { dir, cert, key, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TlsPeer {
  /** PUBLIC_URL: https, the TLS proxy's address. */
  base: string;
  /** The server itself, plain http (what the test's clients call). */
  direct: string;
  /** The acct domain (host:port). */
  domain: string;
  dataDir: string;
  /** Makes an account with the CLI and signs it in with the password grant. */
  user(username: string, options?: { locked?: boolean }): Promise<{ client: Client; id: string }>;
  log(): string;
  stop(): Promise<void>;
}

/**
 * A Rookery server behind a TLS-terminating proxy, as in production: the server process
 * (from source, `bun src/main.ts serve`) listens on plain http, its PUBLIC_URL is the https
 * proxy in front of it, and it trusts the test's certificate through NODE_EXTRA_CA_CERTS,
 * which Bun reads at process start; hence a process of its own, not an in-process server.
 */
export async function startTlsPeer(
  host: string,
  tls: { cert: string; key: string },
  env: Record<string, string> = {},
  options: { proxyPort?: number; forwardedFor?: { on: boolean } } = {},
): Promise<TlsPeer> {
  // The server's own address is known once it listens (on a port the kernel picks); the proxy
  // must exist first, as PUBLIC_URL names it, and is called only once the server is up.
  let direct = "";
  const proxy = Bun.serve({
    hostname: host,
    port: options.proxyPort ?? 0,
    tls: { cert: Bun.file(tls.cert), key: Bun.file(tls.key) },
    async fetch(request, server) {
      const url = new URL(request.url);
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      // As nginx's $proxy_add_x_forwarded_for, when asked (switchable while it runs).
      const headers = new Headers(request.headers);
      if (options.forwardedFor?.on) headers.set("x-forwarded-for", [request.headers.get("x-forwarded-for"), server.requestIP(request)?.address].filter(Boolean).join(", "));
      return fetch(`${direct}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: "manual" });
    },
  });
  const base = new URL(`https://${host}:${proxy.port}`).origin;
  const cwd = mkdtempSync(join(tmpdir(), "rookery-peer-"));
  const dataDir = join(cwd, "data");
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? cwd,
    TMPDIR: tmpdir(),
    DATA_DIR: dataDir,
    HOST: host,
    PORT: "0",
    PUBLIC_URL: base,
    NODE_EXTRA_CA_CERTS: tls.cert,
    ALLOW_PRIVATE_ADDRESSES: "true",
    RATE_LIMITS: "off",
    LOG_REQUESTS: "false",
    ...env,
  };
  const main = join(ROOT, "src/main.ts");
  let server: Awaited<ReturnType<typeof startServeProcess>>;
  try {
    server = await startServeProcess([process.execPath, main, "serve"], { cwd, env: fullEnv });
  } catch (e) {
    proxy.stop(true);
    rmSync(cwd, { recursive: true, force: true });
    throw e;
  }
  const proc = server.proc;
  direct = server.listen;
  const anonymous = new Client(direct);
  return {
    base,
    direct,
    domain: new URL(base).host,
    dataDir,
    async user(username, options = {}) {
      const created = spawnSync([process.execPath, main, "accounts", "create", username, "--email", `${username}@tls.test`, "--password", TLS_PASSWORD], { cwd, env: { ...fullEnv, ...knownDatabaseEnv(dataDir) } });
      if (created.exitCode !== 0) throw new Error(`accounts create failed: ${created.stderr.toString()}`);
      const app = await anonymous.post("/api/v1/apps", { json: { client_name: "tls test", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow" } });
      const token = await anonymous.post("/oauth/token", {
        json: { grant_type: "password", username, password: TLS_PASSWORD, client_id: app.body.client_id, client_secret: app.body.client_secret, scope: "read write follow" },
      });
      if (token.status !== 200) throw new Error(`sign-in failed: ${token.text}`);
      const client = new Client(direct, token.body.access_token);
      if (options.locked) await client.patch("/api/v1/accounts/update_credentials", { json: { locked: true } });
      const me = await client.get("/api/v1/accounts/verify_credentials");
      return { client, id: me.body.id as string };
    },
    log: server.output,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      proxy.stop(true);
      rmSync(cwd, { recursive: true, force: true });
      await dropDatabase(dataDir);
    },
  };
}
