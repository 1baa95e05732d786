import { defineConfig } from "drizzle-kit";

// PostgreSQL (DATABASE_URL, docs/scaling.md): its schema is generated from the SQLite one by
// scripts/db/pg-schema.ts, and its migrations are made from that by this config
// (`bun run db:generate` runs both). migrations-pg/ starts at a baseline of the whole schema as
// it was at SQLite's 0041: SQLite's data-only migrations (0026, 0027, 0034) clean rows an older
// Rookery stored, and a PostgreSQL database is always made fresh or copied from a migrated one.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema-pg/index.ts",
  out: "./migrations-pg",
});
