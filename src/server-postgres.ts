import { SQL } from "bun";
import { hostname } from "node:os";
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { DatabasePort } from "./db/port.ts";
import { PostgresPort } from "./db/postgres-port.ts";
import { describePgError, migrateTarget, newestApplied, pgMigrations, shownUrl } from "./db/to-postgres/target.ts";
import { SetupError } from "./errors.ts";
import { IdWorkerLease } from "./infra/pg-id-worker.ts";
import { PgRateLimiter } from "./infra/pg-rate-limits.ts";
import { PgMediaClaims } from "./infra/pg-media-claims.ts";
import { PgTimerClaims, type TimerClaims } from "./infra/pg-timer-claims.ts";
import { log } from "./log.ts";
import type { OpenOptions, PortDatabase, SharedPieces } from "./server-database.ts";
import { PortIdempotencyGuard } from "./services/statuses/port-idempotency.ts";

// The server on PostgreSQL (DATABASE_URL), loaded by server-database.ts and server.ts only then.

/** The database at DATABASE_URL through the port, migrated first (the server and the commands, server-database.ts). */
export async function openPostgresPort(url: string, options: OpenOptions): Promise<PortDatabase> {
  const migrationsApplied = await migratePostgres(url, options.makes ?? false);
  const port = new PostgresPort(url);
  const sql = new SQL(url, { max: 4 });
  return {
    port,
    path: shownUrl(url),
    migrationsApplied,
    postgres: { url, sql },
    largestId: () => largestPgId(sql),
    async close() {
      await sql.close();
      await port.close();
    },
  };
}

/**
 * Brings the database to this executable's migrations-pg/ (as SQLite's are applied at start),
 * in one transaction under an advisory lock, so that processes starting together migrate once.
 * Refuses a database a newer Rookery migrated. Answers how many were applied.
 */
async function migratePostgres(url: string, makes: boolean): Promise<number> {
  const sql = new SQL(url, { max: 1, connectionTimeout: 10 });
  try {
    return await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended('rookery_migrations', 0))`;
      const applied = await newestApplied(tx);
      const known = pgMigrations();
      const newest = known[known.length - 1]!;
      if (applied === null && !makes) {
        throw new SetupError(`no Rookery database at ${shownUrl(url)} (DATABASE_URL; Rookery's migrations were never applied there): check the URL, or start the server (or run "rookery migrate") to make one there`);
      }
      if (applied !== null && applied.createdAt > newest.folderMillis) {
        throw new SetupError(`${shownUrl(url)} was migrated by a newer Rookery (${applied.count} migrations applied, this executable knows ${known.length}): start the newer executable`);
      }
      return (await migrateTarget(tx)).length;
    });
  } catch (e) {
    if (e instanceof SetupError) throw e;
    throw new SetupError(`cannot use ${shownUrl(url)}: ${describePgError(e)}`);
  } finally {
    await sql.close().catch(() => {});
  }
}

/** The largest id of the tables keyed by a bigint `id`, as largestId reads SQLite's. */
async function largestPgId(sql: SQL): Promise<number> {
  const tables: { name: string }[] = await sql`
    SELECT c.table_name AS name FROM information_schema.columns c
    JOIN information_schema.key_column_usage k ON k.table_schema = c.table_schema AND k.table_name = c.table_name AND k.column_name = c.column_name
    JOIN information_schema.table_constraints t ON t.constraint_name = k.constraint_name AND t.table_schema = k.table_schema AND t.constraint_type = 'PRIMARY KEY'
    WHERE c.table_schema = current_schema() AND c.column_name = 'id' AND c.data_type = 'bigint'`;
  if (tables.length === 0) return 0;
  const [row] = await sql.unsafe(`SELECT max(id)::text AS id FROM (${tables.map((t) => `SELECT max(id) AS id FROM "${t.name}"`).join(" UNION ALL ")}) AS ids`);
  return row?.id ? Number(row.id) : 0;
}

/** How many id worker numbers a process leases from when ID_WORKER is not given (docs/scaling.md). */
export const LEASED_ID_WORKERS = 16;

export async function sharePieces(postgres: { sql: SQL }, port: DatabasePort, clock: Clock, config: Config): Promise<SharedPieces> {
  const { sql } = postgres;
  // A renewal still under way when the stop gives the number back finds it gone: not a loss.
  let released = false;
  const lease = config.idWorkerGiven
    ? null
    : await IdWorkerLease.claim({
        sql,
        workers: LEASED_ID_WORKERS,
        // Another process holds the number now: both would make the same ids.
        onLost: () => {
          if (released) return;
          log("error", "id worker lease lost: stopping, as this process would make another's ids");
          process.exit(1);
        },
      });
  const idWorker = lease?.idWorker ?? config.idWorker;
  const holder = `${hostname()}:${process.pid}`;
  const claims = new PgTimerClaims({ sql, clock, holder });
  // The slot's name stays the same across restarts (a number is handed back at a clean stop).
  const worker = `${hostname()}:${idWorker.worker}/${idWorker.workers}`;
  return {
    state: {
      timerClaims: sharedTimersOnly(claims),
      idempotency: new PortIdempotencyGuard(port, clock),
      limiter: (buckets) => new PgRateLimiter(sql, clock, buckets),
      sweep: async () => void (await claims.sweep()),
      mediaClaims: new PgMediaClaims({ sql, holder: worker }),
    },
    queue: { sql, worker },
    idWorker,
    stop: async () => {
      released = true;
      await lease?.release().catch(() => {});
    },
  };
}

/** Stream keep-alives are each process's own, for its own connections: only the other timers are claimed. */
function sharedTimersOnly(claims: PgTimerClaims): TimerClaims {
  const own = (key: string) => key.startsWith("streaming:");
  return {
    renewEveryMs: claims.renewEveryMs,
    claim: (key, dueAt) => (own(key) ? Promise.resolve({ run: true, renew: async () => true }) : claims.claim(key, dueAt)),
    finish: (key, dueAt) => (own(key) ? Promise.resolve() : claims.finish(key, dueAt)),
  };
}
