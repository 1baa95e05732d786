// The schema, by table family (src/db/schema/); drizzle-kit reads it from here (drizzle.config.ts).
export * from "./schema/accounts.ts";
export * from "./schema/auth.ts";
export * from "./schema/statuses.ts";
export * from "./schema/feeds.ts";
export * from "./schema/media.ts";
export * from "./schema/federation.ts";
export * from "./schema/admin.ts";
export * from "./schema/portability.ts";
export * from "./schema/archive.ts";
export * from "./schema/quotes.ts";
export * from "./schema/backfills.ts";
export * from "./schema/tombstones.ts";
export * from "./schema/traffic.ts";
export * from "./schema/two-factor.ts";
export * from "./schema/shared-state.ts";
