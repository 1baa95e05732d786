import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "../../src/errors.ts";
import { OPERATOR, type StaffActor } from "../../src/services/admin/audit-log.ts";
import { roleOf as asRole } from "../../src/models/roles.ts";
import { startTestServices, type TestServices } from "../support/services.ts";

// The rules behind the actions that only the admin pages and the command line reach (Mastodon
// has no admin API for them): roles, passwords, a reported status deleted. Over the services.
let t: TestServices;
const ids: Record<string, number> = {};
// The actor as stored now (AdminAccounts.actorFor, read synchronously here: roles change in these tests).
const actor = (name: string): StaffActor => ({
  kind: "staff",
  accountId: ids[name]!,
  role: asRole(t.database.sqlite.query<{ role: string }, [number]>("SELECT role FROM users WHERE account_id = ?").get(ids[name]!)?.role),
});
const lines = () => t.database.sqlite.query<{ action: string; account_id: number | null }, []>("SELECT action, account_id FROM admin_actions ORDER BY id").all();

beforeAll(async () => {
  t = await startTestServices();
  for (const [name, role] of [["olive", "owner"], ["adam", "admin"], ["ada", "admin"], ["mona", "moderator"], ["uma", "user"]] as const) {
    ids[name] = (await t.local(name)).id;
    if (role !== "user") await t.services.adminAccounts.changeRole(OPERATOR, ids[name]!, role);
  }
});
afterAll(() => t?.close());

async function refused(run: () => unknown, status = 403, error = "This action is not allowed") {
  try {
    await run();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect([(e as ApiError).status, (e as ApiError).message]).toEqual([status, error]);
    return;
  }
  throw new Error("was not refused");
}

const roleOf = (name: string) => t.database.sqlite.query<{ role: string }, [number]>("SELECT role FROM users WHERE account_id = ?").get(ids[name]!)!.role;

describe("changing roles (UserPolicy#change_role?)", () => {
  test("an admin gives roles up to its own to those below it; never above, never to its equals or the owner", async () => {
    const before = lines().length;
    await refused(() => t.services.adminAccounts.changeRole(actor("mona"), ids.uma!, "moderator"));
    await refused(() => t.services.adminAccounts.changeRole(actor("adam"), ids.uma!, "owner"));
    await refused(() => t.services.adminAccounts.changeRole(actor("adam"), ids.ada!, "user"));
    await refused(() => t.services.adminAccounts.changeRole(actor("adam"), ids.olive!, "user"));
    await refused(() => t.services.adminAccounts.changeRole(actor("adam"), ids.uma!, "captain"), 422, "Validation failed: Role is not included in the list");
    expect([roleOf("uma"), roleOf("ada"), roleOf("olive")]).toEqual(["user", "admin", "owner"]);
    expect(lines().length).toBe(before);
    await t.services.adminAccounts.changeRole(actor("adam"), ids.uma!, "admin");
    expect(roleOf("uma")).toBe("admin");
    await t.services.adminAccounts.changeRole(actor("olive"), ids.uma!, "user");
    expect(lines().slice(before)).toEqual([
      { action: "change_role", account_id: ids.adam! },
      { action: "change_role", account_id: ids.olive! },
    ]);
  });
});

describe("resetting a password", () => {
  test("by a role that manages user access and ranks above; the account is signed out", async () => {
    const before = lines().length;
    await expect(t.services.adminAccounts.resetPassword(actor("mona"), ids.uma!)).rejects.toMatchObject({ status: 403 });
    await expect(t.services.adminAccounts.resetPassword(actor("adam"), ids.ada!)).rejects.toMatchObject({ status: 403 });
    await expect(t.services.adminAccounts.resetPassword(actor("adam"), ids.uma!, "short")).rejects.toMatchObject({ status: 422, message: "Validation failed: Password is too short (minimum is 8 characters)" });
    expect(lines().length).toBe(before);
    const app = await t.services.applications.register({ name: "x", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read" });
    const { accessToken } = await t.services.tokens.issue(app.app.id, ids.uma!, ["read"]);
    const { password } = await t.services.adminAccounts.resetPassword(actor("adam"), ids.uma!);
    expect(password.length).toBeGreaterThanOrEqual(16);
    expect(await t.services.accounts.verifyLogin("uma", password)).toBe(ids.uma!);
    expect(await t.services.tokens.authenticate(accessToken)).toBeNull();
    expect(lines().slice(before)).toEqual([{ action: "reset_password", account_id: ids.adam! }]);
  });
});

describe("deleting a reported status", () => {
  test("only one the report names, by a role that manages reports; it goes as its author's deletion would", async () => {
    const author = (await t.services.accounts.get(ids.uma!))!;
    const reported = await t.post(author, { text: "reported" });
    const other = await t.post(author, { text: "not reported" });
    const report = await t.services.reports.create(ids.ada!, { accountId: author.id, statusIds: [reported.id], ruleIds: [] });
    const before = lines().length;
    await refused(() => t.services.adminReports.removeStatus(actor("uma"), report.report.id, reported.id));
    await refused(() => t.services.adminReports.removeStatus(actor("mona"), report.report.id, other.id), 404, "Record not found");
    expect(await t.services.reader.findRow(reported.id)).toBeDefined();
    expect(lines().length).toBe(before);
    await t.services.adminReports.removeStatus(actor("mona"), report.report.id, reported.id);
    expect(await t.services.reader.findRow(reported.id)).toBeUndefined();
    expect(await t.services.reader.findRow(other.id)).toBeDefined();
    expect(lines().slice(before)).toEqual([{ action: "destroy", account_id: ids.mona! }]);
  });
});
