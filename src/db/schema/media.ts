import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";
import { statuses } from "./statuses.ts";

// Uploads, and statuses waiting to be published (scheduled, or behind an Idempotency-Key).

/**
 * Uploaded media. While `processing` is queued or in_progress the raw upload waits in
 * `upload_file` (the queue's persistent job); `file` is the processed original.
 */
export const mediaAttachments = sqliteTable(
  "media_attachments",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    statusId: integer("status_id").references(() => statuses.id, { onDelete: "set null" }),
    /** Held by a scheduled status until it is published. */
    scheduledStatusId: integer("scheduled_status_id").references(() => scheduledStatuses.id, { onDelete: "set null" }),
    /** Order among the status's attachments. */
    position: integer("position").notNull().default(0),
    /** image | gifv | video | audio | unknown */
    type: text("type").notNull(),
    /** queued | in_progress | complete | failed */
    processing: text("processing").notNull(),
    uploadFile: text("upload_file"),
    file: text("file"),
    preview: text("preview"),
    /** A custom thumbnail stands in for the generated preview. */
    thumbnail: text("thumbnail"),
    /** JSON: {original?, small?, focus?} as the Attachment entity shows it. */
    meta: text("meta").notNull().default("{}"),
    description: text("description"),
    blurhash: text("blurhash"),
    createdAt: integer("created_at").notNull(),
    /** When a deleted status let go of it: the start of its redraft grace period. */
    detachedAt: integer("detached_at"),
    /** Random key of the attachment's short page URL (`text_url`), as Mastodon gives local media. */
    shortcode: text("shortcode"),
    /** Media of remote statuses: its own server's URL; `file` and `preview` hold a copy only under CACHE_REMOTE_MEDIA. */
    remoteUrl: text("remote_url"),
    /**
     * On PostgreSQL, the process processing it and until when (ms, PostgreSQL's clock): a lease,
     * renewed while the job runs, after which another process takes the job (docs/scaling.md).
     * SQLite's one process leaves them empty.
     */
    claimedBy: text("claimed_by"),
    claimedUntil: integer("claimed_until"),
  },
  (t) => [
    index("media_attachments_status").on(t.statusId, t.position),
    uniqueIndex("media_attachments_shortcode").on(t.shortcode),
    index("media_attachments_account").on(t.accountId, t.id),
    index("media_attachments_unattached").on(t.createdAt).where(sql`status_id IS NULL`),
    index("media_attachments_scheduled").on(t.scheduledStatusId),
    // The queue's jobs: what every process's claim (and a start's restore) looks for.
    index("media_attachments_unprocessed").on(t.id).where(sql`processing IN ('queued', 'in_progress')`),
  ],
);

export type MediaRow = typeof mediaAttachments.$inferSelect;

/** Statuses to publish later; `params` is the ScheduledStatus entity's params, as Mastodon keeps them. */
export const scheduledStatuses = sqliteTable(
  "scheduled_statuses",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    scheduledAt: integer("scheduled_at").notNull(),
    /** What the client sent, for display (the entity's `params`). */
    params: text("params").notNull(),
    /** The same, read and checked: what gets published. */
    input: text("input").notNull(),
    applicationId: integer("application_id"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("scheduled_statuses_account").on(t.accountId, t.id), index("scheduled_statuses_due").on(t.scheduledAt)],
);

export type ScheduledStatusRow = typeof scheduledStatuses.$inferSelect;

/**
 * Idempotency-Keys of POST /api/v1/statuses: what the first request with a key made, kept
 * for an hour. Written in the transaction that makes the status, so a retry after a
 * restart still finds it. Ids are plain integers: a status deleted since answers 404.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** Exactly one of the two is set. */
    statusId: integer("status_id"),
    scheduledStatusId: integer("scheduled_status_id"),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_expiry").on(t.expiresAt)],
);

/**
 * Link previews (Mastodon's PreviewCard): the OpenGraph of a page linked from statuses, fetched
 * once per URL in the background and shared by every status that links it. A failed fetch is
 * kept too (title empty, `failedAt` set), so that it is not tried on every post of that link.
 */
export const previewCards = sqliteTable("preview_cards", {
  id: integer("id").primaryKey(),
  /** The link as written in statuses (before redirects). */
  url: text("url").notNull().unique(),
  /** JSON of the PreviewCard entity as it is shown (url, title, description, image...). */
  card: text("card"),
  fetchedAt: integer("fetched_at").notNull(),
  failedAt: integer("failed_at"),
});

export type PreviewCardRow = typeof previewCards.$inferSelect;

