import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { bool } from "./columns.ts";

// Accounts and the relationships between them: follows, requests, blocks, mutes.

/**
 * The public profile, of local accounts (domain null) and of remote actors seen through
 * federation (domain set, keyed by their actor IRI in uri). A username is unique per domain.
 */
export const accounts = sqliteTable(
  "accounts",
  {
    id: integer("id").primaryKey(),
    username: text("username").notNull(),
    displayName: text("display_name").notNull().default(""),
    /**
     * The note as the user wrote it, and as HTML rendered once when it was saved. A remote
     * account has no note of ours: note_html is its actor's summary, cleaned (sanitizeRemoteHtml).
     */
    note: text("note").notNull().default(""),
    noteHtml: text("note_html").notNull().default(""),
    /** JSON: [{name, value, valueHtml, verifiedAt}]; a remote account's value is its cleaned HTML, as valueHtml. */
    fields: text("fields").notNull().default("[]"),
    /** JSON [{shortcode, url, static_url, visible_in_picker}], the custom emojis of the name, note and fields (a local account's found when its profile is saved). */
    emojis: text("emojis").notNull().default("[]"),
    locked: bool("locked").notNull().default(false),
    bot: bool("bot").notNull().default(false),
    discoverable: bool("discoverable").notNull().default(true),
    indexable: bool("indexable").notNull().default(true),
    hideCollections: bool("hide_collections").notNull().default(false),
    avatarFile: text("avatar_file"),
    headerFile: text("header_file"),
    /** Remote accounts only: their avatar and header, shown at their own server's URLs (not downloaded). */
    avatarRemoteUrl: text("avatar_remote_url"),
    headerRemoteUrl: text("header_remote_url"),
    createdAt: integer("created_at").notNull(),
    followersCount: integer("followers_count").notNull().default(0),
    followingCount: integer("following_count").notNull().default(0),
    statusesCount: integer("statuses_count").notNull().default(0),
    lastStatusAt: integer("last_status_at"),
    /** Remote accounts only: the actor's IRI, its host (with port) as in acct, and its endpoints. */
    uri: text("uri"),
    domain: text("domain"),
    url: text("url"),
    inboxUrl: text("inbox_url"),
    sharedInboxUrl: text("shared_inbox_url"),
    followersUrl: text("followers_url"),
    /** When the actor document was last fetched (epoch ms). */
    fetchedAt: integer("fetched_at"),
    /**
     * Remote accounts only: JSON, the IRIs of the keys its actor document named (publicKey,
     * assertionMethod). A Delete of an actor whose key is gone is believed only for one of these.
     */
    keyIds: text("key_ids").notNull().default("[]"),
    /** The account it moved to (a remote account's Move, or a local account's): shown as `moved`. */
    movedToAccountId: integer("moved_to_account_id"),
    /** Local accounts only: when it last moved (epoch ms); Mastodon's cooldown before another move counts from it. */
    movedAt: integer("moved_at"),
    /**
     * Local accounts only: JSON, the actor IRIs it says it also is (its actor's alsoKnownAs): the
     * accounts it comes from, whose Move to it their followers' servers believe.
     */
    alsoKnownAs: text("also_known_as").notNull().default("[]"),
    /**
     * Moderation by this server's staff (Mastodon's suspended_at / silenced_at): a suspended
     * account is hidden and cannot sign in or federate; a limited (silenced) one is kept out of
     * public timelines and search for those who do not follow it. Null: not.
     */
    suspendedAt: integer("suspended_at"),
    silencedAt: integer("silenced_at"),
  },
  (t) => [
    uniqueIndex("accounts_username_domain_lower").on(sql`lower(${t.username})`, sql`lower(coalesce(${t.domain}, ''))`),
    uniqueIndex("accounts_uri").on(t.uri),
  ],
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
    /** Staff role (Mastodon's UserRole, simplified): user | moderator | admin | owner. */
    role: text("role").notNull().default("user"),
    /** False while a sign-up under REGISTRATIONS=approval waits for staff; such a user cannot sign in. */
    approved: bool("approved").notNull().default(true),
    /** Why the person asked to join (sign-up `reason`), shown to staff with the request. */
    signUpReason: text("sign_up_reason"),
    /** The invite link the account signed up with (Mastodon's users.invite_id); null when none, or once it is deleted. */
    inviteId: integer("invite_id").references((): AnySQLiteColumn => invites.id, { onDelete: "set null" }),
    /** The quote_approval_policy new statuses get when none is given: public | followers | nobody. */
    defaultQuotePolicy: text("default_quote_policy").notNull().default("public"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_lower").on(sql`lower(${t.email})`)],
);

/**
 * Invite links (Mastodon's Invite): made by a user, they let their holder sign up whatever
 * REGISTRATIONS says, approved at once, until they expire or are used up. Only the code's
 * digest is kept, so a link is shown once, when it is made. Revoking one expires it now, as
 * Mastodon does.
 */
export const invites = sqliteTable(
  "invites",
  {
    id: integer("id").primaryKey(),
    /** sha256 of the code in the link (src/auth/secrets.ts digest). */
    codeHash: text("code_hash").notNull(),
    /** Who made it: the invite works only while this user may sign in. */
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Null: any number of sign-ups. */
    maxUses: integer("max_uses"),
    uses: integer("uses").notNull().default(0),
    /** Epoch ms; null: never. */
    expiresAt: integer("expires_at"),
    /** The maker's note to themselves (whom it was for), shown in the list; never to the invitee. */
    comment: text("comment"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("invites_code_hash").on(t.codeHash), index("invites_account").on(t.accountId)],
);

export type InviteRow = typeof invites.$inferSelect;

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

export const blocks = sqliteTable(
  "blocks",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    targetAccountId: integer("target_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("blocks_pair").on(t.accountId, t.targetAccountId), index("blocks_target").on(t.targetAccountId)],
);

export const mutes = sqliteTable(
  "mutes",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    targetAccountId: integer("target_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    hideNotifications: bool("hide_notifications").notNull().default(true),
    expiresAt: integer("expires_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("mutes_pair").on(t.accountId, t.targetAccountId)],
);

/**
 * Domains an account hides from itself (Mastodon's AccountDomainBlock, POST
 * /api/v1/domain_blocks): their statuses leave its timelines and notifications, its followers
 * there are removed. A rule covers that domain exactly (an account's domain, port aside).
 */
export const accountDomainBlocks = sqliteTable(
  "account_domain_blocks",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Normalized: lower case, IDNA (punycode). */
    domain: text("domain").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("account_domain_blocks_pair").on(t.accountId, t.domain), index("account_domain_blocks_domain").on(t.domain)],
);

/**
 * Accounts an account endorses on its profile (Mastodon's AccountPin, POST
 * /api/v1/accounts/:id/pin): only accounts it follows, and an unfollow ends the endorsement.
 */
export const accountPins = sqliteTable(
  "account_pins",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    targetAccountId: integer("target_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("account_pins_pair").on(t.accountId, t.targetAccountId), index("account_pins_target").on(t.targetAccountId)],
);
