import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.ts";
import { DATABASE_FILE } from "../db/connection.ts";
import { shownUrl } from "../db/shown-url.ts";
import { settingGiven } from "../settings.ts";
import { CliFailure } from "./admin.ts";

// Every command says which data directory it works on, and a command that reads or changes a
// server's data refuses a directory without a database: run where DATA_DIR was not set, it
// would otherwise make an empty ./data there and report "No accounts yet.", which is true of
// that folder and of no server.

/** How the directory was chosen, for the operator who did not choose it. */
function origin(): string {
  return settingGiven("DATA_DIR") ? "from DATA_DIR" : "DATA_DIR is not set: ./data of the current folder";
}

/** The line every command writes to standard error (standard output stays the command's answer). */
export function dataDirNotice(config: Config): string {
  // On PostgreSQL the data directory still holds the key files (and the media on disk).
  const database = config.database.kind === "postgres" ? `, database ${shownUrl(config.database.url)} (from DATABASE_URL)` : "";
  return `rookery: data directory ${config.dataDir} (${origin()})${database}\n`;
}

/** Throws unless the data directory holds a database; `serve` and `migrate` make one, nothing else does. */
export function requireDatabase(config: Config): void {
  if (existsSync(join(config.dataDir, DATABASE_FILE))) return;
  const what = existsSync(config.dataDir) ? `no database in ${config.dataDir} (no ${DATABASE_FILE} there; ${origin()})` : `${config.dataDir} does not exist (${origin()})`;
  throw new CliFailure(`${what}: set DATA_DIR to the server's data directory, or run "rookery migrate" (or start the server) to make a new database there`);
}
