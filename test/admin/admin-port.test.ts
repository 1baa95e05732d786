import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { users, type AccountRow } from "../../src/db/schema.ts";
import { ApiError } from "../../src/errors.ts";
import { EventBus } from "../../src/infra/events.ts";
import sharp from "../../src/media-files/sharp.ts";
import { MediaStorage } from "../../src/media-files/storage.ts";
import { AccountPurge } from "../../src/services/admin/account-purge.ts";
import { AdminAccounts } from "../../src/services/admin/accounts.ts";
import { AuditLog, OPERATOR, type StaffActor } from "../../src/services/admin/audit-log.ts";
import { AdminDomains, ExistingDomainBlock } from "../../src/services/admin/domains.ts";
import { AdminInstance } from "../../src/services/admin/instance.ts";
import { AdminReports } from "../../src/services/admin/reports.ts";
import { InviteService } from "../../src/services/accounts/invites.ts";
import { AnnouncementService } from "../../src/services/announcements.ts";
import { CustomEmojiService } from "../../src/services/custom-emojis.ts";
import { ProfileImageService } from "../../src/services/accounts/profile-images.ts";
import { InstanceInfo } from "../../src/services/instance-info.ts";
import { ReportService } from "../../src/services/reports.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * The admin services on the database port (issue 31): the same services on SQLite and on
 * PostgreSQL. Their own rows (audit lines, reports, domain rules, users' roles and approval,
 * accounts' suspension) are written and read through the port; the accounts, statuses and
 * sessions they name are read by services not yet converted, from SQLite on both arms. The
 * API's and pages' behaviour is tested over HTTP in the other files of this folder.
 */

afterEach(closePortArms);

async function setUp({ t, port, mirror }: PortArm) {
  const s = t.services;
  const events = new EventBus(port);
  const log = new AuditLog(port, t.ids, t.clock);
  const info = new InstanceInfo(port, t.ids, t.clock, "http://rookery.test", "open");
  const reports = new AdminReports(port, t.clock, s.accounts, s.reader, s.removal, info, log);
  const images = new ProfileImageService(new MediaStorage(mkdtempSync(join(tmpdir(), "rookery-admin-port-")), "http://rookery.test"));
  const purge = new AccountPurge(port, events, s.follows, s.removal, s.tokens, s.webSessions, images);
  const accounts = new AdminAccounts(port, t.clock, s.accounts, purge, log, reports, events, s.twoFactor);
  const domains = new AdminDomains(port, s.federationDomains, log);
  const storage = new MediaStorage(mkdtempSync(join(tmpdir(), "rookery-admin-port-")), "http://rookery.test");
  const emojis = new CustomEmojiService(port, t.ids, t.clock, storage);
  const announcements = new AnnouncementService(port, t.ids, t.clock, "http://rookery.test", s.accounts, s.reader, emojis, events);
  const invites = new InviteService(port, t.ids, t.clock, "http://rookery.test");
  const instance = new AdminInstance(port, log, s.relays, emojis, info, announcements, invites);
  const userReports = new ReportService(port, t.ids, t.clock, "http://rookery.test", s.accounts, s.reader, info, events);
  /** A local account with its user, in both databases (the user's role and approval are the port's to change). */
  const local = async (name: string, fields: { role?: string; approved?: boolean } = {}) => {
    const account = await t.local(name);
    if (Object.keys(fields).length) await t.database.port.orm.update(users).set(fields).where(eq(users.accountId, account.id));
    await mirror(account);
    if (port !== t.database.port) await port.orm.insert(port.tables.users).values((await t.database.port.orm.select().from(users).where(eq(users.accountId, account.id)).limit(1))[0]!);
    return account;
  };
  const lines = async () => (await port.all<{ action: string; target_type: string; target_id: string | null }>("SELECT action, target_type, target_id FROM admin_actions ORDER BY id")).map((r) => [r.action, r.target_type, r.target_id]);
  return { t, port, mirror, info, emojis, announcements, invites, instance, log, reports, accounts, domains, userReports, local, lines };
}

async function refused(run: () => Promise<unknown>, status: number, error: string) {
  const e = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(ApiError);
  expect([(e as ApiError).status, (e as ApiError).message]).toEqual([status, error]);
}

const staff = (account: AccountRow, role: "moderator" | "admin" | "owner"): StaffActor => ({ kind: "staff", accountId: account.id, role });

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the admin services on ${arm.name}`, () => {
    test("the audit log: lines written with their actor, listed newest first, filtered and paged", async () => {
      const { log, local } = await setUp(await arm.open());
      const adam = await local("adam", { role: "admin" });
      const first = await log.record(staff(adam, "admin"), { action: "create", targetType: "DomainBlock", targetId: 7, summary: "spam.example" });
      const second = await log.record(OPERATOR, { action: "destroy", targetType: "Rule", targetId: null, summary: "No spam" });
      const third = await log.record(staff(adam, "admin"), { action: "destroy", targetType: "DomainBlock", targetId: 7, summary: "spam.example" });
      expect(first).toMatchObject({ accountId: adam.id, targetId: "7" });
      expect(await log.list({ limit: 10 })).toEqual([third, second, first]);
      expect(await log.list({ limit: 10 }, { accountId: adam.id, action: "destroy" })).toEqual([third]);
      expect(await log.list({ limit: 10 }, { targetType: "DomainBlock", targetId: "7" })).toEqual([third, first]);
      expect(await log.list({ limit: 1, maxId: third.id })).toEqual([second]);
      expect(await log.list({ limit: 10, minId: first.id })).toEqual([third, second]);
    });

    test("domain rules: listed and read; a domain under a block is refused naming it; an allow answered as it is; bad input refused, nothing logged", async () => {
      const { t, port, domains, lines, local } = await setUp(await arm.open());
      const adam = staff(await local("adam", { role: "admin" }), "admin");
      const mona = staff(await local("mona", { role: "moderator" }), "moderator");
      const { domainBlocks, domainAllows } = port.tables;
      const now = t.clock.now();
      await port.orm.insert(domainBlocks).values([
        { id: 10, domain: "spam.example", createdAt: now },
        { id: 11, domain: "worse.example", createdAt: now },
      ]);
      await port.orm.insert(domainAllows).values({ id: 20, domain: "friends.example", createdAt: now });

      expect((await domains.blocks(adam, { limit: 10 })).map((r) => r.domain)).toEqual(["worse.example", "spam.example"]);
      expect((await domains.blocks(adam, { limit: 1, maxId: 11 })).map((r) => r.id)).toEqual([10]);
      expect(await domains.block(adam, 10)).toEqual({ id: 10, domain: "spam.example", createdAt: now });
      const existing = await domains.createBlock(adam, { domain: "a.spam.example" }).catch((e: unknown) => e);
      expect(existing).toBeInstanceOf(ExistingDomainBlock);
      expect((existing as ExistingDomainBlock).block.id).toBe(10);
      expect(await domains.allows(adam, { limit: 10 })).toEqual([{ id: 20, domain: "friends.example", createdAt: now }]);
      expect(await domains.createAllow(adam, { domain: "friends.example" })).toEqual({ id: 20, domain: "friends.example", createdAt: now });
      expect(await domains.updateBlock(adam, 10, { severity: "suspend" })).toMatchObject({ id: 10 });

      await refused(() => domains.block(adam, 404), 404, "Record not found");
      await refused(() => domains.allow(adam, null), 404, "Record not found");
      await refused(() => domains.blocks(mona, { limit: 10 }), 403, "This action is not allowed");
      await refused(() => domains.updateBlock(adam, 10, { severity: "strict" }), 422, "Validation failed: Severity is not included in the list");
      await refused(() => domains.createBlock(adam, { domain: "new.example", severity: "noop" }), 422, "Validation failed: Severity noop is not supported here: a domain block suspends the domain");
      expect(await lines()).toEqual([["update", "DomainBlock", "10"]]);
      expect((await domains.blocks(adam, { limit: 10 })).length).toBe(2);
    });

    test("reports: listed and read, assigned, corrected, resolved and reopened, each logged; bad input refused and nothing changed", async () => {
      const { t, port, info, reports, userReports, lines, local, mirror } = await setUp(await arm.open());
      const mona = await local("mona", { role: "moderator" });
      const moderator = staff(mona, "moderator");
      const alice = await local("alice");
      const bob = await mirror(await t.local("bob"));
      const rule = await info.addRule("No spam");
      const report = (await userReports.create(alice.id, { accountId: bob.id, statusIds: [], ruleIds: [], comment: "spam", category: "spam" })).report;

      const [listed] = await reports.list(moderator, {}, { limit: 10 });
      expect(listed).toMatchObject({ report: { id: report.id, category: "spam" }, statusIds: [], ruleIds: null, assigned: null });
      expect(listed!.target.account.id).toBe(bob.id);
      expect(await reports.list(moderator, { resolved: true }, { limit: 10 })).toEqual([]);
      expect((await reports.list(moderator, { targetAccountId: bob.id }, { limit: 10 })).length).toBe(1);
      expect((await reports.get(moderator, report.id)).report.comment).toBe("spam");

      expect((await reports.assignToSelf(moderator, report.id)).assigned?.account.id).toBe(mona.id);
      const updated = await reports.update(moderator, report.id, { category: "violation", ruleIds: [rule.id] });
      expect([updated.report.category, updated.ruleIds]).toEqual(["violation", [rule.id]]);
      t.clock.advance(1000);
      const resolved = await reports.resolve(moderator, report.id);
      expect(resolved.report).toMatchObject({ actionTakenAt: t.clock.now(), actionTakenByAccountId: mona.id });
      expect((await reports.list(moderator, { resolved: true }, { limit: 10 })).map((v) => v.report.id)).toEqual([report.id]);
      expect((await reports.reopen(moderator, report.id)).report).toMatchObject({ actionTakenAt: null, actionTakenByAccountId: null });
      expect((await reports.unassign(moderator, report.id)).assigned).toBeNull();
      const logged = ["assigned_to_self", "update", "resolve", "reopen", "unassigned"].map((action) => [action, "Report", String(report.id)]);
      expect(await lines()).toEqual(logged);

      const before = await port.all("SELECT * FROM reports");
      await refused(() => reports.update(moderator, report.id, { category: "rude" }), 422, "Validation failed: Category is not included in the list");
      await refused(() => reports.update(moderator, report.id, { category: "violation", ruleIds: [404] }), 422, "Validation failed: Rule ids does not reference valid rules");
      await refused(() => reports.resolve(moderator, 404), 404, "Record not found");
      await refused(() => reports.resolve({ kind: "staff", accountId: alice.id, role: "user" }, report.id), 403, "This action is not allowed");
      expect(await port.all("SELECT * FROM reports")).toEqual(before);
      expect(await lines()).toEqual(logged);
    });

    test("accounts: listed with filters, approved, given a role, suspended with its open reports resolved, deleted; bad input refused and nothing changed", async () => {
      const { t, port, accounts, userReports, lines, local, mirror } = await setUp(await arm.open());
      const olive = await local("olive", { role: "owner" });
      const owner = staff(olive, "owner");
      const mona = await local("mona", { role: "moderator" });
      const pending = await local("pete", { approved: false });
      const alice = await local("alice");
      const carol = await mirror(await t.remote("carol", "elsewhere.example"));
      const report = (await userReports.create(alice.id, { accountId: carol.id, statusIds: [], ruleIds: [] })).report;
      const user = async (id: number) => (await port.orm.select().from(port.tables.users).where(eq(port.tables.users.accountId, id)))[0];
      const ids = (views: { account: { id: number } }[]) => views.map((v) => v.account.id);

      expect(ids(await accounts.list(owner, { origin: "local" }, { limit: 10 }))).toEqual([alice.id, pending.id, mona.id, olive.id]);
      expect(ids(await accounts.list(owner, { origin: "remote" }, { limit: 10 }))).toEqual([carol.id]);
      expect(ids(await accounts.list(owner, { status: "pending" }, { limit: 10 }))).toEqual([pending.id]);
      expect(ids(await accounts.list(owner, { status: "disabled" }, { limit: 10 }))).toEqual([]);
      expect(ids(await accounts.list(owner, { username: "MO" }, { limit: 10 }))).toEqual([mona.id]);
      expect(ids(await accounts.list(owner, { username: "m_" }, { limit: 10 }))).toEqual([]);
      expect(ids(await accounts.list(owner, { roles: ["owner", "moderator"] }, { limit: 10 }))).toEqual([mona.id, olive.id]);
      expect(ids(await accounts.list(owner, { roles: [] }, { limit: 10 }))).toEqual([]);
      expect(ids(await accounts.list(owner, { byDomain: "Elsewhere.example" }, { limit: 10 }))).toEqual([carol.id]);

      await accounts.approve(owner, pending.id);
      expect((await user(pending.id))?.approved).toBe(true);
      await accounts.changeRole(owner, alice.id, "moderator");
      expect((await user(alice.id))?.role).toBe("moderator");
      t.clock.advance(1000);
      await accounts.act(owner, carol.id, { type: "suspend" });
      const suspended = await port.orm.select().from(port.tables.accounts).where(eq(port.tables.accounts.id, carol.id));
      expect(suspended[0]?.suspendedAt).toBe(t.clock.now());
      expect((await port.orm.select().from(port.tables.reports).where(eq(port.tables.reports.id, report.id)))[0]?.actionTakenAt).toBe(t.clock.now());
      expect(await accounts.staffIds("owner")).toEqual([olive.id]);
      const logged = [
        ["approve", "User", String(pending.id)],
        ["change_role", "User", String(alice.id)],
        ["suspend", "Account", String(carol.id)],
        ["resolve", "Report", String(report.id)],
      ];
      expect(await lines()).toEqual(logged);

      const before = { users: await port.all("SELECT * FROM users ORDER BY account_id"), accounts: await port.all("SELECT * FROM accounts ORDER BY id") };
      await refused(() => accounts.list(owner, { origin: "nowhere" }, { limit: 10 }), 400, "Unknown origin: nowhere");
      await refused(() => accounts.changeRole(owner, alice.id, "captain"), 422, "Validation failed: Role is not included in the list");
      await refused(() => accounts.changeRole(staff(mona, "moderator"), alice.id, "user"), 403, "This action is not allowed");
      await refused(() => accounts.approve(owner, alice.id), 403, "This action is not allowed");
      await refused(() => accounts.act(owner, alice.id, { type: "disable" }), 422, "Validation failed: Type is not included in the list");
      await refused(() => accounts.act(owner, alice.id, { type: "none", reportId: 404 }), 404, "Record not found");
      await refused(() => accounts.remove(owner, alice.id), 403, "This action is not allowed");
      expect({ users: await port.all("SELECT * FROM users ORDER BY account_id"), accounts: await port.all("SELECT * FROM accounts ORDER BY id") }).toEqual(before);
      expect(await lines()).toEqual(logged);
    });

    test("the server's settings: rules, announcements, emojis, the description, the registrations mode and invites, each logged; bad input refused and nothing changed", async () => {
      const { port, info, emojis, announcements, invites, instance, lines, local } = await setUp(await arm.open());
      const mona = await local("mona", { role: "moderator" });
      const adam = staff(await local("adam", { role: "admin" }), "admin");
      const moderator = staff(mona, "moderator");
      const owner = OPERATOR;

      const rule = await instance.addRule(adam, "Be kind", "No harassment.");
      const made = await instance.addAnnouncement(adam, { text: "Maintenance tonight" });
      const png = new Uint8Array(await sharp({ create: { width: 16, height: 16, channels: 4, background: "#0000ff" } }).png().toBuffer());
      await instance.addEmoji(adam, "blobcat", png);
      await instance.setDescription(adam, "About us");
      await instance.setRegistrationsMode(owner, "approval");
      const issued = await invites.create(mona.id);
      expect(await instance.revokeInvite(adam, issued.invite.id)).toBe("revoked");
      expect(await instance.revokeInvite(adam, issued.invite.id)).toBe("expired");
      expect((await info.rules()).map((r) => [r.text, r.hint])).toEqual([["Be kind", "No harassment."]]);
      expect((await announcements.all()).map((a) => a.text)).toEqual(["Maintenance tonight"]);
      expect((await info.extendedDescriptionSource()).text).toBe("About us");
      expect(await info.registrationsMode()).toEqual({ mode: "approval", saved: true });
      const logged = [
        ["create", "Rule", String(rule.id)],
        ["create", "Announcement", String(made.id)],
        ["create", "CustomEmoji", expect.any(String)],
        ["update", "Instance", null],
        ["update", "Instance", null],
        ["destroy", "Invite", String(issued.invite.id)],
      ];
      expect(await lines()).toEqual(logged);

      // Refused: a moderator may not, an unknown id is a 404; nothing changes and nothing is logged.
      const state = async () => ({
        rules: await port.all("SELECT * FROM instance_rules ORDER BY id"),
        announcements: await port.all("SELECT * FROM announcements ORDER BY id"),
        emojis: await port.all("SELECT * FROM custom_emojis ORDER BY id"),
        settings: await port.all("SELECT * FROM instance_settings ORDER BY key"),
        invites: await port.all("SELECT id, expires_at FROM invites ORDER BY id"),
      });
      const before = await state();
      await refused(() => instance.addRule(moderator, "Mine"), 403, "This action is not allowed");
      await refused(() => instance.addRule(adam, " "), 422, "Validation failed: Text can't be blank");
      await refused(() => instance.removeRule(adam, 404), 404, "Record not found");
      await refused(() => instance.addAnnouncement(moderator, { text: "Mine" }), 403, "This action is not allowed");
      await refused(() => instance.removeAnnouncement(adam, 404), 404, "Record not found");
      await refused(() => instance.removeEmoji(moderator, "blobcat"), 403, "This action is not allowed");
      await refused(() => instance.removeEmoji(adam, "nope"), 404, "Record not found");
      await refused(() => instance.setDescription(moderator, "Mine"), 403, "This action is not allowed");
      await refused(() => instance.setRegistrationsMode(moderator, "open"), 403, "This action is not allowed");
      await refused(() => instance.revokeInvite(adam, 404), 404, "Record not found");
      expect(await state()).toEqual(before);
      expect(await lines()).toEqual(logged);

      await instance.removeRule(adam, rule.id);
      await instance.removeAnnouncement(adam, made.id);
      await instance.removeEmoji(adam, "blobcat");
      await instance.setRegistrationsMode(owner, null);
      expect(await info.rules()).toEqual([]);
      expect(await announcements.all()).toEqual([]);
      expect(await emojis.find("blobcat")).toBeUndefined();
      expect(await info.registrationsMode()).toEqual({ mode: "open", saved: false });
      expect((await lines()).slice(logged.length).map(([action, type]) => `${action} ${type}`)).toEqual(["destroy Rule", "destroy Announcement", "destroy CustomEmoji", "update Instance"]);
    });
  });
}
