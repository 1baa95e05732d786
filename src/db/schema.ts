import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Times are integer milliseconds since the epoch; ids come from src/ids.ts.
const bool = (name: string) => integer(name, { mode: "boolean" });

/** The public profile. Every account on this server is local. */
export const accounts = sqliteTable(
  "accounts",
  {
    id: integer("id").primaryKey(),
    username: text("username").notNull(),
    displayName: text("display_name").notNull().default(""),
    /** The note as the user wrote it, and as HTML rendered once when it was saved. */
    note: text("note").notNull().default(""),
    noteHtml: text("note_html").notNull().default(""),
    /** JSON: [{name, value, valueHtml, verifiedAt}] */
    fields: text("fields").notNull().default("[]"),
    locked: bool("locked").notNull().default(false),
    bot: bool("bot").notNull().default(false),
    discoverable: bool("discoverable").notNull().default(true),
    indexable: bool("indexable").notNull().default(true),
    hideCollections: bool("hide_collections").notNull().default(false),
    avatarFile: text("avatar_file"),
    headerFile: text("header_file"),
    createdAt: integer("created_at").notNull(),
    followersCount: integer("followers_count").notNull().default(0),
    followingCount: integer("following_count").notNull().default(0),
    statusesCount: integer("statuses_count").notNull().default(0),
    lastStatusAt: integer("last_status_at"),
  },
  (t) => [uniqueIndex("accounts_username_lower").on(sql`lower(${t.username})`)],
);

/** Sign-in credentials and private settings of a local account. */
export const users = sqliteTable(
  "users",
  {
    accountId: integer("account_id")
      .primaryKey()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    locale: text("locale"),
    defaultPrivacy: text("default_privacy").notNull().default("public"),
    defaultSensitive: bool("default_sensitive").notNull().default(false),
    defaultLanguage: text("default_language"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_lower").on(sql`lower(${t.email})`)],
);

export const applications = sqliteTable("applications", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
  website: text("website"),
  /** Newline-separated, as the app registered them. */
  redirectUris: text("redirect_uris").notNull(),
  /** Space-separated. */
  scopes: text("scopes").notNull(),
  clientId: text("client_id").notNull().unique(),
  clientSecretHash: text("client_secret_hash").notNull(),
  createdAt: integer("created_at").notNull(),
});

export const accessTokens = sqliteTable(
  "oauth_access_tokens",
  {
    id: integer("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique(),
    applicationId: integer("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    /** Null for client_credentials tokens, which act for the app alone. */
    accountId: integer("account_id").references(() => accounts.id, { onDelete: "cascade" }),
    scopes: text("scopes").notNull(),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("oauth_access_tokens_account").on(t.accountId), index("oauth_access_tokens_app").on(t.applicationId)],
);

export const authorizationCodes = sqliteTable("oauth_authorization_codes", {
  id: integer("id").primaryKey(),
  codeHash: text("code_hash").notNull().unique(),
  applicationId: integer("application_id")
    .notNull()
    .references(() => applications.id, { onDelete: "cascade" }),
  accountId: integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  redirectUri: text("redirect_uri").notNull(),
  scopes: text("scopes").notNull(),
  codeChallenge: text("code_challenge"),
  codeChallengeMethod: text("code_challenge_method"),
  createdAt: integer("created_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
});

/** Browser sessions of the sign-in and consent pages (never used by the API). */
export const webSessions = sqliteTable("web_sessions", {
  id: integer("id").primaryKey(),
  tokenHash: text("token_hash").notNull().unique(),
  accountId: integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  createdAt: integer("created_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
});

const followColumns = {
  id: integer("id").primaryKey(),
  accountId: integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  targetAccountId: integer("target_account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  showReblogs: bool("show_reblogs").notNull().default(true),
  notify: bool("notify").notNull().default(false),
  /** JSON array of ISO 639-1 codes, or null for all languages. */
  languages: text("languages"),
  createdAt: integer("created_at").notNull(),
};

export const follows = sqliteTable("follows", followColumns, (t) => [
  uniqueIndex("follows_pair").on(t.accountId, t.targetAccountId),
  index("follows_target").on(t.targetAccountId, t.id),
]);

export const followRequests = sqliteTable("follow_requests", followColumns, (t) => [
  uniqueIndex("follow_requests_pair").on(t.accountId, t.targetAccountId),
  index("follow_requests_target").on(t.targetAccountId, t.id),
]);

export const markers = sqliteTable(
  "markers",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    timeline: text("timeline").notNull(),
    lastReadId: text("last_read_id").notNull(),
    version: integer("version").notNull().default(0),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.timeline] })],
);

export type AccountRow = typeof accounts.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type ApplicationRow = typeof applications.$inferSelect;
export type AccessTokenRow = typeof accessTokens.$inferSelect;

/** Server-wide values made once and kept: the signing secret, the VAPID key pair. */
export const instanceSettings = sqliteTable("instance_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
