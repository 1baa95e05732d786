import { eq } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { accounts, users, type AccountRow, type UserRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { hashPassword, verifyPassword } from "../../auth/secrets.ts";
import { rowReader } from "../../db/rows.ts";
import { mentionNames, type MentionTarget } from "../../text/format.ts";
import { normalizeLanguage } from "../../text/languages.ts";
import type { EventBus } from "../../infra/events.ts";
import type { ProfileImageService } from "./profile-images.ts";
import { ValidationErrors } from "./validation.ts";
import { newAccountInput, newLocalAccount, validateNewAccount, MAX_EMAIL_LENGTH, type NewAccount } from "./new-account.ts";
import type { AccountView } from "../../models/views.ts";
import { oneWithMovedToAsync, withMovedToAsync } from "./account-views.ts";
import type { CustomEmoji } from "../../models/emojis.ts";
import { admitted, type Admission } from "./registrations.ts";
import { credentialChanges, type CredentialsUpdate } from "./credentials.ts";

export type { CredentialsUpdate } from "./credentials.ts";
export { MAX_FIELDS } from "./credentials.ts";
export { USERNAME_RE, type NewAccount } from "./new-account.ts";

const ACCOUNT = rowReader(accounts);
const USER = rowReader(users);
const LOCAL_BY_NAME = `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE lower("accounts"."username") = ? AND "accounts"."domain" IS NULL`;
const LOCAL_BY_NAMES = `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE "accounts"."domain" IS NULL AND lower("accounts"."username") IN`;
const REMOTE_BY_HANDLE = `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE lower("accounts"."username") = ? AND lower("accounts"."domain") = ?`;
// Up to 40 ids at a time from the API: one statement text per count, each kept prepared by the
// driver (bun's query cache; PostgreSQL's named statements), and portable where json_each is not.
const byIdsText = (n: number) => `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE "accounts"."id" IN (${Array.from({ length: n }, () => "?").join(", ")})`;

// A fixed argon2id hash to verify against when the login names nobody, so that a wrong
// username costs as long as a wrong password.
let dummyHash: Promise<string> | null = null;

/**
 * Accounts and their users: registration, sign-in, the profile's own changes, and reads.
 *
 * On the database port (issue 31): registration, sign-in, update_credentials, the CLI's list and
 * sign-in throttle key, and the reads (`get`, `getMany`, `getLocal`, `getRemote`, `getUser`,
 * `show`, `showMany`, `showByIds`, `mentionsIn`, `localIds`): nothing of it is on `Db`.
 */
export class AccountService {
  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
    private images: ProfileImageService,
    private events: EventBus,
    /** This server's custom emojis used in some texts (CustomEmojiService.inTexts), kept on a profile when it is saved. */
    private localEmojis: (texts: string[]) => Promise<CustomEmoji[]>,
  ) {}

  /** An account by its id. */
  async get(id: number): Promise<AccountRow | undefined> {
    const values = (await this.port.values(`SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE "accounts"."id" = ?`, [id]))[0];
    return values ? ACCOUNT.map(values) : undefined;
  }

  /** Accounts by their ids, in the order of `ids`. */
  async getMany(ids: number[]): Promise<AccountRow[]> {
    if (ids.length === 0) return [];
    const byId = new Map((await this.port.values(byIdsText(ids.length), ids)).map((r) => ACCOUNT.map(r)).map((a) => [a.id, a]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** A local account by its name, whatever its case (a remote account of the same name is somebody else). */
  async getLocal(username: string): Promise<AccountRow | undefined> {
    const values = (await this.port.values(LOCAL_BY_NAME, [username.toLowerCase()]))[0];
    return values ? ACCOUNT.map(values) : undefined;
  }

  /** A stored remote account by its handle (`user@domain`, the domain with its port if any). */
  async getRemote(username: string, domain: string): Promise<AccountRow | undefined> {
    const values = (await this.port.values(REMOTE_BY_HANDLE, [username.toLowerCase(), domain.toLowerCase()]))[0];
    return values ? ACCOUNT.map(values) : undefined;
  }

  /** The local user of an account, if it has one. */
  async getUser(accountId: number): Promise<UserRow | undefined> {
    const values = (await this.port.values(`SELECT ${USER.columns} ${USER.from} WHERE "users"."account_id" = ?`, [accountId]))[0];
    return values ? USER.map(values) : undefined;
  }

  /** view() through the port. */
  show(row: AccountRow): Promise<AccountView> {
    return oneWithMovedToAsync(row, (id) => this.get(id));
  }

  /** views() through the port. */
  showMany(rows: AccountRow[]): Promise<AccountView[]> {
    return withMovedToAsync(rows, (ids) => this.getMany(ids));
  }

  /** Accounts by their ids, as presenters show them (with the accounts they moved to). */
  async showByIds(ids: number[]): Promise<AccountView[]> {
    return this.showMany(await this.getMany(ids));
  }

  /** Every local user's account id (those with a user row). */
  async localIds(): Promise<number[]> {
    return (await this.port.values(`SELECT "users"."account_id" FROM "users"`)).map((r) => r[0] as number);
  }

  /** Every local account with its address, for the CLI's list. */
  async list(): Promise<{ account: AccountRow; email: string }[]> {
    const rows = await this.port.values(`SELECT ${ACCOUNT.columns}, "users"."email" ${ACCOUNT.from} INNER JOIN "users" ON "users"."account_id" = "accounts"."id" ORDER BY "accounts"."id"`);
    const email = ACCOUNT.columns.split(", ").length;
    return rows.map((r) => ({ account: ACCOUNT.map(r), email: r[email] as string }));
  }

  /**
   * For the text formatter, which cannot wait: the accounts `texts` mention, read first (the local
   * names in one statement, each remote handle in one), and a resolver over what was found, as
   * `@name` (or `@name@this.domain`) to a local account and `@name@other.domain` to a remote
   * account already stored (the composer resolves unknown ones through WebFinger first).
   */
  async mentionsIn(texts: string[], domain: string): Promise<(username: string, host: string | null) => MentionTarget | null> {
    const own = domain.toLowerCase();
    const local = new Set<string>();
    const remote = new Map<string, { username: string; domain: string }>();
    for (const text of texts) {
      for (const m of mentionNames(text)) {
        const host = m.domain?.toLowerCase() ?? null;
        if (host === null || host === own) local.add(m.username.toLowerCase());
        else remote.set(`${m.username.toLowerCase()}@${host}`, { username: m.username, domain: host });
      }
    }
    const found = new Map<string, MentionTarget>();
    if (local.size > 0) {
      const names = [...local];
      const rows = await this.port.values(`${LOCAL_BY_NAMES} (${names.map(() => "?").join(", ")})`, names);
      for (const account of rows.map((r) => ACCOUNT.map(r))) {
        found.set(account.username.toLowerCase(), { id: account.id, username: account.username, url: `${this.publicUrl}/@${account.username}` });
      }
    }
    await Promise.all(
      [...remote].map(async ([key, handle]) => {
        const account = await this.getRemote(handle.username, handle.domain);
        if (account) found.set(key, { id: account.id, username: account.username, acct: `${account.username}@${account.domain}`, url: account.url ?? account.uri ?? "" });
      }),
    );
    return (username, host) => {
      const remoteHost = host !== null && host.toLowerCase() !== own ? host.toLowerCase() : null;
      return found.get(remoteHost === null ? username.toLowerCase() : `${username.toLowerCase()}@${remoteHost}`) ?? null;
    };
  }

  /**
   * Registration (API and CLI): Mastodon's validations in Mastodon's order (new-account.ts). A
   * sign-up (`admission`, from the API or an invite page) is announced to staff
   * (account.registered); the CLI's accounts are the operator's own doing.
   */
  async create(input: NewAccount, options: { api: boolean }, admission?: Admission): Promise<AccountRow> {
    const fields = newAccountInput(input);
    const { username, email, password, reason } = fields;
    const taken = {
      email: email !== "" && email.length <= MAX_EMAIL_LENGTH && (await this.emailTaken(email)),
      username: username !== "" && (await this.getLocal(username)) !== undefined,
    };
    validateNewAccount(input, fields, taken, options);

    const passwordHash = await hashPassword(password);
    const now = this.clock.now();
    const id = this.ids.next();
    const account = newLocalAccount(id, username, now);
    const { accounts: accountRows, users: userRows } = this.port.tables;
    try {
      await this.port.transaction(async () => {
        await this.port.orm.insert(accountRows).values(account);
        await this.port.orm
          .insert(userRows)
          // An unknown locale is dropped, as Mastodon does, rather than refused.
          .values({ accountId: id, email, passwordHash, locale: normalizeLanguage(input.locale ?? "") ?? null, createdAt: now, ...admitted(admission, reason) });
        if (admission) {
          // An invite's use, then the within listeners: in this transaction.
          await admission.within?.(id);
          await this.events.emit({ type: "account.registered", accountId: id, approved: admission.approved });
        }
      });
    } catch (e) {
      // Two registrations racing for one name or address: the unique indexes decide, and the
      // winner's rows, read now, say what was taken, as the checks above would have (the
      // driver's message, which names the index differently on each database, is not read).
      if (isUniqueViolation(e)) {
        const race = new ValidationErrors();
        if (await this.emailTaken(email)) race.add("email", "E-mail address", "TAKEN", "has already been taken");
        if (await this.getLocal(username)) race.add("username", "Username", "TAKEN", "has already been taken");
        race.throwIfAny();
      }
      throw e;
    }
    return account;
  }

  private async emailTaken(email: string): Promise<boolean> {
    return (await this.port.values(`SELECT "users"."account_id" FROM "users" WHERE lower("users"."email") = ?`, [email])).length > 0;
  }

  /**
   * What a sign-in attempt is counted against: the account the name leads to (by username or
   * e-mail alike, so switching between them gains nothing), or the name itself when it
   * leads to nobody.
   */
  async signInKey(login: string): Promise<number | string> {
    const name = login.trim().toLowerCase().slice(0, 320);
    if (name === "") return "";
    const [row] = await this.port.values(
      name.includes("@")
        ? `SELECT "users"."account_id" FROM "users" WHERE lower("users"."email") = ?`
        : `SELECT "accounts"."id" FROM "accounts" INNER JOIN "users" ON "users"."account_id" = "accounts"."id" WHERE lower("accounts"."username") = ?`,
      [name],
    );
    return (row?.[0] as number | undefined) ?? name;
  }

  /** The account whose username or e-mail and password match, else null. */
  async verifyLogin(login: string, password: string): Promise<number | null> {
    const name = login.trim();
    let row: { id: number; hash: string } | undefined;
    if (name !== "" && name.length <= 320) {
      const by = name.includes("@") ? `lower("users"."email")` : `lower("accounts"."username")`;
      const [found] = await this.port.values(
        // A suspended account does not sign in (as a wrong password, telling nothing more).
        `SELECT "users"."account_id", "users"."password_hash" FROM "users" INNER JOIN "accounts" ON "accounts"."id" = "users"."account_id" WHERE ${by} = ? AND "accounts"."suspended_at" IS NULL`,
        [name.toLowerCase()],
      );
      if (found) row = { id: found[0] as number, hash: found[1] as string };
    }
    // Exactly one argon2 verification whatever happens, so that the time taken tells nothing
    // about whether the login names anybody.
    dummyHash ??= hashPassword("not a password of anyone's");
    const matches = await verifyPassword(password.slice(0, 1024) || "x", row?.hash ?? (await dummyHash));
    return row && matches && password !== "" && password.length <= 1024 ? row.id : null;
  }

  async updateCredentials(accountId: number, input: CredentialsUpdate): Promise<AccountRow> {
    const account = await this.get(accountId);
    if (!account) throw new Error("account vanished");
    const texts = [input.note ?? "", ...(input.fields ?? []).map((f) => f.value ?? "")];
    const { changes, userChanges } = await credentialChanges(account, input, {
      publicUrl: this.publicUrl,
      resolveMention: await this.mentionsIn(texts, new URL(this.publicUrl).host),
      localEmojis: this.localEmojis,
    });
    // Images are decoded last, outside any transaction (files, not the port).
    const written: string[] = [];
    try {
      if (input.avatar) {
        changes.avatarFile = await this.images.store(input.avatar, "avatar");
        written.push(changes.avatarFile);
      }
      if (input.header) {
        changes.headerFile = await this.images.store(input.header, "header");
        written.push(changes.headerFile);
      }
    } catch (e) {
      await Promise.all(written.map((path) => this.images.remove(path)));
      throw e;
    }

    const { accounts: accountRows, users: userRows } = this.port.tables;
    await this.port.transaction(async () => {
      if (Object.keys(changes).length > 0) await this.port.orm.update(accountRows).set(changes).where(eq(accountRows.id, accountId));
      if (Object.keys(userChanges).length > 0) await this.port.orm.update(userRows).set(userChanges).where(eq(userRows.accountId, accountId));
      await this.events.emit({ type: "account.updated", accountId });
      if (account.locked && changes.locked === false) await this.events.emit({ type: "account.unlocked", accountId });
    });
    if (changes.avatarFile && account.avatarFile) await this.images.remove(account.avatarFile);
    if (changes.headerFile && account.headerFile) await this.images.remove(account.headerFile);
    return { ...account, ...changes };
  }
}
