import type { AccountRow, UserRow } from "../db/schema.ts";
import type { AccountView, ProfileField } from "../models/views.ts";
import { emojisOf } from "../models/emojis.ts";
import { roleEntity, roleOf } from "../models/roles.ts";

export interface Urls {
  publicUrl: string;
  /** URL of a stored media file. */
  media(path: string): string;
}

function midnight(ms: number): string {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())).toISOString();
}

function dateOnly(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function accountUrl(urls: Urls, username: string) {
  return `${urls.publicUrl}/@${username}`;
}

export function accountUri(urls: Urls, username: string) {
  return `${urls.publicUrl}/users/${username}`;
}

/**
 * An account's avatar: a remote one at its own server's URL (not downloaded: the static
 * version is the same image); without one, the missing image.
 */
export function avatarOf(urls: Urls, a: AccountRow): string {
  return a.avatarFile ? urls.media(a.avatarFile) : (a.avatarRemoteUrl ?? `${urls.publicUrl}/avatars/original/missing.png`);
}

/** An account's header, as its avatar. */
export function headerOf(urls: Urls, a: AccountRow): string {
  return a.headerFile ? urls.media(a.headerFile) : (a.headerRemoteUrl ?? `${urls.publicUrl}/headers/original/missing.png`);
}

/**
 * REST::AccountSerializer of Mastodon 4.3, in its key order. created_at is truncated to
 * midnight and last_status_at is a date, as Mastodon publishes them (privacy by design).
 */
export function serializeAccount(urls: Urls, a: AccountView) {
  return accountJson(urls, a, a.movedTo);
}

function accountJson(urls: Urls, a: AccountRow, movedTo: AccountRow | undefined) {
  // Suspended by staff: shown by name alone, with `suspended` (REST::AccountSerializer for an unavailable account).
  const unavailable = a.suspendedAt !== null;
  const avatar = unavailable ? `${urls.publicUrl}/avatars/original/missing.png` : avatarOf(urls, a);
  const header = unavailable ? `${urls.publicUrl}/headers/original/missing.png` : headerOf(urls, a);
  const fields = unavailable ? [] : (JSON.parse(a.fields) as ProfileField[]);
  return {
    id: String(a.id),
    username: a.username,
    // Remote accounts are user@domain and live at their home server's URLs.
    acct: a.domain === null ? a.username : `${a.username}@${a.domain}`,
    display_name: unavailable ? "" : a.displayName,
    locked: unavailable ? false : a.locked,
    bot: unavailable ? false : a.bot,
    discoverable: unavailable ? false : a.discoverable,
    indexable: unavailable ? false : a.indexable,
    group: false,
    created_at: midnight(a.createdAt),
    note: unavailable ? "" : a.noteHtml,
    url: a.domain === null ? accountUrl(urls, a.username) : (a.url ?? a.uri ?? ""),
    uri: a.domain === null ? accountUri(urls, a.username) : (a.uri ?? ""),
    avatar,
    avatar_static: avatar,
    header,
    header_static: header,
    followers_count: a.followersCount,
    following_count: a.followingCount,
    statuses_count: a.statusesCount,
    last_status_at: a.lastStatusAt === null ? null : dateOnly(a.lastStatusAt),
    hide_collections: a.hideCollections,
    noindex: false,
    ...(unavailable ? { suspended: true } : {}),
    // A limited (silenced) account is shown behind a warning by clients (`limited`).
    ...(a.silencedAt !== null ? { limited: true } : {}),
    // Mastodon's moved_and_not_nested: the account it moved to, whose own `moved` is left out.
    ...(movedTo && !unavailable ? { moved: movedJson(urls, movedTo) } : {}),
    emojis: unavailable ? [] : (emojisOf(a) as unknown[]),
    roles: [] as unknown[],
    fields: fields.map((f) => ({
      name: f.name,
      value: f.valueHtml,
      verified_at: f.verifiedAt === null ? null : new Date(f.verifiedAt).toISOString(),
    })),
  };
}

function movedJson(urls: Urls, target: AccountRow): Record<string, unknown> {
  return accountJson(urls, target, undefined);
}

export type AccountEntity = ReturnType<typeof serializeAccount>;

/** The signed-in user's own account: the Account plus `source` and `role`. */
export function serializeCredentialAccount(urls: Urls, a: AccountView, user: UserRow, followRequestsCount: number) {
  const base = serializeAccount(urls, a);
  const fields = JSON.parse(a.fields) as ProfileField[];
  const { emojis, roles, fields: htmlFields, ...attributes } = base;
  return {
    ...attributes,
    source: {
      privacy: user.defaultPrivacy,
      sensitive: user.defaultSensitive,
      language: user.defaultLanguage,
      note: a.note,
      fields: fields.map((f) => ({
        name: f.name,
        value: f.value,
        verified_at: f.verifiedAt === null ? null : new Date(f.verifiedAt).toISOString(),
      })),
      follow_requests_count: followRequestsCount,
      hide_collections: a.hideCollections,
      discoverable: a.discoverable,
      indexable: a.indexable,
      quote_policy: user.defaultQuotePolicy,
      // GoToSocial's: the accounts this one says it also is (POST /api/v1/accounts/alias), when there are any.
      ...(a.alsoKnownAs !== "[]" ? { also_known_as_uris: JSON.parse(a.alsoKnownAs) as string[] } : {}),
    },
    emojis,
    roles,
    fields: htmlFields,
    // REST::RoleSerializer of the user's role: what the account may do as staff, as a bitmask.
    role: roleEntity(roleOf(user.role)),
  };
}
