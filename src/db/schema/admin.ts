import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";
import { bool } from "./columns.ts";

// What the operator keeps with the CLI and the API shows: the server's rules, custom emojis
// and announcements; and what users send the operator: reports.

/** The server's rules (Mastodon's Rule), in `position` order; shown by the instance endpoints. */
export const instanceRules = sqliteTable(
  "instance_rules",
  {
    id: integer("id").primaryKey(),
    text: text("text").notNull(),
    hint: text("hint").notNull().default(""),
    position: integer("position").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("instance_rules_position").on(t.position, t.id)],
);

export type InstanceRuleRow = typeof instanceRules.$inferSelect;

/**
 * Reports of accounts to this server's operator (Mastodon's Report), read and resolved with
 * the CLI. A report of a remote account sent on to its server (forward) is `forwarded`.
 */
export const reports = sqliteTable(
  "reports",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    targetAccountId: integer("target_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** JSON [status id] of the reported account's statuses. */
    statusIds: text("status_ids").notNull().default("[]"),
    /** JSON [rule id] (category violation), or null. */
    ruleIds: text("rule_ids"),
    comment: text("comment").notNull().default(""),
    /** other | spam | legal | violation */
    category: text("category").notNull(),
    forwarded: bool("forwarded").notNull().default(false),
    /** The Flag's IRI, as Mastodon mints one for every local report. */
    uri: text("uri").notNull(),
    actionTakenAt: integer("action_taken_at"),
    /** The staff member who resolved it (Mastodon's action_taken_by_account), and the one handling it. */
    actionTakenByAccountId: integer("action_taken_by_account_id").references(() => accounts.id, { onDelete: "set null" }),
    assignedAccountId: integer("assigned_account_id").references(() => accounts.id, { onDelete: "set null" }),
    createdAt: integer("created_at").notNull(),
    /** Last change by staff (resolve, reopen, assign); null: as created. */
    updatedAt: integer("updated_at"),
  },
  (t) => [index("reports_target").on(t.targetAccountId), index("reports_unresolved").on(t.id).where(sql`action_taken_at IS NULL`)],
);

export type ReportRow = typeof reports.$inferSelect;

/**
 * This server's custom emojis (Mastodon's CustomEmoji with domain null), added with the CLI:
 * the image as uploaded and a static PNG of its first frame, both in media storage.
 */
export const customEmojis = sqliteTable(
  "custom_emojis",
  {
    id: integer("id").primaryKey(),
    /** As written between colons; case matters, as in Mastodon. */
    shortcode: text("shortcode").notNull(),
    imageFile: text("image_file").notNull(),
    staticFile: text("static_file").notNull(),
    category: text("category"),
    visibleInPicker: bool("visible_in_picker").notNull().default(true),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("custom_emojis_shortcode").on(t.shortcode)],
);

export type CustomEmojiRow = typeof customEmojis.$inferSelect;

/**
 * Announcements to every user (Mastodon's Announcement), made with the CLI and published at
 * once; `startsAt`/`endsAt` are the time of what they announce (dates when `allDay`), and an
 * announcement past its end is no longer shown.
 */
export const announcements = sqliteTable("announcements", {
  id: integer("id").primaryKey(),
  /** Plain text; rendered as HTML (links, mentions, hashtags) when shown. */
  text: text("text").notNull(),
  startsAt: integer("starts_at"),
  endsAt: integer("ends_at"),
  allDay: bool("all_day").notNull().default(false),
  publishedAt: integer("published_at").notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export type AnnouncementRow = typeof announcements.$inferSelect;

/** Announcements a user dismissed (Mastodon's AnnouncementMute): shown with `read: true`. */
export const announcementDismissals = sqliteTable(
  "announcement_dismissals",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    announcementId: integer("announcement_id")
      .notNull()
      .references(() => announcements.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.announcementId] })],
);

/** Reactions to announcements: a unicode emoji or a shortcode of this server's custom emojis. */
export const announcementReactions = sqliteTable(
  "announcement_reactions",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    announcementId: integer("announcement_id")
      .notNull()
      .references(() => announcements.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("announcement_reactions_account_name").on(t.announcementId, t.accountId, t.name)],
);

/**
 * What staff did, for the audit log (Mastodon's Admin::ActionLog): who (`account_id`), the
 * action (`suspend`, `resolve`, `create`...), on what (`target_type` Account | Report |
 * DomainBlock | ..., `target_id`), and a human line naming the target as it was then.
 */
export const adminActions = sqliteTable(
  "admin_actions",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id").references(() => accounts.id, { onDelete: "set null" }),
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id"),
    summary: text("summary").notNull().default(""),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("admin_actions_created").on(t.id)],
);

export type AdminActionRow = typeof adminActions.$inferSelect;
