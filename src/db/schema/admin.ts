import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

// What the operator keeps with the CLI and the API shows: the server's rules.

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
