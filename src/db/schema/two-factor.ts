import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";

// Two-factor sign-in (TOTP, with recovery codes) of local accounts: tables of their own, so that
// an account without it has no row and the users table stays as it is.

/**
 * An account's authenticator secret. The server must read it to check codes, so it cannot be a
 * hash: it is sealed (AES-256-GCM) under two-factor.key, a file beside the database, and a copy
 * of the database alone (a backup) gives no secret away. A row with no `enabled_at` is an
 * enrolment waiting for its first code.
 */
export const twoFactorSecrets = sqliteTable("two_factor_secrets", {
  accountId: integer("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  sealedSecret: text("sealed_secret").notNull(),
  enabledAt: integer("enabled_at"),
  /** The last time step a code was accepted for: a code is good once (no replay within its window). */
  lastUsedStep: integer("last_used_step"),
  createdAt: integer("created_at").notNull(),
});

/** The ten recovery codes of an account with two-factor, as SHA-256 digests; each signs in once. */
export const twoFactorRecoveryCodes = sqliteTable(
  "two_factor_recovery_codes",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    codeDigest: text("code_digest").notNull(),
    usedAt: integer("used_at"),
  },
  // Its first column serves the lookups by account too.
  (t) => [uniqueIndex("two_factor_recovery_codes_digest").on(t.accountId, t.codeDigest)],
);
