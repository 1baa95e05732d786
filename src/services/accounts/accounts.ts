import { eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { accounts, users, type AccountRow, type UserRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { hashPassword, verifyPassword } from "../../auth/secrets.ts";
import { rowReader } from "../../db/rows.ts";
import { countableLength, formatText, graphemeLength, type MentionTarget } from "../../text/format.ts";
import { normalizeLanguage } from "../../text/languages.ts";
import type { EventBus } from "../../infra/events.ts";
import type { ProfileImageService } from "./profile-images.ts";
import { ValidationErrors } from "./validation.ts";
import type { AccountView, ProfileField } from "../../models/views.ts";
import { oneWithMovedTo, withMovedTo } from "./account-views.ts";
import type { CustomEmoji } from "../../models/emojis.ts";
import { isQuotePolicy } from "../quotes/policy.ts";
import { admitted, type Admission } from "./registrations.ts";

export const USERNAME_RE = /^[A-Za-z0-9_]+$/;
const RESERVED_USERNAMES = new Set(["admin", "support", "help", "root", "webmaster", "administrator", "mod", "moderator"]);
const EMAIL_RE = /^[^@\s]+@[^@\s]+$/;
export const MAX_FIELDS = 4;
const MAX_RAW_NOTE_LENGTH = 10_000;
const MAX_EMAIL_LENGTH = 320;
const FIELD_TEXT_LIMIT = 255;
const VISIBILITIES = ["public", "unlisted", "private", "direct"] as const;

export interface NewAccount {
  username?: string;
  email?: string;
  password?: string;
  agreement?: boolean;
  locale?: string;
  /** Why the person wants to join (sign-up `reason`), kept for staff to read. */
  reason?: string;
}

/** Mastodon's UserInviteRequest text limit. */
const MAX_REASON_LENGTH = 420;

export interface CredentialsUpdate {
  displayName?: string;
  note?: string;
  locked?: boolean;
  bot?: boolean;
  discoverable?: boolean;
  hideCollections?: boolean;
  indexable?: boolean;
  fields?: { name?: string; value?: string }[];
  avatar?: File;
  header?: File;
  privacy?: string;
  sensitive?: boolean;
  language?: string;
  /** Who may quote new statuses by default (source[quote_policy]): public | followers | nobody. */
  quotePolicy?: string;
}

const ACCOUNT = rowReader(accounts);

// A fixed argon2id hash to verify against when the login names nobody, so that a wrong
// username costs as long as a wrong password.
let dummyHash: Promise<string> | null = null;

export class AccountService {
  private q;

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
    private images: ProfileImageService,
    private events: EventBus,
    /** This server's custom emojis used in some texts (CustomEmojiService.inTexts), kept on a profile when it is saved. */
    private localEmojis: (texts: string[]) => CustomEmoji[],
  ) {
    this.q = {
      byId: db.$client.query<unknown[], [number]>(`SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE id = ?`),
      // One statement for any number of ids: drizzle's inArray built its SQL again on every call.
      byIds: db.$client.query<unknown[], [string]>(`SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE id IN (SELECT value FROM json_each(?))`),
      byUsername: db
        .select()
        .from(accounts)
        // Local accounts only: a remote account of the same name is somebody else.
        .where(sql`lower(${accounts.username}) = ${sql.placeholder("name")} AND ${accounts.domain} IS NULL`)
        .prepare(),
      remoteByHandle: db
        .select()
        .from(accounts)
        .where(sql`lower(${accounts.username}) = ${sql.placeholder("name")} AND lower(${accounts.domain}) = ${sql.placeholder("domain")}`)
        .prepare(),
      user: db.select().from(users).where(eq(users.accountId, sql.placeholder("id"))).prepare(),
    };
  }

  findById(id: number): AccountRow | undefined {
    const values = this.q.byId.values(id)[0];
    return values ? ACCOUNT.map(values) : undefined;
  }

  /** In the order of `ids` (SQLite's order for IN depends on the plan, which indexes change). */
  findByIds(ids: number[]): AccountRow[] {
    if (ids.length === 0) return [];
    const byId = new Map(this.q.byIds.values(JSON.stringify(ids)).map((r) => ACCOUNT.map(r)).map((a) => [a.id, a]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** An account as presenters show it: with the account it moved to, if it moved (one query more, then). */
  view(row: AccountRow): AccountView {
    return oneWithMovedTo(row, (id) => this.findById(id));
  }

  /** Accounts as presenters show them: those that moved with the accounts they moved to, in one query for all. */
  views(rows: AccountRow[]): AccountView[] {
    return withMovedTo(rows, (ids) => this.findByIds(ids));
  }

  /** findByIds, as presenters show them (views). */
  viewsByIds(ids: number[]): AccountView[] {
    return this.views(this.findByIds(ids));
  }

  findByUsername(username: string): AccountRow | undefined {
    return this.q.byUsername.get({ name: username.toLowerCase() });
  }

  user(accountId: number): UserRow | undefined {
    return this.q.user.get({ id: accountId });
  }

  /** Every local user's account id (those with a user row). */
  localIds(): number[] {
    return this.db.select({ id: users.accountId }).from(users).all().map((r) => r.id);
  }

  list(): { account: AccountRow; email: string }[] {
    return this.db
      .select({ account: accounts, email: users.email })
      .from(accounts)
      .innerJoin(users, eq(users.accountId, accounts.id))
      .orderBy(accounts.id)
      .all();
  }

  /** A stored remote account by its handle (`user@domain`, the domain with its port if any). */
  findRemote(username: string, domain: string): AccountRow | undefined {
    return this.q.remoteByHandle.get({ name: username.toLowerCase(), domain: domain.toLowerCase() });
  }

  /**
   * For the text formatter: `@name` (or `@name@this.domain`) to a local account, and
   * `@name@other.domain` to a remote account already stored (the composer resolves unknown
   * ones through WebFinger before formatting, which cannot wait for the network).
   */
  mentionResolver(domain: string): (username: string, host: string | null) => MentionTarget | null {
    return (username, host) => {
      if (host !== null && host.toLowerCase() !== domain.toLowerCase()) {
        const remote = this.findRemote(username, host);
        return remote ? { id: remote.id, username: remote.username, acct: `${remote.username}@${remote.domain}`, url: remote.url ?? remote.uri ?? "" } : null;
      }
      const account = this.findByUsername(username);
      return account ? { id: account.id, username: account.username, url: `${this.publicUrl}/@${account.username}` } : null;
    };
  }

  /**
   * Registration (API and CLI): Mastodon's validations in Mastodon's order. The CLI may use a
   * reserved name and needs no agreement; the API may do neither. A sign-up (`admission`, from
   * the API or an invite page) is announced to staff (account.registered); the CLI's accounts
   * are the operator's own doing.
   */
  async create(input: NewAccount, options: { api: boolean }, admission?: Admission): Promise<AccountRow> {
    const username = (input.username ?? "").trim();
    const email = (input.email ?? "").trim().toLowerCase();
    const password = input.password ?? "";
    const errors = new ValidationErrors();

    if (email === "") errors.add("email", "E-mail address", "BLANK", "can't be blank");
    else if (email.length > MAX_EMAIL_LENGTH) errors.add("email", "E-mail address", "TOO_LONG", `is too long (maximum is ${MAX_EMAIL_LENGTH} characters)`);
    else if (this.emailTaken(email)) errors.add("email", "E-mail address", "TAKEN", "has already been taken");
    if (email !== "" && email.length <= MAX_EMAIL_LENGTH && !EMAIL_RE.test(email)) errors.add("email", "E-mail address", "INVALID", "is invalid");

    if (password === "") errors.add("password", "Password", "BLANK", "can't be blank");
    else if (password.length < 8) errors.add("password", "Password", "TOO_SHORT", "is too short (minimum is 8 characters)");
    else if (password.length > 72) errors.add("password", "Password", "TOO_LONG", "is too long (maximum is 72 characters)");

    if (username === "") errors.add("username", "Username", "BLANK", "can't be blank");
    else if (this.findByUsername(username)) errors.add("username", "Username", "TAKEN", "has already been taken");
    if (!USERNAME_RE.test(username)) errors.add("username", "Username", "INVALID", "must contain only letters, numbers and underscores");
    if (username.length > 30) errors.add("username", "Username", "TOO_LONG", "is too long (maximum is 30 characters)");
    if (options.api && RESERVED_USERNAMES.has(username.toLowerCase())) errors.add("username", "Username", "RESERVED", "is reserved");

    if (options.api && input.agreement !== true) errors.add("agreement", "Service agreement", "ACCEPTED", "must be accepted");
    const reason = (input.reason ?? "").trim();
    if (reason.length > MAX_REASON_LENGTH) errors.add("reason", "Reason", "TOO_LONG", `is too long (maximum is ${MAX_REASON_LENGTH} characters)`);
    errors.throwIfAny();

    const passwordHash = await hashPassword(password);
    const now = this.clock.now();
    const id = this.ids.next();
    const account: AccountRow = {
      id,
      username,
      displayName: "",
      note: "",
      noteHtml: "",
      fields: "[]",
      emojis: "[]",
      locked: false,
      bot: false,
      discoverable: true,
      indexable: true,
      hideCollections: false,
      avatarFile: null,
      headerFile: null,
      avatarRemoteUrl: null,
      headerRemoteUrl: null,
      createdAt: now,
      followersCount: 0,
      followingCount: 0,
      statusesCount: 0,
      lastStatusAt: null,
      // A local account: no domain, no remote endpoints.
      uri: null,
      domain: null,
      url: null,
      inboxUrl: null,
      sharedInboxUrl: null,
      followersUrl: null,
      fetchedAt: null,
      keyIds: "[]",
      movedToAccountId: null,
      movedAt: null,
      alsoKnownAs: "[]",
      suspendedAt: null,
      silencedAt: null,
    };
    try {
      this.db.transaction((tx) => {
        tx.insert(accounts).values(account).run();
        tx.insert(users)
          // An unknown locale is dropped, as Mastodon does, rather than refused.
          .values({ accountId: id, email, passwordHash, locale: normalizeLanguage(input.locale ?? "") ?? null, createdAt: now, ...admitted(admission, reason) })
          .run();
        if (admission) {
          admission.within?.(id);
          this.events.emit({ type: "account.registered", accountId: id, approved: admission.approved });
        }
      });
    } catch (e) {
      // Two registrations racing for one name or address: the unique indexes decide.
      const message = String(e);
      if (message.includes("UNIQUE") && (message.includes("accounts.username") || message.includes("users.email") || message.includes("lower("))) {
        const race = new ValidationErrors();
        if (this.findByUsername(username)) race.add("username", "Username", "TAKEN", "has already been taken");
        else race.add("email", "E-mail address", "TAKEN", "has already been taken");
        throw race.toError();
      }
      throw e;
    }
    return account;
  }

  private emailTaken(email: string): boolean {
    return !!this.db
      .select({ id: users.accountId })
      .from(users)
      .where(sql`lower(${users.email}) = ${email}`)
      .get();
  }

  /** The account whose username or e-mail and password match, else null. */
  /**
   * What a sign-in attempt is counted against: the account the name leads to (by username or
   * e-mail alike, so switching between them gains nothing), or the name itself when it
   * leads to nobody.
   */
  signInKey(login: string): number | string {
    const name = login.trim().toLowerCase().slice(0, 320);
    if (name === "") return "";
    const row = name.includes("@")
      ? this.db.select({ id: users.accountId }).from(users).where(sql`lower(${users.email}) = ${name}`).get()
      : this.db.select({ id: accounts.id }).from(accounts).innerJoin(users, eq(users.accountId, accounts.id)).where(sql`lower(${accounts.username}) = ${name}`).get();
    return row?.id ?? name;
  }

  async verifyLogin(login: string, password: string): Promise<number | null> {
    const name = login.trim();
    let row: { id: number; hash: string } | undefined;
    if (name !== "" && name.length <= 320) {
      const byEmail = name.includes("@");
      row = this.db
        .select({ id: users.accountId, hash: users.passwordHash })
        .from(users)
        .innerJoin(accounts, eq(accounts.id, users.accountId))
        // A suspended account does not sign in (as a wrong password, telling nothing more).
        .where(sql`${byEmail ? sql`lower(${users.email}) = ${name.toLowerCase()}` : sql`lower(${accounts.username}) = ${name.toLowerCase()}`} AND ${accounts.suspendedAt} IS NULL`)
        .get();
    }
    // Exactly one argon2 verification whatever happens, so that the time taken tells nothing
    // about whether the login names anybody.
    dummyHash ??= hashPassword("not a password of anyone's");
    const matches = await verifyPassword(password.slice(0, 1024) || "x", row?.hash ?? (await dummyHash));
    return row && matches && password !== "" && password.length <= 1024 ? row.id : null;
  }

  async updateCredentials(accountId: number, input: CredentialsUpdate): Promise<AccountRow> {
    const account = this.findById(accountId);
    if (!account) throw new Error("account vanished");
    const errors = new ValidationErrors();
    const changes: Partial<AccountRow> = {};
    const userChanges: Partial<UserRow> = {};
    const formatOptions = { tagBaseUrl: `${this.publicUrl}/tags/`, resolveMention: this.mentionResolver(new URL(this.publicUrl).host) };

    if (input.displayName !== undefined) {
      const value = input.displayName.trim();
      if (value.length > 300 || graphemeLength(value) > 30) errors.add("display_name", "Display name", "TOO_LONG", "is too long (maximum is 30 characters)");
      changes.displayName = value;
    }
    if (input.note !== undefined) {
      const value = input.note.trim();
      if (value.length > MAX_RAW_NOTE_LENGTH || countableLength(value) > 500) errors.add("note", "Note", "TOO_LONG", "character limit of 500 exceeded");
      changes.note = value;
    }
    let fieldsInput: { name: string; value: string }[] | null = null;
    if (input.fields !== undefined) {
      const kept = input.fields.filter((f) => (f.name ?? "").trim() !== "");
      if (kept.length > MAX_FIELDS) errors.add("fields", "Fields", "TOO_LONG", `is too long (maximum is ${MAX_FIELDS} characters)`);
      fieldsInput = kept.slice(0, MAX_FIELDS).map((f) => ({
        name: (f.name ?? "").trim().slice(0, FIELD_TEXT_LIMIT),
        value: (f.value ?? "").trim().slice(0, FIELD_TEXT_LIMIT),
      }));
    }
    if (input.locked !== undefined) changes.locked = input.locked;
    if (input.bot !== undefined) changes.bot = input.bot;
    if (input.discoverable !== undefined) changes.discoverable = input.discoverable;
    if (input.hideCollections !== undefined) changes.hideCollections = input.hideCollections;
    if (input.indexable !== undefined) changes.indexable = input.indexable;
    if (input.privacy !== undefined) {
      if (!(VISIBILITIES as readonly string[]).includes(input.privacy) || input.privacy === "direct") {
        errors.add("source.privacy", "Privacy", "INCLUSION", "is not included in the list");
      }
      userChanges.defaultPrivacy = input.privacy;
    }
    if (input.sensitive !== undefined) userChanges.defaultSensitive = input.sensitive;
    if (input.quotePolicy !== undefined) {
      if (!isQuotePolicy(input.quotePolicy)) errors.add("source.quote_policy", "Quote policy", "INCLUSION", "is not included in the list");
      userChanges.defaultQuotePolicy = input.quotePolicy;
    }
    if (input.language !== undefined) {
      const lang = input.language.trim();
      if (lang !== "" && !/^[a-z]{2,3}$/.test(lang)) errors.add("source.language", "Language", "INCLUSION", "is not included in the list");
      userChanges.defaultLanguage = lang === "" ? null : lang;
    }
    errors.throwIfAny();

    // HTML is rendered only for input that passed, and images are decoded last.
    if (changes.note !== undefined) changes.noteHtml = formatText(changes.note, formatOptions).html;
    if (fieldsInput) {
      const previous = JSON.parse(account.fields) as ProfileField[];
      const fields: ProfileField[] = fieldsInput.map(({ name, value }) => ({
        name,
        value,
        valueHtml: formatText(value, { ...formatOptions, multiline: false, relMe: true }).html,
        verifiedAt: previous.find((p) => p.value === value)?.verifiedAt ?? null,
      }));
      changes.fields = JSON.stringify(fields);
    }
    // The custom emojis of the name, note and fields, kept as a remote account's are.
    if (changes.displayName !== undefined || changes.note !== undefined || changes.fields !== undefined) {
      const fields = JSON.parse(changes.fields ?? account.fields) as ProfileField[];
      const texts = [changes.displayName ?? account.displayName, changes.note ?? account.note, ...fields.flatMap((f) => [f.name, f.value])];
      changes.emojis = JSON.stringify(this.localEmojis(texts));
    }
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

    this.db.transaction((tx) => {
      if (Object.keys(changes).length > 0) tx.update(accounts).set(changes).where(eq(accounts.id, accountId)).run();
      if (Object.keys(userChanges).length > 0) tx.update(users).set(userChanges).where(eq(users.accountId, accountId)).run();
      this.events.emit({ type: "account.updated", accountId });
      if (account.locked && changes.locked === false) this.events.emit({ type: "account.unlocked", accountId });
    });
    if (changes.avatarFile && account.avatarFile) await this.images.remove(account.avatarFile);
    if (changes.headerFile && account.headerFile) await this.images.remove(account.headerFile);
    return { ...account, ...changes };
  }
}
