import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/connection.ts";
import type { DatabasePort } from "../../src/db/port.ts";
import { PostgresPort } from "../../src/db/postgres-port.ts";
import type { AccountRow } from "../../src/db/schema.ts";
import { freshPgDatabase, postgresAvailable } from "./postgres.ts";
import { startTestServices, type TestServices } from "./services.ts";

/**
 * The two databases a converted family's service is run on (issue 31), while the server itself
 * runs on SQLite only. Each arm has the services of a fresh SQLite database (`t`), for the
 * collaborators not yet converted (accounts, statuses, the tags' history), and the `port` the
 * family's service is built on: that same SQLite database, or a fresh PostgreSQL one. `mirror`
 * copies an account made in `t` into the port's database, where the family's rows refer to it.
 */
export interface PortArm {
  t: TestServices;
  port: DatabasePort;
  mirror(account: AccountRow): Promise<AccountRow>;
}

export const portArms = [
  { name: "SQLite", skip: false, open: () => open(false) },
  { name: "PostgreSQL", skip: !postgresAvailable, open: () => open(true) },
] as const;

const cleanups: (() => Promise<void>)[] = [];
/** Call from afterEach: closes what the arms opened. */
export async function closePortArms() {
  for (const c of cleanups.splice(0)) await c();
}

async function open(postgres: boolean): Promise<PortArm> {
  const t = await startTestServices();
  cleanups.push(async () => t.close());
  if (!postgres) return { t, port: t.database.port, mirror: async (a) => a };
  const database = await freshPgDatabase();
  const port = new PostgresPort(database.url, { max: 2 });
  cleanups.push(async () => (await port.close(), await database.drop()));
  return {
    t,
    port,
    async mirror(account) {
      await port.orm.insert(port.tables.accounts).values(account);
      return account;
    },
  };
}

/**
 * A bare port on a fresh database of either kind, without services, for code that takes only the
 * port (markers, federation's stores, announcements); closed by closePortArms.
 */
export async function freshSqlitePort(): Promise<DatabasePort> {
  const dir = mkdtempSync(join(tmpdir(), "rookery-port-"));
  const handle = openDatabase(dir);
  cleanups.push(async () => (handle.close(), rmSync(dir, { recursive: true, force: true })));
  return handle.port;
}

export async function freshPostgresPort(): Promise<DatabasePort> {
  const database = await freshPgDatabase();
  const port = new PostgresPort(database.url, { max: 2 });
  cleanups.push(async () => (await port.close(), await database.drop()));
  return port;
}
