import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";

// ActivityPub: the local accounts' key pairs, and Fedify's cache and queue.

/**
 * A local account's ActivityPub key pairs (RSA for draft-cavage signatures, Ed25519 for
 * object proofs), made once on first need. Private keys are JWK and never leave the server.
 */
export const accountKeys = sqliteTable(
  "account_keys",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** "RSASSA-PKCS1-v1_5" or "Ed25519". */
    algorithm: text("algorithm").notNull(),
    publicKey: text("public_key").notNull(),
    privateKey: text("private_key").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.algorithm] })],
);

/** Fedify's key-value cache (remote documents, idempotence of inbox activities). Values are JSON. */
export const fedifyKv = sqliteTable(
  "fedify_kv",
  {
    /** JSON array of the key's parts. */
    key: text("key").primaryKey(),
    value: text("value").notNull(),
    /** Epoch ms; null never expires. */
    expiresAt: integer("expires_at"),
  },
  (t) => [index("fedify_kv_expires").on(t.expiresAt)],
);

/** Fedify's message queue (outgoing deliveries, incoming activities): survives restarts. */
export const fedifyMessages = sqliteTable(
  "fedify_messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** JSON of the message. */
    message: text("message").notNull(),
    /** Epoch ms before which the message is not handed out. */
    runAt: integer("run_at").notNull(),
    /** Messages of one ordering key are handled one at a time, in order. */
    orderingKey: text("ordering_key"),
    /** Epoch ms until which a worker holds the message; past it, a crashed worker's message is handed out again. */
    lockedUntil: integer("locked_until"),
    /**
     * The worker holding the message (PostgreSQL, several processes: src/federation/pg-queue.ts),
     * so that a worker starting again frees its own earlier life's messages and no other's.
     */
    lockedBy: text("locked_by"),
    createdAt: integer("created_at").notNull(),
  },
  // ordering_key, id: a claim looks for an earlier message of the same key; without this index
  // that scan read every delayed retry (8–9 ms a claim behind 5,000 of them, 0.1 ms with it).
  (t) => [index("fedify_messages_run_at").on(t.runAt, t.id), index("fedify_messages_ordering_key").on(t.orderingKey, t.id)],
);

export type AccountKeyRow = typeof accountKeys.$inferSelect;

/**
 * Domains the admin suspended (`rookery domains block`, Mastodon's DomainBlock with severity
 * suspend): nothing is taken from them, delivered to them or fetched from them. A rule covers
 * the domain and its subdomains.
 */
export const domainBlocks = sqliteTable("domain_blocks", {
  id: integer("id").primaryKey(),
  /** Normalized: lower case, IDNA (punycode), no port. */
  domain: text("domain").notNull().unique(),
  createdAt: integer("created_at").notNull(),
});

/**
 * Domains federated with under WHITELIST_MODE (`rookery domains allow`, Mastodon's DomainAllow
 * of LIMITED_FEDERATION_MODE): with it on, any other domain is treated as blocked. A rule
 * covers that domain exactly.
 */
export const domainAllows = sqliteTable("domain_allows", {
  id: integer("id").primaryKey(),
  /** Normalized as in domain_blocks. */
  domain: text("domain").notNull().unique(),
  createdAt: integer("created_at").notNull(),
});

/**
 * Relays this server subscribed to (`rookery relays add`), Mastodon's Relay with the LitePub
 * kind beside it. The instance actor follows each: a Mastodon relay (`kind` "mastodon", `url`
 * its inbox) is sent Follow of the Public collection and forwards the signed Creates of its
 * other subscribers; a LitePub relay (`kind` "litepub", `url` its actor) is followed as an
 * actor and Announces what it carries, fetched from its origin. Accepted relays are sent the
 * local public statuses.
 */
export const relays = sqliteTable("relays", {
  id: integer("id").primaryKey(),
  /** As the operator named it, normalized: the inbox (mastodon) or the actor (litepub). */
  url: text("url").notNull().unique(),
  /** "mastodon" or "litepub". */
  kind: text("kind").notNull(),
  /** Where it is delivered to. */
  inboxUrl: text("inbox_url").notNull(),
  /** The relay's actor: known from the start for LitePub, from its Accept for a Mastodon relay. */
  actorUri: text("actor_uri"),
  /** "pending" (Follow sent), "accepted" or "refused" (its answer). */
  state: text("state").notNull(),
  /** The IRI of the Follow sent: its Accept or Reject names it. */
  followActivityId: text("follow_activity_id").notNull(),
  createdAt: integer("created_at").notNull(),
  /** When the state last changed. */
  stateChangedAt: integer("state_changed_at").notNull(),
  /** What it brought: statuses stored through it, and when the last one came (epoch ms). */
  receivedCount: integer("received_count").notNull().default(0),
  lastActivityAt: integer("last_activity_at"),
});

export type RelayRow = typeof relays.$inferSelect;
