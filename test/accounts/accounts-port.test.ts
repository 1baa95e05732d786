import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import type { DomainEvent } from "../../src/infra/events.ts";
import { EventBus } from "../../src/infra/events.ts";
import { MediaStorage } from "../../src/media-files/storage.ts";
import { AccountService } from "../../src/services/accounts/accounts.ts";
import { ActorRefs } from "../../src/services/accounts/actor-refs.ts";
import { ProfileImageService } from "../../src/services/accounts/profile-images.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * The accounts family's core on the database port (issue 31): registration, sign-in,
 * update_credentials and the reads the routes await run on SQLite and on PostgreSQL. Their
 * behaviour over HTTP is tested in accounts.test.ts and registrations.test.ts; this holds their
 * SQL on both databases. The synchronous reads (for callers not yet converted: NoteLookups, the
 * outbound listeners, the stream fanout, presenters' callers) stay on the arm's SQLite and are
 * not run here.
 */

afterEach(closePortArms);
const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const PASSWORD = "correct horse battery staple";
const PUBLIC_URL = "http://rookery.test";

/** The service on the arm's port, with its own bus (to hear what it emits) and media folder. */
function accountsOn(arm: PortArm) {
  const dir = mkdtempSync(join(tmpdir(), "rookery-accounts-port-"));
  folders.push(dir);
  const events = new EventBus(arm.port);
  const heard: DomainEvent[] = [];
  for (const type of ["account.registered", "account.updated", "account.unlocked"] as const) events.within(type, (e) => void heard.push(e));
  const images = new ProfileImageService(new MediaStorage(dir, PUBLIC_URL));
  const accounts = new AccountService(arm.port, arm.t.ids, arm.t.clock, PUBLIC_URL, images, events, async () => []);
  return { accounts, heard };
}

const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

/** The error an awaited call threw, as Mastodon's 422 body shows it. */
async function refusal(work: Promise<unknown>) {
  const e = (await work.then(() => null, (error: unknown) => error)) as { status?: number; message?: string; extra?: { details?: Record<string, { error: string }[]> } } | null;
  expect(e).not.toBeNull();
  return { status: e!.status, message: e!.message, details: Object.fromEntries(Object.entries(e!.extra?.details ?? {}).map(([k, v]) => [k, v.map((d) => d.error)])) };
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the accounts family's core on ${arm.name}`, () => {
    test("a sign-up is stored with its user, announced in its transaction, read back by id, name and address, and signs in", async () => {
      const a = await arm.open();
      const { accounts, heard } = accountsOn(a);
      let within: number | null = null;
      const alice = await accounts.create(
        { username: "Alice", email: "Alice@Example.test", password: PASSWORD, agreement: true, locale: "fr", reason: "  to talk  " },
        { api: true },
        { approved: false, inviteId: null, within: (id) => void (within = id) },
      );
      expect(within === alice.id).toBe(true);
      expect(heard).toEqual([{ type: "account.registered", accountId: alice.id, approved: false }]);

      expect(await accounts.get(alice.id)).toEqual(alice);
      expect((await accounts.getLocal("aLiCe"))?.id).toBe(alice.id);
      const user = (await accounts.getUser(alice.id))!;
      expect(user).toMatchObject({ accountId: alice.id, email: "alice@example.test", locale: "fr", approved: false, signUpReason: "to talk", role: "user" });
      expect(await accounts.list()).toEqual([{ account: alice, email: "alice@example.test" }]);

      expect(await accounts.verifyLogin("ALICE", PASSWORD)).toBe(alice.id);
      expect(await accounts.verifyLogin("alice@example.test", PASSWORD)).toBe(alice.id);
      expect(await accounts.verifyLogin("alice", "not the password")).toBeNull();
      expect(await accounts.verifyLogin("nobody", PASSWORD)).toBeNull();
      // Sign-in attempts count against the account, by name or address alike, else the name.
      expect(await accounts.signInKey(" ALICE ")).toBe(alice.id);
      expect(await accounts.signInKey("alice@example.test")).toBe(alice.id);
      expect(await accounts.signInKey("Nobody")).toBe("nobody");
      // A suspended account does not sign in.
      await a.port.run("UPDATE accounts SET suspended_at = ? WHERE id = ?", [a.t.clock.now(), alice.id]);
      expect(await accounts.verifyLogin("alice", PASSWORD)).toBeNull();
    });

    test("bad sign-ups are refused with Mastodon's details and store nothing: taken name (any case), taken address, blanks, a reserved name", async () => {
      const a = await arm.open();
      const { accounts, heard } = accountsOn(a);
      await accounts.create({ username: "bob", email: "bob@example.test", password: PASSWORD }, { api: false });
      heard.length = 0;
      const before = [await count(a, "accounts"), await count(a, "users")];

      expect(await refusal(accounts.create({ username: "BOB", email: "BOB@example.test", password: PASSWORD, agreement: true }, { api: true }))).toEqual({
        status: 422,
        message: "Validation failed: E-mail address has already been taken, Username has already been taken",
        details: { email: ["ERR_TAKEN"], username: ["ERR_TAKEN"] },
      });
      const blank = await refusal(accounts.create({}, { api: true }));
      expect(blank.details).toEqual({ email: ["ERR_BLANK"], password: ["ERR_BLANK"], username: ["ERR_BLANK", "ERR_INVALID"], agreement: ["ERR_ACCEPTED"] });
      expect((await refusal(accounts.create({ username: "admin", email: "x@example.test", password: PASSWORD, agreement: true }, { api: true }))).details).toEqual({ username: ["ERR_RESERVED"] });

      expect([await count(a, "accounts"), await count(a, "users")]).toEqual(before);
      expect(heard).toEqual([]);
    });

    test("sign-ups racing for one name or one address: one stored, the others refused with Mastodon's 422 for what was taken, none failing otherwise", async () => {
      const a = await arm.open();
      const { accounts, heard } = accountsOn(a);
      // Both pass the checks before either is stored (the password's hashing is awaited between): the unique indexes decide.
      const sameName = await Promise.allSettled(
        ["erin1", "erin2", "erin3"].map((local) => accounts.create({ username: "erin", email: `${local}@example.test`, password: PASSWORD }, { api: false })),
      );
      const sameAddress = await Promise.allSettled(
        ["frank", "Frank2", "frank3"].map((username) => accounts.create({ username, email: "frank@example.test", password: PASSWORD }, { api: false })),
      );
      const cases: [PromiseSettledResult<unknown>[], Record<string, string[]>, string][] = [
        [sameName, { username: ["ERR_TAKEN"] }, "Validation failed: Username has already been taken"],
        [sameAddress, { email: ["ERR_TAKEN"] }, "Validation failed: E-mail address has already been taken"],
      ];
      for (const [results, details, message] of cases) {
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        for (const r of results.filter((r) => r.status === "rejected")) expect(await refusal(Promise.reject(r.reason))).toEqual({ status: 422, message, details });
      }
      expect(await count(a, "accounts")).toBe(2);
      expect(await count(a, "users")).toBe(2);
      expect(heard).toEqual([]);
    });

    test("update_credentials: profile, defaults and an avatar written; unlocking announced; a bad value changes nothing", async () => {
      const a = await arm.open();
      const { accounts, heard } = accountsOn(a);
      const dave = await accounts.create({ username: "dave", email: "dave@example.test", password: PASSWORD }, { api: false });
      await accounts.updateCredentials(dave.id, { locked: true });
      heard.length = 0;

      const avatar = new File([await sharp({ create: { width: 8, height: 8, channels: 3, background: "#36c" } }).png().toBuffer()], "a.png", { type: "image/png" });
      const updated = await accounts.updateCredentials(dave.id, {
        displayName: " Dave ",
        note: "Hello #world",
        locked: false,
        fields: [{ name: "site", value: "https://dave.example" }, { name: " ", value: "dropped" }],
        privacy: "unlisted",
        sensitive: true,
        language: "de",
        quotePolicy: "followers",
        avatar,
      });
      expect(heard.map((e) => e.type)).toEqual(["account.updated", "account.unlocked"]);
      const stored = (await accounts.get(dave.id))!;
      expect(stored).toEqual(updated);
      expect(stored).toMatchObject({ displayName: "Dave", note: "Hello #world", locked: false });
      expect(stored.noteHtml).toContain(`${PUBLIC_URL}/tags/world`);
      expect(JSON.parse(stored.fields)).toEqual([{ name: "site", value: "https://dave.example", valueHtml: expect.stringContaining("https://dave.example"), verifiedAt: null }]);
      expect(stored.avatarFile).toMatch(/^avatars\/.+\.webp$/);
      expect(await accounts.getUser(dave.id)).toMatchObject({ defaultPrivacy: "unlisted", defaultSensitive: true, defaultLanguage: "de", defaultQuotePolicy: "followers" });

      heard.length = 0;
      const bad = await refusal(accounts.updateCredentials(dave.id, { displayName: "Someone else", privacy: "direct", language: "english" }));
      expect(bad).toMatchObject({ status: 422, details: { "source.privacy": ["ERR_INCLUSION"], "source.language": ["ERR_INCLUSION"] } });
      expect(await accounts.get(dave.id)).toEqual(stored);
      expect(await accounts.getUser(dave.id)).toMatchObject({ defaultPrivacy: "unlisted", defaultLanguage: "de" });
      expect(heard).toEqual([]);
    });

    test("reads: many in the order asked, a remote one by handle, a moved account shown with where it went, an actor reference resolved", async () => {
      const a = await arm.open();
      const { accounts } = accountsOn(a);
      const erin = await accounts.create({ username: "erin", email: "erin@example.test", password: PASSWORD }, { api: false });
      const fay = await accounts.create({ username: "fay", email: "fay@example.test", password: PASSWORD }, { api: false });
      const remote = await a.mirror(await a.t.remote("Gus", "Remote.example"));

      expect((await accounts.getMany([fay.id, 1, erin.id, remote.id])).map((r) => r.id)).toEqual([fay.id, erin.id, remote.id]);
      expect(await accounts.getMany([])).toEqual([]);
      expect((await accounts.getRemote("gus", "remote.EXAMPLE"))?.id).toBe(remote.id);
      expect(await accounts.getLocal("gus")).toBeUndefined();
      expect(await accounts.get(1)).toBeUndefined();

      await a.port.run("UPDATE accounts SET moved_to_account_id = ?, moved_at = ? WHERE id = ?", [fay.id, a.t.clock.now(), erin.id]);
      const [shownErin, shownFay] = await accounts.showByIds([erin.id, fay.id]);
      expect(shownErin!.movedTo?.id).toBe(fay.id);
      expect(shownFay!.movedTo).toBeUndefined();
      expect((await accounts.show((await accounts.get(erin.id))!)).movedTo?.id).toBe(fay.id);

      const refs = new ActorRefs(accounts, a.t.services.remoteAccounts, null, PUBLIC_URL);
      const ref = await refs.resolve({ handle: { username: "ERIN", domain: "rookery.test" } });
      expect(ref).toEqual({ account: expect.objectContaining({ id: erin.id }), uri: `${PUBLIC_URL}/users/erin`, aliases: [], movedTo: `${PUBLIC_URL}/users/fay` });
      expect(await refs.resolve({ uri: `${PUBLIC_URL}/users/nobody` })).toBeNull();
    });

    test("mentions: a text's local and remote mentions read before formatting (any case), unknown and remote-only names left as text; a user read with its account", async () => {
      const a = await arm.open();
      const { accounts } = accountsOn(a);
      const hal = await accounts.create({ username: "Hal", email: "hal@example.test", password: PASSWORD }, { api: false });
      const remote = await a.mirror(await a.t.remote("Ivy", "far.example"));
      await a.mirror(await a.t.remote("hal", "other.example"));

      const texts = ["hi @hal and @IVY@far.EXAMPLE", "@hal@ROOKERY.test, @nobody, @nobody@far.example, @ivy and @hal@other.example"];
      const resolve = await accounts.mentionsIn(texts, "rookery.test");
      expect(resolve("HAL", null)).toEqual({ id: hal.id, username: "Hal", url: `${PUBLIC_URL}/@Hal` });
      expect(resolve("hal", "Rookery.Test")).toEqual({ id: hal.id, username: "Hal", url: `${PUBLIC_URL}/@Hal` });
      expect(resolve("ivy", "far.example")).toEqual({ id: remote.id, username: "Ivy", acct: "Ivy@far.example", url: "https://far.example/users/Ivy" });
      // A bare name is a local account's only.
      expect(resolve("ivy", null)).toBeNull();
      expect(resolve("nobody", null)).toBeNull();
      expect(resolve("nobody", "far.example")).toBeNull();
      expect(resolve("hal", "other.example")?.acct).toBe("hal@other.example");
      // A name the texts did not mention was not read.
      expect(resolve("ivy", "elsewhere.example")).toBeNull();
      expect(await accounts.mentionsIn([""], "rookery.test").then((r) => r("hal", null))).toBeNull();

      expect(await accounts.getUser(hal.id)).toMatchObject({ accountId: hal.id, email: "hal@example.test" });
      expect(await accounts.getUser(remote.id)).toBeUndefined();
    });
  });
}
