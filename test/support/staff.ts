import { createUser, type TestUser } from "./fixtures.ts";
import { eq } from "drizzle-orm";
import type { TestServer } from "./server.ts";
import { OPERATOR } from "../../src/services/admin/audit-log.ts";
import type { Role } from "../../src/models/roles.ts";

export const ADMIN_SCOPES = "read write follow push admin:read admin:write";

/** A user with a staff role (given as the operator gives it, at the command line) and a token with the admin scopes. */
export async function createStaff(server: TestServer, username: string, role: Role, scopes = ADMIN_SCOPES): Promise<TestUser> {
  const user = await createUser(server, username, { scopes });
  if (role !== "user") await server.ctx.services.adminAccounts.changeRole(OPERATOR, user.account.id, role);
  return user;
}

/** The audit log's lines, oldest first, as [action, target type, target id, who] (who: the acting account's id, or null). */
export async function auditLines(server: TestServer): Promise<[string, string, string | null, number | null][]> {
  const rows = await server.database.port.all<{ action: string; target_type: string; target_id: string | null; account_id: number | null }>("SELECT action, target_type, target_id, account_id FROM admin_actions ORDER BY id");
  return rows.map((r) => [r.action, r.target_type, r.target_id, r.account_id]);
}

/** The audit lines written since `before` lines were there. */
export async function auditSince(server: TestServer, before: number) {
  return (await auditLines(server)).slice(before);
}

/** A local account waiting for approval (as a sign-up under REGISTRATIONS=approval leaves it). */
export async function pendingUser(server: TestServer, username: string, reason = "I would like to join") {
  const user = await createUser(server, username);
  await server.database.port.run("UPDATE users SET approved = ?, sign_up_reason = ? WHERE account_id = ?", [false, reason, user.account.id]);
  return user;
}

export const NOT_ALLOWED = { error: "This action is not allowed" };

/** A remote account stored as federation stores one (nothing is fetched: the domain need not exist). */
export async function remoteAccount(server: TestServer, username: string, domain: string) {
  const uri = `https://${domain}/users/${username}`;
  const id = server.ctx.ids.next();
  const port = server.database.port;
  await port.run("INSERT INTO accounts (id, username, domain, uri, url, inbox_url, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", [id, username, domain, uri, uri, `${uri}/inbox`, server.clock.now()]);
  const accounts = port.tables.accounts;
  return (await port.orm.select().from(accounts).where(eq(accounts.id, id)).limit(1))[0]!;
}
