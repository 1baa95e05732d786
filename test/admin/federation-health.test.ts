/**
 * /admin/federation: the health page over two real servers federating (a follow each way, and
 * a delivery to a host that does not answer): the queue and the failing host with its error,
 * the day's chart with its counts, the inbox rate, peers and storage. And the counts
 * themselves, on both databases: written by the hour at most a minute late, kept across a restart, pruned after a week.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { FederationTraffic } from "../../src/services/admin/traffic.ts";
import type { BrowserSession } from "../support/browser.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually, startFederatedPair } from "../support/federation.ts";
import { signedIn } from "../support/pages.ts";
import type { TestServer } from "../support/server.ts";
import { closePortArms, freshPostgresPort, freshSqlitePort, portArms } from "../support/port-arms.ts";
import { createStaff, remoteAccount } from "../support/staff.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let adminA: BrowserSession;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  await createStaff(a, "adam", "admin");
  alice = await createUser(a, "alice");
  await createUser(b, "bob");
  adminA = await signedIn(a, "adam");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const current = async (server: TestServer) => (await server.ctx.services.federationTraffic.hours(1))[0]!;

describe("/admin/federation", () => {
  test("a follow across servers is counted: a delivery from A, an activity received by B, its Accept back", async () => {
    const remoteBob = (await a.federation!.resolveActor(`${b.base}/users/bob`))!;
    const before = { a: await current(a), b: await current(b) };
    await alice.client.post(`/api/v1/accounts/${remoteBob.id}/follow`);
    await eventually(async () => (await alice.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteBob.id) } })).body[0].following, "alice follows bob");
    await a.federation!.idle();
    await b.federation!.idle();
    expect((await current(a)).attempted).toBeGreaterThan(before.a.attempted);
    expect((await current(b)).received).toBe(before.b.received + 1);
    expect((await current(b)).attempted).toBeGreaterThan(before.b.attempted);
    expect((await current(a)).received).toBe(before.a.received + 1);
    expect(b.ctx.services.federationTraffic.inboxRate().lastHour).toBe(before.b.received + 1);

    const page = await adminA.get("/admin/federation");
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Federation health</h1>");
    // The chart: an image with a title and a summary, and the numbers in a table beside it.
    expect(page.text).toMatch(/<svg viewBox="0 0 720 220" role="img" aria-labelledby="traffic-title traffic-desc"/);
    expect(page.text).toContain('<title id="traffic-title">Deliveries and received activities, hour by hour, the last 24 hours (UTC)</title>');
    const now = await current(a);
    const hour = new Date(now.hour).toISOString().slice(0, 13).replace("T", " ");
    const row = new RegExp(`<tr><td>${hour}:00</td><td>(\\d+)</td><td>(\\d+)</td><td>(\\d+)</td></tr>`).exec(page.text);
    expect(row?.slice(1).map(Number)).toEqual([now.attempted, now.failed, now.received]);
    expect(page.text.match(/<tr><td>\d{4}-\d\d-\d\d \d\d:00<\/td>/g)).toHaveLength(24);
    expect(page.text).toContain(`activities received in the last minute, ${now.received} in the last hour (since this server started`);
    // Peers: B, with bob.
    expect(page.text).toContain("1 server known here, with 1 account stored.");
    expect(page.text).toContain(`<tr><td>${new URL(b.base).host}</td><td>1</td></tr>`);
    expect(page.text).toMatch(/<tr><th scope="row">Database<\/th><td>[\d.]+ (KiB|MiB)/);
    expect(page.text).toContain('<tr><th scope="row">Remote media cache</th><td>0 bytes of at most 1.0 GiB</td></tr>');
  });

  test("a delivery to a host that does not answer: it waits for a retry, and the host is listed with its error", async () => {
    const ghost = await remoteAccount(a, "ghost", "127.0.0.9:9");
    await alice.client.post(`/api/v1/accounts/${ghost.id}/follow`);
    await eventually(async () => (await current(a)).failed >= 1, "the delivery failed");
    await eventually(async () => (await adminA.get("/admin/federation")).text.includes("<tr><td>127.0.0.9:9</td><td>1</td><td>-</td>"), "the failing host is listed");
    const page = await adminA.get("/admin/federation");
    expect(page.text).toMatch(/\d+ messages? waits? in the delivery queue: 0 due now, [1-9]\d* held for a retry \(the next at /);
    expect(page.text).toMatch(/<tr><td>127\.0\.0\.9:9<\/td><td>1<\/td><td>-<\/td><td>[^<]+<\/td><td>[^<]+<\/td><\/tr>/);
  });
});

describe.each(portArms)("the counts on $name", (arm) => {
  afterEach(closePortArms);
  test.skipIf(arm.skip)("written at most a minute late, by the hour; kept across a restart; a week kept", async () => {
    const port = await (arm.name === "SQLite" ? freshSqlitePort() : freshPostgresPort());
    // Ten minutes into an hour, standing still: the minute advanced stays in that hour.
    const clock = new ManualClock(Date.UTC(2026, 10, 27, 3, 10));
    const stored = () => port.all("SELECT hour, attempted, failed, received FROM federation_traffic ORDER BY hour");
    const traffic = new FederationTraffic(port, clock);
    const started = clock.now();
    const hour = started - (started % 3_600_000);
    traffic.attempted();
    traffic.failed();
    traffic.received();
    expect(await stored()).toEqual([]);
    clock.advance(60_000);
    traffic.received();
    // The write a count starts is awaited by flush (the counts since are none).
    await traffic.flush();
    expect(await stored()).toEqual([{ hour, attempted: 1, failed: 1, received: 2 }]);
    expect(traffic.inboxRate()).toEqual({ lastMinute: 1, lastHour: 2, countingSince: started });
    // A new process (a restart) reads the hours written; its per-minute figures start again.
    clock.advance(60 * 60_000);
    const after = new FederationTraffic(port, clock);
    after.attempted();
    const day = await after.hours(24);
    expect(day).toHaveLength(24);
    expect(day.slice(-2)).toEqual([
      { hour, attempted: 1, failed: 1, received: 2 },
      { hour: hour + 3_600_000, attempted: 1, failed: 0, received: 0 },
    ]);
    expect(after.inboxRate().lastHour).toBe(0);
    // Past a week, the hour is dropped at the next write.
    clock.advance(8 * 24 * 60 * 60_000);
    await after.flush();
    expect(await stored()).toEqual([]);
  });
});
