import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withoutNotice } from "../support/cli.ts";
import { knownDatabaseEnv } from "../support/test-database.ts";
import { makeCertificate, startTlsPeer, type TlsPeer } from "../support/federation-tls.ts";

// `rookery federation check` against a server behind a TLS proxy on loopback, as an operator
// runs it on the server's machine with the server's settings.

let cert: ReturnType<typeof makeCertificate>;
let peer: TlsPeer;
const forwarding = { on: true };
/** A server whose Date header is `skewMs` off, for the clock check. */
let timeServer: ReturnType<typeof Bun.serve>;
let skewMs = 0;
const work = mkdtempSync(join(tmpdir(), "rookery-check-"));

beforeAll(async () => {
  // Valid long enough not to be "expiring": a certificate with less than a week left fails.
  cert = makeCertificate(["127.0.0.2"], 90);
  // Rate limits on (the forwarded-address check reads them), the proxy on this machine trusted.
  peer = await startTlsPeer("127.0.0.2", cert, { RATE_LIMITS: "on", TRUSTED_PROXIES: "127.0.0.1" }, { forwardedFor: forwarding });
  await peer.user("alice");
  timeServer = Bun.serve({ hostname: "127.0.0.3", port: 0, fetch: () => new Response("time", { headers: { date: new Date(Date.now() + skewMs).toUTCString() } }) });
});
afterAll(async () => {
  await peer?.stop();
  timeServer?.stop(true);
  cert?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

/** The check as the operator runs it: the server's settings, its data directory; not waited for synchronously (the proxy runs here). */
async function check(args: string[] = [], env: Record<string, string> = {}) {
  const { port } = new URL(peer.direct);
  const proc = Bun.spawn([process.execPath, "src/main.ts", "federation", "check", ...args], {
    env: { ...process.env, DATA_DIR: peer.dataDir, PUBLIC_URL: peer.base, HOST: "127.0.0.2", PORT: port, TRUSTED_PROXIES: "127.0.0.1", NODE_EXTRA_CA_CERTS: cert.cert, LOG_REQUESTS: "false", ...knownDatabaseEnv(env.DATA_DIR ?? peer.dataDir), ...env },
    cwd: join(import.meta.dir, "..", ".."),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const lines = stdout.trimEnd().split("\n");
  const states = Object.fromEntries(lines.slice(0, -1).map((l) => [l.slice(8).split(/ {2,}/)[0]!.trim(), l.slice(0, 8).trim()]));
  return { code, stdout, stderr: withoutNotice(stderr), states, line: (name: string) => lines.find((l) => l.slice(8).startsWith(name)) ?? "" };
}

const time = () => `http://127.0.0.3:${timeServer.port}/`;

describe("rookery federation check", () => {
  test("a server set up right: every check ok, exit 0", async () => {
    skewMs = 0;
    const res = await check(["--time-from", time()]);
    expect(res.stderr).toBe("");
    expect(res.states).toEqual({ "public URL": "ok", certificate: "ok", "host-meta": "ok", WebFinger: "ok", NodeInfo: "ok", "forwarded addresses": "ok", clock: "ok" });
    expect(res.code).toBe(0);
    expect(res.line("public URL")).toContain(`${peer.base} answers over https at 127.0.0.2`);
    expect(res.line("certificate")).toMatch(/valid for 127\.0\.0\.2 until \d{4}-\d\d-\d\d \((89|90) days\), issued by rookery-test/);
    expect(res.line("WebFinger")).toContain(`@127.0.0.2@${peer.domain} and @alice@${peer.domain} resolve to ${peer.base}/users/..., served with this data directory's key`);
    expect(res.line("NodeInfo")).toContain(`${peer.base}/nodeinfo/2.0: rookery`);
    expect(res.line("clock")).toContain("of 127.0.0.3:");
    expect(res.stdout).toEndWith("7 ok, 0 failed, 0 skipped\n");
  });

  test("a clock minutes off fails; no server to compare with is skipped, never ok", async () => {
    skewMs = -10 * 60_000;
    let behind: Awaited<ReturnType<typeof check>>;
    try {
      behind = await check(["--time-from", time()]);
    } finally {
      skewMs = 0;
    }
    expect(behind.states.clock).toBe("failed");
    // Ten minutes, give or take the Date headers' whole seconds and the time the answers took
    // on a busy machine (599.0 s measured under load).
    const said = /the server's clock is (\d+\.\d) s ahead of 127\.0\.0\.3:\d+'s/.exec(behind.line("clock"));
    expect(said).not.toBeNull();
    expect(Math.abs(Number(said![1]) - 600)).toBeLessThan(10);
    expect(behind.code).toBe(1);
    const closed = Bun.serve({ hostname: "127.0.0.3", port: 0, fetch: () => new Response() });
    const nobody = `http://127.0.0.3:${closed.port}/`;
    closed.stop(true);
    const offline = await check(["--time-from", nobody]);
    expect(offline.states.clock).toBe("skipped");
    expect(offline.line("clock")).toContain("could not compare: 127.0.0.3:");
    expect(offline.line("clock")).toContain("connection refused");
    expect(offline.code).toBe(0);
  });

  test("a proxy whose X-Forwarded-For the server does not get fails the forwarded-address check", async () => {
    forwarding.on = false;
    try {
      const res = await check(["--time-from", time()]);
      expect(res.states["forwarded addresses"]).toBe("failed");
      expect(res.line("forwarded addresses")).toContain("the server takes requests through the proxy as coming from the proxy itself: set TRUSTED_PROXIES");
      expect(res.code).toBe(1);
      // The rest is as it was.
      expect(Object.values(res.states).filter((s) => s !== "ok")).toEqual(["failed"]);
    } finally {
      forwarding.on = true;
    }
  });

  test("a certificate the machine does not trust fails, and the rest is still checked", async () => {
    const res = await check(["--time-from", time()], { NODE_EXTRA_CA_CERTS: "" });
    expect(res.states.certificate).toBe("failed");
    expect(res.line("certificate")).toContain("refused: ");
    expect(res.line("certificate")).toContain("other servers will not connect");
    expect(res.states["host-meta"]).toBe("ok");
    expect(res.states.WebFinger).toBe("ok");
    expect(res.code).toBe(1);
  });

  test("a certificate with days left, not weeks: failed, is its renewal working?", async () => {
    const short = makeCertificate(["127.0.0.2"], 3);
    // Another https server on the same name, answering as this domain would.
    const expiring = Bun.serve({ hostname: "127.0.0.2", port: 0, tls: { cert: Bun.file(short.cert), key: Bun.file(short.key) }, fetch: (request): Response => Response.json({ uri: new URL(request.url).host }) });
    try {
      const res = await check(["--time-from", time()], { PUBLIC_URL: `https://127.0.0.2:${expiring.port}`, NODE_EXTRA_CA_CERTS: short.cert });
      expect(res.states.certificate).toBe("failed");
      expect(res.line("certificate")).toMatch(/valid for 127\.0\.0\.2 but expires \d{4}-\d\d-\d\d, in [23] day\(s\): is its renewal working\?/);
      expect(res.code).toBe(1);
    } finally {
      expiring.stop(true);
      short.cleanup();
    }
  });

  test("another data directory than the answering server's: WebFinger says the key is not this one's", async () => {
    const other = join(work, "other");
    const made = Bun.spawnSync([process.execPath, "src/main.ts", "migrate"], { cwd: join(import.meta.dir, "..", ".."), env: { ...process.env, DATA_DIR: other } });
    expect(made.exitCode).toBe(0);
    const pair = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const db = new Database(join(other, "rookery.sqlite3"));
    db.run("INSERT INTO instance_settings (key, value) VALUES (?, ?)", [
      "federation_instance_actor_keys",
      JSON.stringify([{ publicKey: await crypto.subtle.exportKey("jwk", pair.publicKey), privateKey: await crypto.subtle.exportKey("jwk", pair.privateKey) }]),
    ]);
    db.close();
    const res = await check(["--time-from", time()], { DATA_DIR: other });
    expect(res.states.WebFinger).toBe("failed");
    expect(res.line("WebFinger")).toContain("serves another key than this data directory's: another server (or another DATA_DIR) answers at PUBLIC_URL");
    expect(res.code).toBe(1);
  });

  test("an http or localhost PUBLIC_URL fails at once, the rest skipped; FEDERATION=off has nothing to check", async () => {
    const plain = await check([], { PUBLIC_URL: "http://social.example" });
    expect(plain.states["public URL"]).toBe("failed");
    expect(plain.line("public URL")).toContain("PUBLIC_URL is http://social.example: other servers reach servers over https only");
    expect(Object.values(plain.states).filter((s) => s === "skipped")).toHaveLength(6);
    expect(plain.code).toBe(1);
    const local = await check([], { PUBLIC_URL: "https://localhost:8443" });
    expect(local.line("public URL")).toContain("PUBLIC_URL's host is localhost");
    expect(local.code).toBe(1);
    const off = await check([], { FEDERATION: "off" });
    expect(off.states).toEqual({ federation: "skipped" });
    expect(off.code).toBe(0);
  });

  test("bad arguments stop with a message, and check nothing", async () => {
    for (const [args, message] of [
      [["extra"], 'federation check takes no arguments but --time-from <url> (got "extra")'],
      [["--time-from", "ftp://time.example"], '--time-from needs an http(s) URL (got "ftp://time.example")'],
      [["--time-from"], '--time-from needs an http(s) URL (got "")'],
    ] as const) {
      const res = await check([...args]);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe("");
      expect(res.stderr).toBe(`rookery: ${message}\n`);
    }
  });
});
