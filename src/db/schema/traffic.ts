import { integer, sqliteTable } from "drizzle-orm/sqlite-core";

/**
 * Federation's traffic by the hour, for the admin pages' health chart: delivery attempts (and
 * how many of them failed) and activities received. Counted in memory and written at most a
 * minute late (src/services/admin/traffic.ts); rows older than a week are dropped.
 */
export const federationTraffic = sqliteTable("federation_traffic", {
  /** The hour's start, ms since the epoch (UTC). */
  hour: integer("hour").primaryKey(),
  attempted: integer("attempted").notNull().default(0),
  failed: integer("failed").notNull().default(0),
  received: integer("received").notNull().default(0),
});

export type FederationTrafficRow = typeof federationTraffic.$inferSelect;
