import { integer } from "drizzle-orm/sqlite-core";

// Times are integer milliseconds since the epoch; ids come from src/ids.ts.
export const bool = (name: string) => integer(name, { mode: "boolean" });
