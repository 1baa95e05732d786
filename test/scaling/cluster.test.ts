import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Accept } from "@fedify/fedify/vocab";
import { CADDY_BIN, startCaddy, type Caddy } from "../support/caddy.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { Client } from "../support/http.ts";
import { freshPgDatabase, postgresAvailable, postgresRequired, type PgDatabase } from "../support/postgres.ts";
import { startS3, type TestS3 } from "../support/s3.ts";
import { cli, freePort, serveProcess, signIn } from "../support/serve-process.ts";
import { SseClient } from "../support/streams.ts";
import { eventually } from "../support/wait.ts";

/**
 * Issue 31's proof: three `rookery serve` processes, each a process of its own, behind Caddy
 * round-robin, on one PostgreSQL and one object store. What one process knows the others must
 * know through PostgreSQL: streams, the timer wheel's due jobs, rate limits, Idempotency-Keys,
 * Fedify's queue. Requests go through Caddy, or straight to one process where the test must
 * choose which (a stream on one, a post on another).
 */
const HOST = "127.0.0.1";
type Process = Awaited<ReturnType<typeof serveProcess>>;

let pg: PgDatabase;
let sql: SQL;
let s3: TestS3;
let caddy: Caddy;
let dataDir: string;
let env: Record<string, string>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const processes: (Process | null)[] = [];
let kim: Client;

const live = () => processes.filter((p): p is Process => p !== null);
const direct = (i: number, token?: string) => new Client(processes[i]!.base, token);

// A machine where neither could be installed (npm test installs both: scripts/test-services.sh) skips it, except under .ci/run, which requires PostgreSQL.
const runnable = postgresAvailable && (existsSync(CADDY_BIN) || postgresRequired);

describe.skipIf(!runnable)("three processes behind Caddy on one PostgreSQL", () => {
  beforeAll(async () => {
    pg = await freshPgDatabase();
    sql = new SQL(pg.url, { max: 2 });
    s3 = await startS3();
    receiver = await startReceiver("127.0.0.9");
    dataDir = mkdtempSync(join(tmpdir(), "rookery-cluster-"));
    const port = freePort(HOST);
    env = {
      DATABASE_URL: pg.url,
      // The wiring's test mode while the last services move onto the port (src/settings.ts).
      ...s3.env(),
      PUBLIC_URL: `http://${HOST}:${port}`,
      TRUSTED_PROXIES: "127.0.0.1",
      RATE_LIMITS: "on",
      ALLOW_PRIVATE_ADDRESSES: "true",
    };
    cli(dataDir, ["accounts", "create", "kim", "--email", "kim@example.test", "--password", "kims password"], env);
    // One after another: the first makes the key files of DATA_DIR the others then read.
    for (let i = 0; i < 3; i++) processes.push(await serveProcess(dataDir, env));
    caddy = await startCaddy(port, live().map((p) => `${HOST}:${p.port}`));
    kim = await signIn(caddy.url, "kim", "kims password");
  }, 120_000);

  afterAll(async () => {
    for (const p of live()) p.proc.kill("SIGKILL");
    await Promise.all(live().map((p) => p.proc.exited));
    await caddy?.stop();
    receiver?.stop();
    await s3?.stop();
    await sql?.close();
    await pg?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("Caddy spreads requests over the three processes, which answer as one instance", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const me = await kim.get("/api/v1/accounts/verify_credentials");
      expect(me.status).toBe(200);
      expect(me.body.username).toBe("kim");
      seen.add(me.body.id);
    }
    expect(seen.size).toBe(1);
    const instance = await new Client(caddy.url).get("/api/v2/instance");
    expect(instance.body.domain).toBe(new URL(env.PUBLIC_URL!).host);
  });

  test("a client streaming from one process sees a status posted through another within a second", async () => {
    const stream = await SseClient.open(`${processes[0]!.base}/api/v1/streaming/user`, { token: kim.token });
    try {
      const started = performance.now();
      const posted = await direct(1, kim.token).post("/api/v1/statuses", { json: { status: "from the second process" } });
      expect(posted.status).toBe(200);
      const update = await eventually(() => stream.events.find((e) => e.event === "update" && JSON.parse(e.data!).id === posted.body.id), "the update on the first process's stream", 5_000);
      const elapsed = performance.now() - started;
      expect(JSON.parse(update.data!).content).toContain("from the second process");
      expect(elapsed).toBeLessThan(1_000);
    } finally {
      stream.close();
    }
  });

  test("the same Idempotency-Key sent to two processes at once makes one status", async () => {
    const before = Number((await sql`SELECT count(*)::int AS n FROM statuses`)[0].n);
    const body = { json: { status: "said once" }, headers: { "idempotency-key": `cluster-${Date.now()}` } };
    const answers = await Promise.all([direct(0, kim.token).post("/api/v1/statuses", body), direct(2, kim.token).post("/api/v1/statuses", body)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers[0]!.body.id).toBe(answers[1]!.body.id);
    const after = Number((await sql`SELECT count(*)::int AS n FROM statuses`)[0].n);
    expect(after - before).toBe(1);
  });

  test("a burst over a rate limit spread across the processes is limited as one", async () => {
    // A fresh client address, told by Caddy's header (believed from 127.0.0.1): only this burst counts in its bucket.
    const headers = { "x-forwarded-for": "203.0.113.31" };
    const answers: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await direct(i % 3).post("/oauth/token", { form: { grant_type: "password", username: "burst", password: `wrong ${i}`, client_id: "nobody", client_secret: "nothing" }, headers });
      answers.push(r.status);
    }
    // Sign-in attempts by address: 25 in five minutes, counted together by the three processes
    // (an unknown login: kim's own bucket stays for the tests after this one).
    expect(answers.slice(0, 25).filter((s) => s === 429)).toEqual([]);
    expect(answers.slice(25)).toEqual([429, 429, 429, 429, 429]);
  });

  test("a scheduled status comes due while all three hold it: published exactly once", async () => {
    const at = new Date(Date.now() + 10 * 60_000).toISOString();
    const scheduled = await kim.post("/api/v1/statuses", { json: { status: "due for all three", scheduled_at: at } });
    expect(scheduled.status).toBe(200);
    // Its time comes while the processes are down: each restarts holding it due, and all three
    // start together (Caddy's upstreams keep their ports).
    for (const p of live()) p.proc.kill("SIGKILL");
    await Promise.all(live().map((p) => p.proc.exited));
    await sql`UPDATE scheduled_statuses SET scheduled_at = ${Date.now() - 1000} WHERE id = ${Number(scheduled.body.id)}`;
    const ports = processes.map((p) => p!.port);
    const restarted = await Promise.all(ports.map((port) => serveProcess(dataDir, { ...env, PORT: port })));
    processes.splice(0, 3, ...restarted);
    const published = () => sql`SELECT id FROM statuses WHERE text = 'due for all three'`;
    await eventually(async () => (await published()).length > 0, "the scheduled status published", 20_000);
    await eventually(async () => (await sql`SELECT count(*)::int AS n FROM scheduled_statuses WHERE id = ${Number(scheduled.body.id)}`)[0].n === 0, "the schedule gone");
    // The claim is marked done once the job returned (a statement after it): then every process
    // holding the timer learns it ran, and none runs it again.
    await eventually(async () => (await sql`SELECT count(*)::int AS n FROM timer_claims WHERE done`)[0].n > 0, "the timer's claim marked done");
    expect(await published()).toHaveLength(1);
  }, 90_000);

  test("kill -9 of one process loses and duplicates nothing: its queued deliveries are sent by the others, once", async () => {
    kim = await signIn(caddy.url, "kim", "kims password");
    const actor = `${env.PUBLIC_URL}/users/kim`;
    await receiver.follow(actor, `${actor}/inbox`);
    await eventually(() => receiver.received.some((x) => x instanceof Accept), "follow accepted");

    receiver.down = true;
    const posted = (await direct(0, kim.token).post("/api/v1/statuses", { json: { status: "outlives its process", visibility: "public" } })).body;
    const creates = () => receiver.posts.filter((p) => p.type === "Create" && p.id === `${posted.uri}/activity` && p.answered < 300);
    await eventually(() => receiver.posts.some((p) => p.type === "Create" && p.answered === 503), "a first attempt met the outage");
    await eventually(async () => (await sql`SELECT count(*)::int AS n FROM fedify_messages WHERE (message::jsonb->>'attempt')::int > 0`)[0].n > 0, "its retry queued");
    processes[0]!.proc.kill("SIGKILL");
    await processes[0]!.proc.exited;
    processes[0] = null;

    // What the dead process wrote is there, read through another.
    const read = await direct(1, kim.token).get(`/api/v1/statuses/${posted.id}`);
    expect(read.status).toBe(200);
    // The retry's time is made to have come (Fedify's first retry waits 30 s); the receiver is back.
    receiver.down = false;
    await sql`UPDATE fedify_messages SET run_at = 0`;
    await eventually(() => creates().length > 0, "delivered by another process", 30_000);
    await eventually(async () => (await sql`SELECT count(*)::int AS n FROM fedify_messages`)[0].n === 0, "the queue empty", 30_000);
    expect(creates()).toHaveLength(1);
  }, 90_000);
});
