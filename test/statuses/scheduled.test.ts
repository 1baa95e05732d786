import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { ManualClock } from "../../src/clock.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { drain } from "../support/wait.ts";

const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;
let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer({}, { clock: new ManualClock(START) });
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const at = (ms: number) => new Date(ms).toISOString();
const count = async (table: string) => Number((await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);
const statusCount = () => count("statuses");
const scheduledCount = () => count("scheduled_statuses");

function refresh(s: TestServer) {
  server = s;
  alice.client = new Client(s.base, alice.token);
  bob.client = new Client(s.base, bob.token);
}

async function schedule(user: TestUser, body: Record<string, unknown>) {
  const res = await user.client.post("/api/v1/statuses", { json: body });
  expect(res.status).toBe(200);
  return res.body as { id: string; scheduled_at: string; params: Record<string, unknown>; media_attachments: unknown[] };
}

describe("POST /api/v1/statuses with scheduled_at", () => {
  test("returns a ScheduledStatus with every params member, unset ones null", async () => {
    const when = server.clock.now() + 10 * MINUTE;
    const res = await schedule(alice, { status: "later", scheduled_at: at(when), visibility: "unlisted" });
    expect(Object.keys(res)).toEqual(["id", "scheduled_at", "params", "media_attachments"]);
    expect(res.scheduled_at).toBe(at(when));
    for (const key of ["text", "media_ids", "sensitive", "spoiler_text", "visibility", "scheduled_at", "poll", "idempotency", "in_reply_to_id", "application_id"]) {
      expect(res.params).toHaveProperty(key);
    }
    expect(res.params).toMatchObject({ text: "later", visibility: "unlisted", media_ids: null, poll: null, scheduled_at: null, idempotency: null, in_reply_to_id: null, sensitive: null });
    expect(typeof res.params.application_id).toBe("number");
    expect(res.media_attachments).toEqual([]);
  });

  test("too soon, in the past or unreadable: 422 and nothing stored", async () => {
    const before = await scheduledCount();
    const statuses = await statusCount();
    for (const when of [at(server.clock.now() + 4 * MINUTE), at(server.clock.now() - MINUTE)]) {
      const res = await alice.client.post("/api/v1/statuses", { json: { status: "soon", scheduled_at: when } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "Validation failed: Scheduled at The scheduled date must be in the future" });
    }
    for (const when of ["tomorrow", "2026-13-45T99:00:00Z", "1700000000"]) {
      const res = await alice.client.post("/api/v1/statuses", { json: { status: "when?", scheduled_at: when } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "Record invalid" });
    }
    const invalid = await alice.client.post("/api/v1/statuses", { json: { status: "", scheduled_at: at(server.clock.now() + 10 * MINUTE) } });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toEqual({ error: "Record invalid" });
    expect(await scheduledCount()).toBe(before);
    expect(await statusCount()).toBe(statuses);
  });

  test("media and polls may be scheduled; the media come along", async () => {
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#123456" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new Blob([png]), "p.png");
    const media = (await alice.client.post("/api/v1/media", { multipart: form })).body;
    const withMedia = await schedule(alice, { status: "picture later", media_ids: [media.id], scheduled_at: at(server.clock.now() + 20 * MINUTE) });
    expect(withMedia.params.media_ids).toEqual([media.id]);
    expect((withMedia.media_attachments as { id: string }[]).map((m) => m.id)).toEqual([media.id]);
    const withPoll = await schedule(alice, { status: "vote later", poll: { options: ["a", "b"], expires_in: 3600 }, scheduled_at: at(server.clock.now() + 21 * MINUTE) });
    expect(withPoll.params.poll).toEqual({ options: ["a", "b"], expires_in: 3600 });
  });
});

describe("publication", () => {
  test("at its time, through the normal path, once; the ScheduledStatus is gone", async () => {
    const when = server.clock.now() + 30 * MINUTE;
    const scheduled = await schedule(alice, { status: "scheduled hello @bob #later", scheduled_at: at(when) });
    server.clock.set(when - 1000);
    expect((await alice.client.get(`/api/v1/scheduled_statuses/${scheduled.id}`)).status).toBe(200);
    server.clock.set(when + 500);
    await drain(server);
    expect((await alice.client.get(`/api/v1/scheduled_statuses/${scheduled.id}`)).status).toBe(404);
    const mine = await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`);
    const published = mine.body.filter((s: { content: string }) => s.content.includes("scheduled hello"));
    expect(published).toHaveLength(1);
    expect(published[0].tags).toEqual([{ name: "later", url: `${server.base}/tags/later` }]);
    const mention = await bob.client.get("/api/v1/notifications", { query: { "types[]": "mention" } });
    expect(mention.body[0].status.id).toBe(published[0].id);
    // A second firing finds nothing to publish.
    await server.ctx.services.scheduled.publishDue(Number(scheduled.id));
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body.filter((s: { content: string }) => s.content.includes("scheduled hello"))).toHaveLength(1);
  });

  test("scheduled media and polls are published with the status", async () => {
    server.clock.advance(25 * MINUTE);
    await drain(server);
    const mine = (await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`, { query: { limit: "40" } })).body;
    expect(mine.find((s: { content: string }) => s.content.includes("picture later")).media_attachments).toHaveLength(1);
    expect(mine.find((s: { content: string }) => s.content.includes("vote later")).poll.options).toHaveLength(2);
  });

  test("a restart before the time keeps the schedule; one after it publishes at start", async () => {
    const first = server.clock.now() + 10 * MINUTE;
    const second = server.clock.now() + 20 * MINUTE;
    await schedule(alice, { status: "survives a restart", scheduled_at: at(first) });
    await schedule(alice, { status: "due while down", scheduled_at: at(second) });
    refresh(await server.restart());
    server.clock.set(first + 1000);
    await drain(server);
    const after = (await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body.map((s: { content: string }) => s.content);
    expect(after.filter((c: string) => c.includes("survives a restart"))).toHaveLength(1);
    expect(after.filter((c: string) => c.includes("due while down"))).toHaveLength(0);
    refresh(await server.restart(() => server.clock.set(second + 60 * MINUTE)));
    await drain(server);
    const later = (await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body.map((s: { content: string }) => s.content);
    expect(later.filter((c: string) => c.includes("due while down"))).toHaveLength(1);
    refresh(await server.restart());
    await drain(server);
    const again = (await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body.map((s: { content: string }) => s.content);
    expect(again.filter((c: string) => c.includes("due while down"))).toHaveLength(1);
  });
});

describe("the scheduled_statuses endpoints", () => {
  test("list with pagination, show, move, cancel; others' are 404", async () => {
    const base = server.clock.now();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await schedule(bob, { status: `bob ${i}`, scheduled_at: at(base + (10 + i) * MINUTE) })).id);
    const page = await bob.client.get("/api/v1/scheduled_statuses", { query: { limit: "2" } });
    expect(page.body.map((s: { id: string }) => s.id)).toEqual([made[2], made[1]]);
    const next = page.headers.get("link")!.match(/<([^>]+)>; rel="next"/)![1]!;
    expect((await bob.client.get(next)).body.map((s: { id: string }) => s.id)).toEqual([made[0]]);

    const moved = await bob.client.put(`/api/v1/scheduled_statuses/${made[0]}`, { json: { scheduled_at: at(base + 60 * MINUTE) } });
    expect(moved.status).toBe(200);
    expect(moved.body.scheduled_at).toBe(at(base + 60 * MINUTE));
    const tooSoon = await bob.client.put(`/api/v1/scheduled_statuses/${made[0]}`, { form: { scheduled_at: at(base + MINUTE) } });
    expect(tooSoon.status).toBe(422);
    expect(tooSoon.body).toEqual({ error: "Validation failed: Scheduled at The scheduled date must be in the future" });
    expect((await bob.client.get(`/api/v1/scheduled_statuses/${made[0]}`)).body.scheduled_at).toBe(at(base + 60 * MINUTE));

    for (const method of ["get", "put", "delete"] as const) {
      const res = await alice.client[method](`/api/v1/scheduled_statuses/${made[1]}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    const cancelled = await bob.client.delete(`/api/v1/scheduled_statuses/${made[1]}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({});
    expect((await bob.client.get(`/api/v1/scheduled_statuses/${made[1]}`)).status).toBe(404);
    server.clock.advance(15 * MINUTE);
    await drain(server);
    const published = (await bob.client.get(`/api/v1/accounts/${bob.id}/statuses`)).body.map((s: { content: string }) => s.content);
    expect(published).toContain("<p>bob 2</p>");
    expect(published).not.toContain("<p>bob 1</p>");
    expect((await new Client(server.base).get("/api/v1/scheduled_statuses")).status).toBe(401);
  });

  test("the same Idempotency-Key returns the same ScheduledStatus, also after a restart", async () => {
    const body = { status: "once, later", scheduled_at: at(server.clock.now() + 30 * MINUTE) };
    const headers = { "idempotency-key": "sched-1" };
    const before = await scheduledCount();
    const first = await alice.client.post("/api/v1/statuses", { json: body, headers });
    expect(first.status).toBe(200);
    const second = await alice.client.post("/api/v1/statuses", { json: body, headers });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await scheduledCount()).toBe(before + 1);
    refresh(await server.restart());
    const retried = await alice.client.post("/api/v1/statuses", { json: body, headers });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual(first.body);
    expect(await scheduledCount()).toBe(before + 1);
    // As in Mastodon, a repeat without scheduled_at looks for a status of that key: there is none.
    const statusesBefore = await statusCount();
    const unscheduled = await alice.client.post("/api/v1/statuses", { json: { status: "once, later" }, headers });
    expect(unscheduled.status).toBe(404);
    expect(unscheduled.body).toEqual({ error: "Record not found" });
    expect(await statusCount()).toBe(statusesBefore);
    expect(await scheduledCount()).toBe(before + 1);
    // Bob's key of the same name schedules his own.
    const bobs = await bob.client.post("/api/v1/statuses", { json: body, headers });
    expect(bobs.status).toBe(200);
    expect(bobs.body.id).not.toBe(first.body.id);
    expect(await scheduledCount()).toBe(before + 2);
  });

  test("at most 25 for one day and 300 in all", async () => {
    const carol = await createUser(server, "carol");
    const dayStart = Math.floor(server.clock.now() / 86_400_000) * 86_400_000 + 2 * 86_400_000;
    for (let i = 0; i < 25; i++) await schedule(carol, { status: `day ${i}`, scheduled_at: at(dayStart + i * MINUTE) });
    const over = await carol.client.post("/api/v1/statuses", { json: { status: "26th", scheduled_at: at(dayStart + 3 * 60 * MINUTE) } });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({ error: "Validation failed: You have exceeded the limit of 25 scheduled posts for today" });
    const nextDay = await carol.client.post("/api/v1/statuses", { json: { status: "next day", scheduled_at: at(dayStart + 86_400_000) } });
    expect(nextDay.status).toBe(200);

    const { services } = server.ctx;
    for (let day = 3; (await services.scheduled.list(carol.account.id, { limit: 400 })).length < 300; day++) {
      for (let i = 0; i < 25 && (await services.scheduled.list(carol.account.id, { limit: 400 })).length < 300; i++) {
        await services.scheduled.schedule(carol.account.id, null, { text: "filler" }, at(dayStart + day * 86_400_000 + i * MINUTE), {});
      }
    }
    const full = await carol.client.post("/api/v1/statuses", { json: { status: "301st", scheduled_at: at(dayStart + 400 * 86_400_000) } });
    expect(full.status).toBe(422);
    expect(full.body).toEqual({ error: "Validation failed: You have exceeded the limit of 300 scheduled posts" });
  });
});
