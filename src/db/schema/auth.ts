import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";

// OAuth applications, tokens and codes, browser sessions, and the server's own secrets.

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
  /** The token the code was exchanged for: revoked if the code is ever presented again. */
  tokenId: integer("token_id"),
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
  /** What the browser said it was and where it signed in from, for the sessions page (Mastodon's SessionActivation). */
  userAgent: text("user_agent").notNull().default(""),
  ip: text("ip"),
});
export type ApplicationRow = typeof applications.$inferSelect;
export type AccessTokenRow = typeof accessTokens.$inferSelect;

/** Server-wide values made once and kept: the signing secret, the VAPID key pair. */
export const instanceSettings = sqliteTable("instance_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * Web Push subscriptions (Mastodon's Web::PushSubscription): one per access token, replaced by a
 * new POST and gone with the token. `alerts` is JSON of the alert types asked for (as given);
 * `policy` is all | followed | follower | none.
 */
export const pushSubscriptions = sqliteTable(
  "push_subscriptions",
  {
    id: integer("id").primaryKey(),
    accessTokenId: integer("access_token_id")
      .notNull()
      .unique()
      .references(() => accessTokens.id, { onDelete: "cascade" }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    endpoint: text("endpoint").notNull(),
    keyP256dh: text("key_p256dh").notNull(),
    keyAuth: text("key_auth").notNull(),
    alerts: text("alerts").notNull().default("{}"),
    policy: text("policy").notNull().default("all"),
    /** The client asked for the standard (RFC 8291 aes128gcm) encoding: Mastodon 4.4's `standard`. */
    standard: integer("standard", { mode: "boolean" }).notNull().default(false),
    /**
     * The subscribing access token, sealed (AES-GCM) under a key kept in a file beside the
     * database, never in it: Mastodon's payload carries the token (clients tell their accounts
     * apart by it), and tokens are otherwise stored only as hashes. Null for subscriptions made
     * before this column: their pushes go without `access_token`.
     */
    sealedToken: text("sealed_token"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("push_subscriptions_account").on(t.accountId)],
);

export type PushSubscriptionRow = typeof pushSubscriptions.$inferSelect;

/**
 * Pushes waiting to be sent: one per (subscription, notification), written in the transaction
 * that made the notification so that a crash loses none; the timer wheel sends each at
 * `due_at`, and a failed attempt moves it later until Mastodon's five retries are spent.
 */
export const pushDeliveries = sqliteTable(
  "push_deliveries",
  {
    id: integer("id").primaryKey(),
    subscriptionId: integer("subscription_id")
      .notNull()
      .references(() => pushSubscriptions.id, { onDelete: "cascade" }),
    notificationId: integer("notification_id").notNull(),
    attempts: integer("attempts").notNull().default(0),
    dueAt: integer("due_at").notNull(),
  },
  (t) => [index("push_deliveries_subscription").on(t.subscriptionId)],
);

export type PushDeliveryRow = typeof pushDeliveries.$inferSelect;

