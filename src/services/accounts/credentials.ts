import type { AccountRow, UserRow } from "../../db/schema.ts";
import type { CustomEmoji } from "../../models/emojis.ts";
import type { ProfileField } from "../../models/views.ts";
import { countableLength, formatText, graphemeLength, type MentionTarget } from "../../text/format.ts";
import { isQuotePolicy } from "../quotes/policy.ts";
import { ValidationErrors } from "./validation.ts";

export const MAX_FIELDS = 4;
const MAX_RAW_NOTE_LENGTH = 10_000;
const FIELD_TEXT_LIMIT = 255;
const VISIBILITIES = ["public", "unlisted", "private", "direct"] as const;

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

export interface CredentialsContext {
  publicUrl: string;
  resolveMention: (username: string, host: string | null) => MentionTarget | null;
  /** This server's custom emojis used in some texts, kept on a profile when it is saved. */
  localEmojis: (texts: string[]) => Promise<CustomEmoji[]>;
}

/**
 * What update_credentials changes of the account and of its user, validated in Mastodon's order
 * and rendered (HTML only for input that passed); the images are the service's, decoded after
 * this. Kept apart from AccountService: no database, only the rules.
 */
export async function credentialChanges(
  account: AccountRow,
  input: CredentialsUpdate,
  context: CredentialsContext,
): Promise<{ changes: Partial<AccountRow>; userChanges: Partial<UserRow> }> {
  const errors = new ValidationErrors();
  const changes: Partial<AccountRow> = {};
  const userChanges: Partial<UserRow> = {};
  const formatOptions = { tagBaseUrl: `${context.publicUrl}/tags/`, resolveMention: context.resolveMention };

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

  // HTML is rendered only for input that passed.
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
    changes.emojis = JSON.stringify(await context.localEmojis(texts));
  }
  return { changes, userChanges };
}
