import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { ManualClock } from "../../src/clock.ts";
import type { RateLimiter } from "../../src/infra/rate-limits.ts";
import { appToken, createUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { onPostgres } from "../support/test-database.ts";

// 13:20:00 UTC: a 5-minute window starts here (it ends 13:25); the 30-minute one ends at 13:30.
const START = Date.UTC(2026, 10, 22, 13, 20, 0);
const MINUTE = 60_000;

let server: TestServer;
let anon: Client;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMITS: "on", REGISTRATIONS: "open" }, { clock: new ManualClock(START) });
  anon = new Client(server.base);
});
afterAll(() => server.close());

const limits = (res: { headers: Headers }) => ({
  limit: res.headers.get("x-ratelimit-limit"),
  remaining: res.headers.get("x-ratelimit-remaining"),
  reset: res.headers.get("x-ratelimit-reset"),
});

async function drain(client: Client, n: number, path = "/api/v1/instance") {
  for (let i = 0; i < n; i++) await client.get(path);
}

describe("account access: 300 per 5 minutes", () => {
  test("headers count down; the 301st request is refused and has no effect; the next window resets", async () => {
    const user = await createUser(server, "busy");
    const first = await user.client.get("/api/v1/accounts/verify_credentials");
    expect(limits(first)).toEqual({ limit: "300", remaining: "299", reset: "2026-11-22T13:25:00.000000Z" });
    await drain(user.client, 298);
    const last = await user.client.post("/api/v1/statuses", { json: { status: "the 300th request" } });
    expect(last.status).toBe(200);
    expect(limits(last).remaining).toBe("0");
    const refused = await user.client.post("/api/v1/statuses", { json: { status: "the 301st request" } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toBe("application/json");
    expect(refused.body).toEqual({ error: "Too many requests" });
    expect(limits(refused)).toEqual({ limit: "300", remaining: "0", reset: "2026-11-22T13:25:00.000000Z" });
    const mine = (await new Client(server.base).get(`/api/v1/accounts/${user.id}/statuses`)).body;
    expect(mine.map((s: { content: string }) => s.content)).toEqual(["<p>the 300th request</p>"]);
    // Another account is counted apart.
    const other = await createUser(server, "calm");
    expect((await other.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);

    server.clock.set(START + 5 * MINUTE);
    const next = await user.client.get("/api/v1/accounts/verify_credentials");
    expect(next.status).toBe(200);
    expect(limits(next)).toEqual({ limit: "300", remaining: "299", reset: "2026-11-22T13:30:00.000000Z" });
  });
});

describe("IP access: 300 per 5 minutes for requests without an account", () => {
  test("counted per client address; a forged X-Forwarded-For changes nothing", async () => {
    server.clock.set(START + 10 * MINUTE);
    await drain(anon, 299);
    const last = await anon.get("/api/v1/instance", { headers: { "x-forwarded-for": "203.0.113.7" } });
    expect(last.status).toBe(200);
    expect(limits(last).remaining).toBe("0");
    const refused = await anon.get("/api/v1/instance", { headers: { "x-forwarded-for": "198.51.100.1" } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: "Too many requests" });
    // An app's own token is no account: it is counted by address too.
    const { token } = await appToken(server, "read");
    expect((await anon.get("/api/v1/apps/verify_credentials", { token })).status).toBe(429);
    // Pages outside /api are not limited.
    expect((await anon.get("/.well-known/nodeinfo")).status).toBe(200);
  });
});

describe("the specific buckets", () => {
  test("uploading: 30 per 30 minutes, reported as the closest limit", async () => {
    server.clock.set(START + 40 * MINUTE);
    const user = await createUser(server, "uploader");
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#888" } }).png().toBuffer();
    const up = (version: 1 | 2) => {
      const form = new FormData();
      form.append("file", new Blob([png]), "x.png");
      return user.client.post(`/api/v${version}/media`, { multipart: form });
    };
    const first = await up(1);
    expect(limits(first)).toEqual({ limit: "30", remaining: "29", reset: "2026-11-22T14:30:00.000000Z" });
    // v2 answers 202 (processing goes on in the background), v1 200.
    for (let i = 0; i < 29; i++) expect((await up(i % 2 === 0 ? 2 : 1)).status).toBe(i % 2 === 0 ? 202 : 200);
    const refused = await up(2);
    expect(refused.status).toBe(429);
    expect(limits(refused)).toEqual({ limit: "30", remaining: "0", reset: "2026-11-22T14:30:00.000000Z" });
    expect((await user.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });

  test("deletion: 30 per 30 minutes, DELETE of statuses and unreblog together", async () => {
    server.clock.set(START + 70 * MINUTE);
    const user = await createUser(server, "deleter");
    const other = await createUser(server, "boosted");
    const target = (await other.client.post("/api/v1/statuses", { json: { status: "boost me" } })).body;
    const ids: string[] = [];
    for (let i = 0; i < 31; i++) ids.push((await user.client.post("/api/v1/statuses", { json: { status: `doomed ${i}` } })).body.id);
    await user.client.post(`/api/v1/statuses/${target.id}/reblog`);
    expect((await user.client.post(`/api/v1/statuses/${target.id}/unreblog`)).status).toBe(200);
    for (let i = 0; i < 29; i++) expect((await user.client.delete(`/api/v1/statuses/${ids[i]}`)).status).toBe(200);
    const refused = await user.client.delete(`/api/v1/statuses/${ids[29]}`);
    expect(refused.status).toBe(429);
    expect(limits(refused).limit).toBe("30");
    expect((await user.client.get(`/api/v1/statuses/${ids[29]}`)).status).toBe(200);
  });

  test("app sign-up: 5 per 30 minutes per address", async () => {
    server.clock.set(START + 100 * MINUTE);
    const { token } = await appToken(server, "read write");
    for (let i = 0; i < 5; i++) {
      const res = await anon.post("/api/v1/accounts", { token, json: { username: `signup${i}`, email: `s${i}@example.test`, password: "longenough", agreement: true } });
      expect(res.status).toBe(200);
    }
    const sixth = await anon.post("/api/v1/accounts", { token, json: { username: "signup5", email: "s5@example.test", password: "longenough", agreement: true } });
    expect(sixth.status).toBe(429);
    expect(limits(sixth).limit).toBe("5");
    expect((await server.ctx.services.accounts.getLocal("signup5"))).toBeUndefined();
  });
});

describe("behind a trusted proxy", () => {
  test("X-Forwarded-For is believed from the proxy; IPv6 clients count per /64", async () => {
    const proxied = await startTestServer({ RATE_LIMITS: "on", TRUSTED_PROXIES: "127.0.0.1, ::1" }, { clock: new ManualClock(START) });
    try {
      const client = new Client(proxied.base);
      const from = (ip: string) => client.get("/api/v1/instance", { headers: { "x-forwarded-for": ip } });
      for (let i = 0; i < 300; i++) await from("2001:db8:1:2::1");
      expect((await from("2001:db8:1:2:ffff::9")).status).toBe(429);
      expect((await from("2001:db8:1:3::1")).status).toBe(200);
      expect((await from("192.0.2.10")).status).toBe(200);
      expect(limits(await from("192.0.2.11")).remaining).toBe("299");
    } finally {
      await proxied.close();
    }
  });
});

describe("RATE_LIMITS=off", () => {
  test("no limits and no headers", async () => {
    const open = await startTestServer({ RATE_LIMITS: "off" });
    try {
      const res = await new Client(open.base).get("/api/v1/instance");
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    } finally {
      await open.close();
    }
  });
});

describe("memory", () => {
  // Skipped in the PostgreSQL test mode: the counters are rows of PostgreSQL there, shared by the
  // processes, and their sweep is test/scaling/pg-rate-limits.test.ts's.
  test.skipIf(onPostgres)("counters of finished windows are swept", async () => {
    const limiter = server.ctx.services.rateLimits as RateLimiter;
    server.clock.set(START + 24 * 60 * MINUTE);
    limiter.sweep();
    expect(limiter.size).toBe(0);
  });
});
