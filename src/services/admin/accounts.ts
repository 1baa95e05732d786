import { and, eq, inArray, isNotNull, isNull, sql, type SQL } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { AccountRow, UserRow } from "../../db/schema.ts";
import { ApiError, badRequest, forbidden, notFound, validationFailed } from "../../errors.ts";
import { hashPassword, randomSecret } from "../../auth/secrets.ts";
import type { EventBus } from "../../infra/events.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";
import type { AdminAccountView } from "../../models/admin.ts";
import type { AccountService } from "../accounts/accounts.ts";
import type { TwoFactor } from "../accounts/two-factor.ts";
import type { AccountPurge } from "./account-purge.ts";
import type { AdminReports } from "./reports.ts";
import { OPERATOR, type AuditLog, type StaffActor } from "./audit-log.ts";
import { can, isStaff, overrides, roleOf, ROLES, type Permission, type Role } from "../../models/roles.ts";

/** Admin::AccountAction::TYPES that this server's model holds (no disabled logins, no forced sensitive media). */
export const ACCOUNT_ACTION_TYPES = ["none", "silence", "suspend"] as const;

/** AccountFilter's keys, as the v1 and v2 admin API translate their parameters into them. */
export interface AccountFilter {
  origin?: string;
  status?: string;
  username?: string;
  displayName?: string;
  email?: string;
  byDomain?: string;
  /** Only these roles (v2 role_ids, v1 `staff`). */
  roles?: Role[];
}

const ORIGINS = ["local", "remote"];
const STATUSES = ["active", "pending", "disabled", "silenced", "suspended", "sensitized"];

/** A condition no row meets (`0` alone is no boolean to PostgreSQL). */
const NOTHING = sql`1 = 0`;

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Staff actions on accounts (Mastodon's Admin::AccountsController, Admin::AccountAction and
 * their policies), for the admin API, the admin pages and the command line alike. Every
 * action checks the actor's role against the target's (roles.ts), is written to the audit log
 * in its own transaction, and tells the outside through events: a local account suspended or
 * unsuspended sends its followers' servers an Update of its actor (which says `suspended`),
 * a deleted one a Delete of it.
 */
export class AdminAccounts {
  constructor(
    private db: DatabasePort,
    private clock: Clock,
    private accounts: AccountService,
    private purge: AccountPurge,
    private log: AuditLog,
    private reports: AdminReports,
    private events: EventBus,
    private twoFactor: TwoFactor,
  ) {}

  /** Prepared list queries by shape (listQuery). */
  private lists = new Map<string, ReturnType<AdminAccounts["listQuery"]>>();

  /** The staff actor a signed-in account is (its role as stored now). */
  async actorFor(accountId: number): Promise<StaffActor> {
    return { kind: "staff", accountId, role: roleOf((await this.accounts.getUser(accountId))?.role) };
  }

  async list(actor: StaffActor, filter: AccountFilter, page: Page): Promise<AdminAccountView[]> {
    authorize(actor, "manage_users");
    if (filter.origin !== undefined && !ORIGINS.includes(filter.origin)) throw badRequest(`Unknown origin: ${filter.origin}`);
    if (filter.status !== undefined && !STATUSES.includes(filter.status)) throw badRequest(`Unknown status: ${filter.status}`);
    const values = {
      username: filter.username ? `${escapeLike(filter.username.toLowerCase())}%` : undefined,
      displayName: filter.displayName ? `%${escapeLike(filter.displayName.toLowerCase())}%` : undefined,
      email: filter.email ? `%${escapeLike(filter.email.toLowerCase())}%` : undefined,
      byDomain: filter.byDomain ? filter.byDomain.trim().toLowerCase() : undefined,
      maxId: page.maxId,
      sinceId: page.sinceId,
      minId: page.minId,
      limit: page.limit,
    };
    // The query's shape: which conditions it has (values are placeholders), and the roles asked for.
    const shape = [filter.origin, filter.status, filter.roles?.join(","), ...Object.entries(values).map(([k, v]) => (v === undefined ? "" : k))].join("|");
    let query = this.lists.get(shape);
    if (!query) {
      // Few shapes are ever asked for; a flood of odd ones only costs building them again.
      if (this.lists.size >= 64) this.lists.clear();
      this.lists.set(shape, (query = this.listQuery(filter, values)));
    }
    const rows = await query.execute(values);
    const ordered = finishPage(rows, page.minId !== undefined);
    const views = await this.accounts.showMany(ordered.map((r) => r.account));
    return views.map((account, i) => ({ account, user: ordered[i]!.user }));
  }

  /** The list's query for one shape of filter and page, prepared: building it costs more than running it. */
  private listQuery(filter: AccountFilter, values: Record<string, string | number | undefined>) {
    const { accounts, users } = this.db.tables;
    const p = (name: string) => sql.placeholder(name) as unknown as string;
    const conditions: (SQL | undefined)[] = [];
    if (filter.origin !== undefined) conditions.push(filter.origin === "local" ? isNull(accounts.domain) : isNotNull(accounts.domain));
    if (filter.status !== undefined) {
      conditions.push(
        {
          active: isNull(accounts.suspendedAt),
          pending: eq(users.approved, false),
          silenced: isNotNull(accounts.silencedAt),
          suspended: isNotNull(accounts.suspendedAt),
          // Neither is held here: nobody is disabled or sensitized.
          disabled: NOTHING,
          sensitized: NOTHING,
        }[filter.status],
      );
    }
    if (values.username !== undefined) conditions.push(sql`lower(${accounts.username}) LIKE ${p("username")} ESCAPE '\\'`);
    if (values.displayName !== undefined) conditions.push(sql`lower(${accounts.displayName}) LIKE ${p("displayName")} ESCAPE '\\'`);
    if (values.email !== undefined) conditions.push(sql`lower(${users.email}) LIKE ${p("email")} ESCAPE '\\'`);
    if (values.byDomain !== undefined) conditions.push(sql`lower(${accounts.domain}) = ${p("byDomain")}`);
    if (filter.roles) conditions.push(filter.roles.length ? inArray(users.role, filter.roles) : NOTHING);
    const id = (name: string) => (values[name] === undefined ? undefined : (sql.placeholder(name) as unknown as number));
    const q = pageQuery(accounts.id, { limit: 0, maxId: id("maxId"), sinceId: id("sinceId"), minId: id("minId") });
    return this.db.orm
      .select({ account: accounts, user: users })
      .from(accounts)
      .leftJoin(users, eq(users.accountId, accounts.id))
      .where(and(q.where, ...conditions))
      .orderBy(q.orderBy)
      .limit(sql.placeholder("limit") as unknown as number)
      .prepare();
  }

  async get(actor: StaffActor, id: number | null): Promise<AdminAccountView> {
    // As Mastodon's controllers: the record is found (404) before the policy is asked (403).
    const account = await this.target(id);
    authorize(actor, "manage_users");
    return this.view(account);
  }

  /** The admin view of an account, for callers that checked already (reports, presenters). */
  async viewOf(id: number): Promise<AdminAccountView | null> {
    const account = await this.accounts.get(id);
    return account ? this.view(account) : null;
  }

  async approve(actor: StaffActor, id: number | null): Promise<AdminAccountView> {
    const { account, user } = await this.localUser(id);
    if (!allowed(actor, "manage_users") || user.approved) throw forbidden();
    const { users } = this.db.tables;
    await this.db.transaction(async () => {
      await this.db.orm.update(users).set({ approved: true }).where(eq(users.accountId, account.id));
      await this.log.record(actor, { action: "approve", targetType: "User", targetId: account.id, summary: account.username });
    });
    return this.view(await this.target(account.id));
  }

  /** A sign-up refused: the account goes entirely, its name free again (DeleteAccountService without reserving it). */
  async reject(actor: StaffActor, id: number | null): Promise<void> {
    const { account, user } = await this.localUser(id);
    if (!allowed(actor, "manage_users") || user.approved) throw forbidden();
    const { accounts } = this.db.tables;
    await this.db.transaction(async () => {
      await this.log.record(actor, { action: "reject", targetType: "User", targetId: account.id, summary: account.username });
      await this.db.orm.delete(accounts).where(eq(accounts.id, account.id));
    });
  }

  suspend(actor: StaffActor, id: number | null, reportId?: number | null): Promise<AdminAccountView> {
    return this.act(actor, id, { type: "suspend", reportId });
  }

  silence(actor: StaffActor, id: number | null, reportId?: number | null): Promise<AdminAccountView> {
    return this.act(actor, id, { type: "silence", reportId });
  }

  /**
   * POST /api/v1/admin/accounts/:id/action (Admin::AccountAction): limit or suspend the
   * account, or nothing; every open report about it is resolved with it (with `none`, only
   * the report named).
   */
  async act(actor: StaffActor, id: number | null, input: { type?: string; reportId?: number | null; text?: string }): Promise<AdminAccountView> {
    const account = await this.target(id);
    authorize(actor, "manage_users");
    const type = input.type ?? "";
    if (type === "") throw validationFailed("Type can't be blank");
    if (!(ACCOUNT_ACTION_TYPES as readonly string[]).includes(type)) throw validationFailed("Type is not included in the list");
    const report = input.reportId === undefined || input.reportId === null ? null : await this.reports.find(input.reportId);
    if (input.reportId !== undefined && input.reportId !== null && !report) throw notFound();
    const now = this.clock.now();
    const { accounts } = this.db.tables;
    await this.db.transaction(async () => {
      if (type === "suspend") await this.applySuspension(actor, account, now);
      if (type === "silence") {
        if (!allowed(actor, "manage_users", "manage_reports") || !(await this.outranks(actor, account))) throw forbidden();
        await this.log.record(actor, { action: "silence", targetType: "Account", targetId: account.id, summary: acctOf(account) });
        if (account.silencedAt === null) await this.db.orm.update(accounts).set({ silencedAt: now }).where(eq(accounts.id, account.id));
      }
      const open = type === "none" ? (report && report.actionTakenAt === null ? [report.id] : []) : await this.reports.openAbout(account.id);
      for (const reportId of open) await this.reports.resolveWithin(actor, reportId, now);
    });
    return this.view(await this.target(account.id));
  }

  async unsuspend(actor: StaffActor, id: number | null): Promise<AdminAccountView> {
    const account = await this.target(id);
    // AccountPolicy#unsuspend?: only what this server suspended, and a deleted account stays deleted.
    if (!allowed(actor, "manage_users") || account.suspendedAt === null || (await this.isDeleted(account))) throw forbidden();
    const { accounts } = this.db.tables;
    await this.db.transaction(async () => {
      await this.db.orm.update(accounts).set({ suspendedAt: null }).where(eq(accounts.id, account.id));
      await this.log.record(actor, { action: "unsuspend", targetType: "Account", targetId: account.id, summary: acctOf(account) });
      if (account.domain === null) await this.events.emit({ type: "account.updated", accountId: account.id });
    });
    return this.view(await this.target(account.id));
  }

  async unsilence(actor: StaffActor, id: number | null): Promise<AdminAccountView> {
    const account = await this.target(id);
    if (!allowed(actor, "manage_users")) throw forbidden();
    const { accounts } = this.db.tables;
    if (account.silencedAt !== null) {
      await this.db.transaction(async () => {
        await this.db.orm.update(accounts).set({ silencedAt: null }).where(eq(accounts.id, account.id));
        await this.log.record(actor, { action: "unsilence", targetType: "Account", targetId: account.id, summary: acctOf(account) });
      });
    }
    return this.view(await this.target(account.id));
  }

  /** What the model does not hold is never set: these answer the account as it is (Mastodon's enable, unsensitive). */
  async unchanged(actor: StaffActor, id: number | null, localOnly: boolean): Promise<AdminAccountView> {
    const account = await this.target(id);
    if (!allowed(actor, "manage_users") || (localOnly && !(await this.accounts.getUser(account.id)))) throw forbidden();
    return this.view(account);
  }

  /**
   * Deletes a suspended account's data (AccountPolicy#destroy?: suspended first, by a role that
   * may delete user data). The account stays as a tombstone: its name taken, its actor 410.
   */
  async remove(actor: StaffActor, id: number | null): Promise<void> {
    const account = await this.target(id);
    if (!allowed(actor, "delete_user_data") || account.suspendedAt === null) throw forbidden();
    let files: string[] = [];
    await this.db.transaction(async () => {
      await this.log.record(actor, { action: "destroy", targetType: "Account", targetId: account.id, summary: acctOf(account) });
      const purged = await this.purge.purge(account.id, this.clock.now());
      files = purged.files;
      if (account.domain === null) await this.events.emit({ type: "account.deleted", accountId: account.id, recipientIds: purged.remoteFollowers });
    });
    this.purge.removeFiles(files);
  }

  /**
   * A new password for a local account (Admin::ResetsController, without the e-mail this server
   * cannot send): returned once for staff to hand over; the account is signed out everywhere.
   */
  async resetPassword(actor: StaffActor, id: number | null, password?: string): Promise<{ account: AdminAccountView; password: string }> {
    const { account, user } = await this.localUser(id);
    if (!allowed(actor, "manage_user_access") || !outranksRole(actor, roleOf(user.role))) throw forbidden();
    const chosen = password ?? randomSecret().slice(0, 24);
    if (chosen.length < 8) throw validationFailed("Password is too short (minimum is 8 characters)");
    if (chosen.length > 72) throw validationFailed("Password is too long (maximum is 72 characters)");
    const hash = await hashPassword(chosen);
    const { users } = this.db.tables;
    await this.db.transaction(async () => {
      await this.db.orm.update(users).set({ passwordHash: hash }).where(eq(users.accountId, account.id));
      await this.purge.signOut(account.id);
      await this.log.record(actor, { action: "reset_password", targetType: "User", targetId: account.id, summary: account.username });
    });
    return { account: await this.view(await this.target(account.id)), password: chosen };
  }

  /**
   * Turns a member's two-factor sign-in off, for one who lost both the app and the recovery codes
   * (Admin::TwoFactorAuthenticationsController, UserPolicy#disable_2fa?: manage_user_access and a
   * role above theirs), logged as Mastodon logs it. Off already: refused, nothing logged.
   */
  async disableTwoFactor(actor: StaffActor, id: number | null): Promise<AdminAccountView> {
    const { account, user } = await this.localUser(id);
    if (!allowed(actor, "manage_user_access") || !outranksRole(actor, roleOf(user.role))) throw forbidden();
    await this.db.transaction(async () => {
      if (!(await this.twoFactor.reset(account.id))) throw new ApiError(422, "Two-factor authentication is not enabled.");
      await this.log.record(actor, { action: "disable_2fa", targetType: "User", targetId: account.id, summary: account.username });
    });
    return this.view(await this.target(account.id));
  }

  /**
   * Gives a local user a role (UserPolicy#change_role?): by a role that manages roles and ranks
   * above the user, and never a role above the actor's own.
   */
  async changeRole(actor: StaffActor, id: number | null, role: string): Promise<AdminAccountView> {
    const { account, user } = await this.localUser(id);
    if (!(ROLES as readonly string[]).includes(role)) throw validationFailed("Role is not included in the list");
    const next = role as Role;
    const current = roleOf(user.role);
    if (!allowed(actor, "manage_roles") || !outranksRole(actor, current) || (actor.kind === "staff" && overrides(next, actor.role))) throw forbidden();
    if (next !== current) {
      const { users } = this.db.tables;
      await this.db.transaction(async () => {
        await this.db.orm.update(users).set({ role: next }).where(eq(users.accountId, account.id));
        await this.log.record(actor, { action: "change_role", targetType: "User", targetId: account.id, summary: `${account.username}: ${current} -> ${next}` });
      });
    }
    return this.view(await this.target(account.id));
  }

  /** Accounts with a staff role, for telling staff of something (sign-ups waiting, reports). */
  async staffIds(...roles: Role[]): Promise<number[]> {
    const wanted = roles.length ? roles : ROLES.filter(isStaff);
    const { users } = this.db.tables;
    return (await this.db.orm.select({ id: users.accountId }).from(users).where(inArray(users.role, wanted))).map((r) => r.id);
  }

  private async applySuspension(actor: StaffActor, account: AccountRow, now: number): Promise<void> {
    if (!allowed(actor, "manage_users", "manage_reports") || !(await this.outranks(actor, account))) throw forbidden();
    await this.log.record(actor, { action: "suspend", targetType: "Account", targetId: account.id, summary: acctOf(account) });
    if (account.suspendedAt !== null) return;
    const { accounts } = this.db.tables;
    await this.db.orm.update(accounts).set({ suspendedAt: now }).where(eq(accounts.id, account.id));
    if (account.domain === null) {
      await this.purge.signOut(account.id);
      // Its followers' servers are sent its actor again, which says it is suspended.
      await this.events.emit({ type: "account.updated", accountId: account.id });
    } else {
      await this.purge.rejectFollowsOf(account.id);
    }
  }

  private async outranks(actor: StaffActor, account: AccountRow): Promise<boolean> {
    // A remote account has no role: any staff role ranks above it (UserRole#overrides?(nil)).
    return outranksRole(actor, account.domain === null ? roleOf((await this.accounts.getUser(account.id))?.role) : "user");
  }

  private async isDeleted(account: AccountRow): Promise<boolean> {
    return account.domain === null && !(await this.accounts.getUser(account.id));
  }

  private async target(id: number | null): Promise<AccountRow> {
    const account = id === null ? undefined : await this.accounts.get(id);
    if (!account) throw notFound();
    return account;
  }

  /** require_local_account!: a local account with its user, else 403. */
  private async localUser(id: number | null): Promise<{ account: AccountRow; user: UserRow }> {
    const account = await this.target(id);
    const user = account.domain === null ? await this.accounts.getUser(account.id) : undefined;
    if (!user) throw forbidden();
    return { account, user };
  }

  private async view(account: AccountRow): Promise<AdminAccountView> {
    const [shown, user] = await Promise.all([this.accounts.show(account), account.domain === null ? this.accounts.getUser(account.id) : undefined]);
    return { account: shown, user: user ?? null };
  }
}

export { OPERATOR };

function allowed(actor: StaffActor, ...anyOf: Permission[]): boolean {
  return actor.kind === "operator" || can(actor.role, ...anyOf);
}

function authorize(actor: StaffActor, ...anyOf: Permission[]): void {
  if (!allowed(actor, ...anyOf)) throw forbidden();
}

function outranksRole(actor: StaffActor, role: Role): boolean {
  return actor.kind === "operator" || overrides(actor.role, role);
}

export function acctOf(account: AccountRow): string {
  return account.domain === null ? account.username : `${account.username}@${account.domain}`;
}
