import type { AccountRow } from "../../db/schema.ts";
import { ValidationErrors } from "./validation.ts";

export const USERNAME_RE = /^[A-Za-z0-9_]+$/;
const RESERVED_USERNAMES = new Set(["admin", "support", "help", "root", "webmaster", "administrator", "mod", "moderator"]);
const EMAIL_RE = /^[^@\s]+@[^@\s]+$/;
export const MAX_EMAIL_LENGTH = 320;
/** Mastodon's UserInviteRequest text limit. */
const MAX_REASON_LENGTH = 420;

export interface NewAccount {
  username?: string;
  email?: string;
  password?: string;
  agreement?: boolean;
  locale?: string;
  /** Why the person wants to join (sign-up `reason`), kept for staff to read. */
  reason?: string;
}

/** A sign-up's input as AccountService.create reads it: trimmed, the address lowercased. */
export function newAccountInput(input: NewAccount) {
  return {
    username: (input.username ?? "").trim(),
    email: (input.email ?? "").trim().toLowerCase(),
    password: input.password ?? "",
    reason: (input.reason ?? "").trim(),
  };
}

/**
 * Mastodon's validations of a registration, in Mastodon's order (the lookups of what is taken
 * done before, by the service). The CLI may use a reserved name and needs no agreement; the API
 * may do neither.
 */
export function validateNewAccount(
  input: NewAccount,
  { username, email, password, reason }: ReturnType<typeof newAccountInput>,
  taken: { email: boolean; username: boolean },
  options: { api: boolean },
): void {
  const errors = new ValidationErrors();
  if (email === "") errors.add("email", "E-mail address", "BLANK", "can't be blank");
  else if (email.length > MAX_EMAIL_LENGTH) errors.add("email", "E-mail address", "TOO_LONG", `is too long (maximum is ${MAX_EMAIL_LENGTH} characters)`);
  else if (taken.email) errors.add("email", "E-mail address", "TAKEN", "has already been taken");
  if (email !== "" && email.length <= MAX_EMAIL_LENGTH && !EMAIL_RE.test(email)) errors.add("email", "E-mail address", "INVALID", "is invalid");

  if (password === "") errors.add("password", "Password", "BLANK", "can't be blank");
  else if (password.length < 8) errors.add("password", "Password", "TOO_SHORT", "is too short (minimum is 8 characters)");
  else if (password.length > 72) errors.add("password", "Password", "TOO_LONG", "is too long (maximum is 72 characters)");

  if (username === "") errors.add("username", "Username", "BLANK", "can't be blank");
  else if (taken.username) errors.add("username", "Username", "TAKEN", "has already been taken");
  if (!USERNAME_RE.test(username)) errors.add("username", "Username", "INVALID", "must contain only letters, numbers and underscores");
  if (username.length > 30) errors.add("username", "Username", "TOO_LONG", "is too long (maximum is 30 characters)");
  if (options.api && RESERVED_USERNAMES.has(username.toLowerCase())) errors.add("username", "Username", "RESERVED", "is reserved");

  if (options.api && input.agreement !== true) errors.add("agreement", "Service agreement", "ACCEPTED", "must be accepted");
  if (reason.length > MAX_REASON_LENGTH) errors.add("reason", "Reason", "TOO_LONG", `is too long (maximum is ${MAX_REASON_LENGTH} characters)`);
  errors.throwIfAny();
}

/** A new local account's row: no domain, no remote endpoints, nothing posted yet. */
export function newLocalAccount(id: number, username: string, now: number): AccountRow {
  return {
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
}
