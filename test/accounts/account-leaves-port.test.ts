import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { base32Decode, hotp, totpStep } from "../../src/auth/totp.ts";
import type { AccountRow } from "../../src/db/schema.ts";
import { users } from "../../src/db/schema.ts";
import { EventBus } from "../../src/infra/events.ts";
import { AccountAliases } from "../../src/services/accounts/aliases.ts";
import type { ActorRefs } from "../../src/services/accounts/actor-refs.ts";
import { Directory } from "../../src/services/accounts/directory.ts";
import { Endorsements } from "../../src/services/accounts/endorsements.ts";
import { InviteService, InviteUnusable } from "../../src/services/accounts/invites.ts";
import { Passwords } from "../../src/services/accounts/passwords.ts";
import { INVALID_CODE, TwoFactor, WRONG_SETUP_CODE } from "../../src/services/accounts/two-factor.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * The accounts family's leaves on the database port (issue 31): aliases, the directory,
 * endorsements, invites, password changes and two-factor run on SQLite and on PostgreSQL. Their
 * behaviour over HTTP is tested in the feature folders (test/accounts, test/two-factor,
 * test/settings); this holds their SQL on both databases. The collaborators not yet converted
 * (follows, moderation, web sessions) run on the arm's SQLite services.
 */

afterEach(closePortArms);

const PASSWORD = "correct horse battery staple";

/** A local account with its user row (password, approval), in the port's database too. */
async function member(arm: PortArm, username: string): Promise<AccountRow> {
  const account = await arm.mirror(await arm.t.local(username));
  if (arm.port.dialect === "postgres") {
    const [user] = await arm.t.database.port.orm.select().from(users).where(eq(users.accountId, account.id)).limit(1);
    await arm.port.orm.insert(arm.port.tables.users).values(user!);
  }
  return account;
}

const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

/** A seal that keeps the secret readable: what is tested here is the SQL, not TokenSeal. */
const plainSeal = { seal: (s: string) => `sealed:${s}`, open: (s: string) => (s.startsWith("sealed:") ? s.slice(7) : null) };

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the accounts family's leaves on ${arm.name}`, () => {
    test("two-factor: begun, confirmed by a code, its state read; a code is good once; a recovery code too; a wrong proof refused; disabled", async () => {
      const a = await arm.open();
      const alice = await member(a, "alice");
      const twoFactor = new TwoFactor(a.port, a.t.ids, a.t.clock, plainSeal, "rookery.test");
      const codeNow = (secret: string) => hotp(base32Decode(secret)!, totpStep(a.t.clock.now()));

      expect(await twoFactor.state(alice.id)).toEqual({ enabled: false, enabledAt: null, recoveryCodesLeft: 0 });
      const stampBefore = await twoFactor.stamp(alice.id);
      const { secret } = await twoFactor.begin(alice.id, "alice");
      expect((await twoFactor.pending(alice.id, "alice"))?.secret).toBe(secret);
      // A wrong first code turns nothing on.
      const wrong = await twoFactor.confirm(alice.id, "000000").catch((e: Error) => e);
      expect((wrong as Error).message).toBe(WRONG_SETUP_CODE);
      expect(await twoFactor.enabled(alice.id)).toBe(false);

      const codes = await twoFactor.confirm(alice.id, codeNow(secret));
      expect(codes).toHaveLength(10);
      expect(await twoFactor.state(alice.id)).toEqual({ enabled: true, enabledAt: a.t.clock.now(), recoveryCodesLeft: 10 });
      expect(await twoFactor.stamp(alice.id)).not.toBe(stampBefore);
      expect(await twoFactor.pending(alice.id, "alice")).toBeNull();
      const again = await twoFactor.begin(alice.id, "alice").catch((e: Error) => e);
      expect((again as Error).message).toBe("Two-factor authentication is already enabled.");

      // The code that confirmed is spent; the next step's is good once.
      expect(await twoFactor.verify(alice.id, codeNow(secret))).toBeNull();
      a.t.clock.advance(30_000);
      expect(await twoFactor.verify(alice.id, codeNow(secret))).toBe("otp");
      expect(await twoFactor.verify(alice.id, codeNow(secret))).toBeNull();
      expect(await twoFactor.verify(alice.id, codes[0])).toBe("recovery");
      expect(await twoFactor.verify(alice.id, codes[0])).toBeNull();
      expect((await twoFactor.state(alice.id)).recoveryCodesLeft).toBe(9);

      const refused = await twoFactor.disable(alice.id, { code: "nonsense" }).catch((e: Error) => e);
      expect((refused as Error).message).toBe(INVALID_CODE);
      expect(await twoFactor.enabled(alice.id)).toBe(true);
      const fresh = await twoFactor.regenerateRecoveryCodes(alice.id, { password: PASSWORD });
      expect(fresh).toHaveLength(10);
      expect(await twoFactor.verify(alice.id, codes[1])).toBeNull();
      await twoFactor.disable(alice.id, { code: fresh[0] });
      expect(await twoFactor.state(alice.id)).toEqual({ enabled: false, enabledAt: null, recoveryCodesLeft: 0 });
      expect(await count(a, "two_factor_recovery_codes")).toBe(0);
      expect(await count(a, "two_factor_secrets")).toBe(0);

      // The operator's reset, without a proof: off, codes and all; a second one finds it off already.
      a.t.clock.advance(30_000);
      const second = await twoFactor.begin(alice.id, "alice");
      await twoFactor.confirm(alice.id, codeNow(second.secret));
      expect(await count(a, "two_factor_recovery_codes")).toBe(10);
      expect(await twoFactor.reset(alice.id)).toBe(true);
      expect(await twoFactor.state(alice.id)).toEqual({ enabled: false, enabledAt: null, recoveryCodesLeft: 0 });
      expect(await count(a, "two_factor_recovery_codes")).toBe(0);
      expect(await count(a, "two_factor_secrets")).toBe(0);
      expect(await twoFactor.reset(alice.id)).toBe(false);
      // In a transaction that is rolled back, nothing is reset.
      const third = await twoFactor.begin(alice.id, "alice");
      a.t.clock.advance(30_000);
      await twoFactor.confirm(alice.id, codeNow(third.secret));
      const undone = await a.port
        .transaction(async () => {
          await twoFactor.reset(alice.id);
          throw new Error("undone");
        })
        .catch((e: Error) => e.message);
      expect(undone).toBe("undone");
      expect((await twoFactor.state(alice.id)).recoveryCodesLeft).toBe(10);
    });

    test("invites: made, found by code, listed with their maker, refused when bad; the operator is the owner or first admin", async () => {
      const a = await arm.open();
      const alice = await member(a, "alice");
      const invites = new InviteService(a.port, a.t.ids, a.t.clock, "https://rookery.test");
      expect(await invites.operator()).toBeNull();
      await a.port.run("UPDATE users SET role = 'admin' WHERE account_id = ?", [alice.id]);
      expect(await invites.operator()).toBe(alice.id);

      const issued = await invites.create(alice.id, { maxUses: 2, expiresInMs: 3_600_000, comment: " for a friend " });
      expect(issued.url).toBe(`https://rookery.test/invite/${issued.code}`);
      expect(await invites.find(issued.code)).toEqual({ invite: issued.invite, state: "usable" });
      expect(await invites.usable(issued.code)).toEqual(issued.invite);
      expect(await invites.find("nope")).toEqual({ invite: null, state: "unknown" });
      expect(await invites.list(alice.id)).toEqual([{ invite: { ...issued.invite, comment: "for a friend" }, maker: "alice", state: "usable" }]);

      const bad = await invites.create(alice.id, { maxUses: 0, expiresInMs: 5 }).catch((e: Error) => e);
      expect((bad as Error).message).toBe("Validation failed: Max uses must be a whole number from 1 to 1000000, Expires in must be from a minute to ten years");
      expect(await count(a, "invites")).toBe(1);

      a.t.clock.advance(3_600_000);
      expect((await invites.find(issued.code)).state).toBe("expired");
      expect(await invites.usable(issued.code)).toBeNull();
      // A maker who may no longer sign in makes nothing, and their invites let nobody in.
      await a.port.run(`UPDATE users SET approved = ${a.port.dialect === "postgres" ? "false" : "0"} WHERE account_id = ?`, [alice.id]);
      const disabled = await invites.create(alice.id).catch((e: Error) => e);
      expect((disabled as InviteUnusable).refusal).toBe("disabled");
      expect((await invites.list())[0]!.state).toBe("expired");
      expect(await count(a, "invites")).toBe(1);
    });

    test("invites: one listed by its id; revoked by its maker or the operator, once; another's, an unknown or an expired one refused and unchanged", async () => {
      const a = await arm.open();
      const alice = await member(a, "alice");
      const bob = await member(a, "bob");
      const invites = new InviteService(a.port, a.t.ids, a.t.clock, "https://rookery.test");
      const mine = await invites.create(alice.id, { comment: "mine" });
      const other = await invites.create(alice.id);
      expect(await invites.listing(mine.invite.id)).toEqual({ invite: { ...mine.invite, comment: "mine" }, maker: "alice", state: "usable" });
      expect(await invites.listing(404)).toBeUndefined();

      const rows = () => a.port.all("SELECT id, expires_at FROM invites ORDER BY id");
      const before = await rows();
      expect(await invites.revoke(mine.invite.id, bob.id)).toBeNull();
      expect(await invites.revoke(404)).toBeNull();
      expect(await rows()).toEqual(before);

      expect(await invites.revoke(mine.invite.id, alice.id)).toBe("revoked");
      expect((await invites.listing(mine.invite.id))!.state).toBe("expired");
      const revoked = await rows();
      a.t.clock.advance(1000);
      expect(await invites.revoke(mine.invite.id, alice.id)).toBe("expired");
      expect(await invites.revoke(mine.invite.id)).toBe("expired");
      expect(await rows()).toEqual(revoked);
      // The operator's: any maker's.
      expect(await invites.revoke(other.invite.id)).toBe("revoked");
      expect(await invites.usable(other.code)).toBeNull();
    });

    test("endorsements: only of a followed account, listed, unpinned; an unknown account is a 404", async () => {
      const a = await arm.open();
      const alice = await member(a, "alice");
      const bob = await member(a, "bob");
      const endorsements = new Endorsements(a.port, a.t.ids, a.t.clock, a.t.services.follows);
      const notFollowing = await endorsements.pin(alice.id, bob.id).catch((e: Error) => e);
      expect((notFollowing as Error).message).toBe("Validation failed: You must be already following the person you want to endorse");
      const unknown = await endorsements.pin(alice.id, 404).catch((e: { status: number }) => e);
      expect((unknown as { status: number }).status).toBe(404);
      expect(await count(a, "account_pins")).toBe(0);

      await a.port.run("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)", [a.t.ids.next(), alice.id, bob.id, a.t.clock.now()]);
      await endorsements.pin(alice.id, bob.id);
      await endorsements.pin(alice.id, bob.id);
      const listed = await endorsements.list(alice.id, { limit: 40 });
      expect(listed.map((l) => l.account.username)).toEqual(["bob"]);
      expect(listed[0]!.account).toEqual(bob);
      // A second endorsement: the pages, newest first whichever way they are asked for.
      const carol = await member(a, "carol");
      await a.port.run("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)", [a.t.ids.next(), alice.id, carol.id, a.t.clock.now()]);
      await endorsements.pin(alice.id, carol.id);
      const [newest] = await endorsements.list(alice.id, { limit: 1 });
      expect(newest!.account.username).toBe("carol");
      expect((await endorsements.list(alice.id, { limit: 40, maxId: newest!.cursor })).map((l) => l.account.username)).toEqual(["bob"]);
      expect((await endorsements.list(alice.id, { limit: 40, sinceId: newest!.cursor })).map((l) => l.account.username)).toEqual([]);
      expect((await endorsements.list(alice.id, { limit: 1, minId: 0 })).map((l) => l.account.username)).toEqual(["bob"]);
      await endorsements.unpin(alice.id, bob.id);
      await endorsements.unpin(alice.id, carol.id);
      expect(await endorsements.list(alice.id, { limit: 40 })).toEqual([]);
    });

    test("the directory lists discoverable approved accounts, newest or most active first, without those hidden from the reader", async () => {
      const a = await arm.open();
      const alice = await member(a, "alice");
      const bob = await member(a, "bob");
      const carol = await member(a, "carol");
      const yes = a.port.dialect === "postgres" ? "true" : "1";
      await a.port.run(`UPDATE accounts SET discoverable = ${yes}`);
      await a.port.run("UPDATE accounts SET last_status_at = ? WHERE id = ?", [a.t.clock.now(), alice.id]);
      await a.port.run(`UPDATE users SET approved = ${a.port.dialect === "postgres" ? "false" : "0"} WHERE account_id = ?`, [carol.id]);
      // Moderation runs on the SQLite arm's services: alice blocks bob there.
      await a.t.services.moderation.block(alice.id, bob.id);
      const directory = new Directory(a.port, a.t.services.moderation);
      const names = async (viewer: number | null, order: "new" | "active") =>
        (await directory.list(viewer, { offset: 0, limit: 40, order, local: false })).map((r) => r.username);
      expect(await names(null, "active")).toEqual(["alice", "bob"]);
      expect(await names(null, "new")).toEqual(["bob", "alice"]);
      expect(await names(alice.id, "active")).toEqual([]);
      expect((await directory.list(null, { offset: 1, limit: 1, order: "new", local: true })).map((r) => r.id)).toEqual([alice.id]);
    });

    test("aliases are read; an account not local is a 404; a bad alias is refused and changes nothing; a password change checks the current one", async () => {
      const a = await arm.open();
      const alice = await member(a, "alice");
      await a.port.run("UPDATE accounts SET also_known_as = ? WHERE id = ?", [JSON.stringify(["https://old.example/users/alice"]), alice.id]);
      const refs = { localUri: (acc: AccountRow) => `https://rookery.test/users/${acc.username}`, resolve: async () => null } as unknown as ActorRefs;
      const aliases = new AccountAliases(a.port, refs, new EventBus(a.port));
      expect(await aliases.list(alice.id)).toEqual(["https://old.example/users/alice"]);
      const missing = await aliases.list(404).catch((e: { status: number }) => e);
      expect((missing as { status: number }).status).toBe(404);
      const bad = await aliases.set(alice.id, ["ftp://old.example/alice"]).catch((e: Error) => e);
      expect((bad as Error).message).toMatch(/^invalid also_known_as_uri/);
      expect(await aliases.remove(alice.id, "https://old.example/users/alice")).toBe("https://old.example/users/alice");
      expect(await aliases.list(alice.id)).toEqual([]);

      const passwords = new Passwords(a.port, a.t.services.webSessions);
      const wrong = await passwords.change(alice.id, { current: "nope", password: "new password!", confirmation: "new password!" }, undefined).catch((e: Error) => e);
      expect((wrong as Error).message).toBe("Validation failed: Current password is invalid");
      const before = (await a.port.get<{ h: string }>("SELECT password_hash AS h FROM users WHERE account_id = ?", [alice.id]))!.h;
      expect(await passwords.change(alice.id, { current: PASSWORD, password: "new password!", confirmation: "new password!" }, undefined)).toBe(0);
      const after = (await a.port.get<{ h: string }>("SELECT password_hash AS h FROM users WHERE account_id = ?", [alice.id]))!.h;
      expect(after).not.toBe(before);
    });
  });
}
