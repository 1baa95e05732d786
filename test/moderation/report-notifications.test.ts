/**
 * `admin.report`: staff hear of a new report from its reporter, with the report, once per
 * reported account while its reports wait (Mastodon's ReportService#notify_staff!).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { OPERATOR } from "../../src/services/admin/audit-log.ts";

let server: TestServer;
let owner: TestUser;
let moderator: TestUser;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  owner = await createUser(server, "owner");
  moderator = await createUser(server, "moddy");
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  carol = await createUser(server, "carol");
  await server.database.port.run("UPDATE users SET role = 'owner' WHERE account_id = ?", [owner.account.id]);
  await server.database.port.run("UPDATE users SET role = 'moderator' WHERE account_id = ?", [moderator.account.id]);
});
afterAll(() => server.close());

const reportsOf = async (user: TestUser) => (await user.client.get("/api/v1/notifications", { query: { "types[]": "admin.report" } })).body as any[];

describe("admin.report", () => {
  test("each staff member is told, from the reporter, with the report; other users are not", async () => {
    const res = await alice.client.post("/api/v1/reports", { json: { account_id: bob.id, comment: "spam again", category: "spam" } });
    expect(res.status).toBe(200);
    for (const staff of [owner, moderator]) {
      const list = await reportsOf(staff);
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ type: "admin.report", account: { username: "alice" }, report: { id: res.body.id, comment: "spam again", category: "spam", target_account: { username: "bob" } } });
      expect(list[0].report).toEqual(res.body);
      const grouped = await staff.client.get("/api/v2/notifications", { query: { "types[]": "admin.report" } });
      expect(grouped.body.notification_groups).toHaveLength(1);
      expect(grouped.body.notification_groups[0]).toMatchObject({ type: "admin.report", report: { id: res.body.id } });
    }
    for (const user of [alice, bob, carol]) expect(await reportsOf(user)).toEqual([]);
  });

  test("a second report of an account whose report waits tells nobody again; once resolved, the next one does", async () => {
    expect((await carol.client.post("/api/v1/reports", { json: { account_id: bob.id, comment: "me too" } })).status).toBe(200);
    expect(await reportsOf(owner)).toHaveLength(1);

    for (const r of await server.ctx.services.reports.list(false)) await server.ctx.services.adminReports.resolve(OPERATOR, r.report.id);
    const next = await carol.client.post("/api/v1/reports", { json: { account_id: bob.id, comment: "still at it" } });
    const list = await reportsOf(owner);
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ account: { username: "carol" }, report: { id: next.body.id, comment: "still at it" } });
  });

  test("a staff member reporting is not told of their own report; the others are", async () => {
    const before = (await reportsOf(owner)).length;
    const res = await moderator.client.post("/api/v1/reports", { json: { account_id: carol.id } });
    expect(res.status).toBe(200);
    expect((await reportsOf(owner)).length).toBe(before + 1);
    expect((await reportsOf(moderator)).some((n) => n.report.id === res.body.id)).toBe(false);
  });
});
