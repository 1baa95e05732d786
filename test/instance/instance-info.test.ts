import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const DAY = 24 * 60 * 60 * 1000;
// Wednesday 2026-11-18 12:00 UTC: its ISO week began on Monday the 16th.
const START = Date.UTC(2026, 10, 18, 12);

let server: TestServer;
let http: Client;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer({}, { clock: new ManualClock(START - 14 * DAY) });
  http = new Client(server.base);
});
afterAll(() => server.close());

describe("rules", () => {
  test("rules are listed in order with their hints, in /instance/rules and both instance documents", async () => {
    expect((await http.get("/api/v1/instance/rules")).body).toEqual([]);
    const info = server.ctx.services.instanceInfo;
    const first = await info.addRule("  Be kind ", "No harassment.");
    const second = await info.addRule("No spam");
    const expected = [
      { id: String(first.id), text: "Be kind", hint: "No harassment." },
      { id: String(second.id), text: "No spam", hint: "" },
    ];
    const res = await http.get("/api/v1/instance/rules");
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
    expect((await http.get("/api/v1/instance")).body.rules).toEqual(expected);
    expect((await http.get("/api/v2/instance")).body.rules).toEqual(expected);
    await info.removeRule(first.id);
    expect((await http.get("/api/v1/instance/rules")).body).toEqual([expected[1]]);
    await info.removeRule(second.id);
  });

  test("a blank or overlong rule is refused and nothing stored", async () => {
    const info = server.ctx.services.instanceInfo;
    await expect(info.addRule("  ")).rejects.toThrow("Validation failed: Text can't be blank");
    await expect(info.addRule("x".repeat(301))).rejects.toThrow("Validation failed: Text is too long (maximum is 300 characters)");
    await expect(info.removeRule(12345)).rejects.toThrow("Record not found");
    expect(await info.rules()).toEqual([]);
  });
});

describe("extended description", () => {
  test("empty with a null updated_at until set; then HTML paragraphs with links and the time it was set", async () => {
    expect((await http.get("/api/v1/instance/extended_description")).body).toEqual({ updated_at: null, content: "" });
    await server.ctx.services.instanceInfo.setExtendedDescription("Welcome <friends>.\n\nSee https://example.com/about #rookery");
    const res = await http.get("/api/v1/instance/extended_description");
    expect(res.status).toBe(200);
    expect(res.body.updated_at).toBe(new Date(server.clock.now()).toISOString());
    expect(res.body.content).toStartWith("<p>Welcome &lt;friends&gt;.</p><p>See <a href=\"https://example.com/about\"");
    expect(res.body.content).toContain(`href="${server.ctx.config.publicUrl}/tags/rookery"`);
  });
});

describe("activity", () => {
  test("twelve ISO weeks, this one first, counting local posts, sign-ins and registrations, as strings", async () => {
    alice = await createUser(server, "alice");
    await postStatus(alice, { status: "two weeks ago" });
    const boosted = await postStatus(alice, { status: "boost me" });
    server.clock.set(START);
    const bob = await createUser(server, "bob");
    await postStatus(bob, { status: "this week" });
    await bob.client.post(`/api/v1/statuses/${boosted.id}/reblog`);

    const res = await http.get("/api/v1/instance/activity");
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(12);
    const monday = Date.UTC(2026, 10, 16) / 1000;
    expect(res.body[0]).toEqual({ week: String(monday), statuses: "1", logins: "1", registrations: "1" });
    expect(res.body[1]).toEqual({ week: String(monday - 7 * 86400), statuses: "0", logins: "0", registrations: "0" });
    expect(res.body[2]).toEqual({ week: String(monday - 14 * 86400), statuses: "2", logins: "1", registrations: "1" });
    expect(res.body[11].week).toBe(String(monday - 11 * 7 * 86400));
  });
});
