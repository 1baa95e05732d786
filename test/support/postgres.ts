import { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import { migrate } from "drizzle-orm/bun-sql/migrator";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A throwaway PostgreSQL for the tests: one cluster per `bun test` process (shared by its module
 * registries: see sharedFile), started by the first
 * test that asks for a database and stopped when the process exits, in a temporary directory
 * on a free loopback port, with fsync off (nothing in it outlives the run). Every test gets its
 * own database, copied from a template migrated once with migrations-pg/ (82 ms a copy, against
 * 300 ms to empty 71 tables: research31.md §2).
 *
 * Debian's package (`apt-get install postgresql`) is all it needs; `npm test` installs it (scripts/test-services.sh). The
 * tests that need it skip where it is missing (a developer's machine), but not under `.ci/run`,
 * which sets ROOKERY_REQUIRE_POSTGRES: there a missing PostgreSQL fails them instead.
 *
 * Queries go through Bun's own client (Bun.SQL): an int8 column comes back from a raw query as
 * a string (drizzle's bigint columns in mode "number" convert it).
 */

/** The newest installed server's bin directory (`ls -d /usr/lib/postgresql/*\/bin | sort -V | tail -1`). */
export function postgresBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  const newest = versions.at(-1);
  return newest ? join(root, newest, "bin") : null;
}

export const postgresRequired = process.env.ROOKERY_REQUIRE_POSTGRES === "1";
/** Whether the PostgreSQL tests run: test.skipIf(!postgresAvailable). */
export const postgresAvailable = postgresBin() !== null || postgresRequired;

const MIGRATIONS = join(import.meta.dir, "..", "..", "migrations-pg");
const TEMPLATE = "rookery_template";
const SUPERUSER = "rookery";

export interface PgCluster {
  port: number;
  dir: string;
  /** A connection URL to one of its databases. */
  url(database: string): string;
}

export interface PgDatabase {
  name: string;
  url: string;
  /** Closes the connections it gave and drops the database. */
  drop(): Promise<void>;
}

let cluster: Promise<PgCluster> | null = null;
let made = 0;

/**
 * This process's cluster, as the first module registry that started it wrote it down (a file
 * named by the pid, beside the clusters' directories: `<port> <dir>`): `bun test --isolate` (and
 * `--parallel` without `--no-isolate`) gives every file a fresh global object, module registry
 * and copy of process.env in the same process, and each file started a cluster of its own that
 * lived until the process ended. The file goes with the cluster (the exit handler, the watchdog).
 */
const sharedFile = () => join(tmpdir(), `rookery-pg-cluster-${process.pid}`);

function clusterOfThisProcess(): Promise<PgCluster> {
  const [port, dir] = existsSync(sharedFile()) ? readFileSync(sharedFile(), "utf8").split(" ") : [];
  if (port && dir && existsSync(join(dir, "data"))) return Promise.resolve(clusterAt(Number(port), dir));
  return startCluster().then((c) => {
    writeFileSync(sharedFile(), `${c.port} ${c.dir}`);
    return c;
  });
}

const clusterAt = (port: number, dir: string): PgCluster => ({ port, dir, url: (database) => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}` });

/** A fresh database with the whole schema (migrations-pg applied) and no rows; `empty`: not even the schema. */
export async function freshPgDatabase(options: { empty?: boolean } = {}): Promise<PgDatabase> {
  const c = await (cluster ??= clusterOfThisProcess());
  // The registry's count and a random part: another registry of this process counts from 1 too.
  const name = `rookery_test_${process.pid}_${++made}_${Math.random().toString(36).slice(2, 8)}`;
  await admin(c, async (sql) => {
    // FILE_COPY copies the template's files instead of writing it through the WAL: faster here.
    const [{ v }] = await sql`SELECT current_setting('server_version_num')::int AS v`;
    const template = options.empty ? "template0" : TEMPLATE;
    await sql.unsafe(`CREATE DATABASE "${name}" TEMPLATE ${template}${v >= 150000 ? " STRATEGY FILE_COPY" : ""}`);
  });
  return {
    name,
    url: c.url(name),
    drop: () => admin(c, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  };
}

async function admin<T>(c: PgCluster, work: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(c.url("postgres"), { max: 1 });
  try {
    return await work(sql);
  } finally {
    await sql.close();
  }
}

/** Who runs the cluster: initdb refuses root, so as root it is the package's user (or nobody). */
function runAs(): string[] {
  if (process.getuid?.() !== 0) return [];
  const hasUser = Bun.spawnSync(["id", "-u", "postgres"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  return hasUser ? ["runuser", "-u", "postgres", "--"] : ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"];
}

function run(cmd: string[], what: string) {
  const done = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(`${what} failed (${done.exitCode}): ${done.stderr.toString() || done.stdout.toString()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startCluster(): Promise<PgCluster> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install -y postgresql): the PostgreSQL tests need it under ROOKERY_REQUIRE_POSTGRES=1");
  const as = runAs();
  const dir = mkdtempSync(join(tmpdir(), "rookery-pg-"));
  const data = join(dir, "data");
  if (as.length > 0) run(["chown", as[2] === "postgres" ? "postgres" : "nobody:nogroup", dir], "chown of the cluster's directory");
  run([...as, join(bin, "initdb"), "-D", data, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"], "initdb");

  let port = 0;
  const stop = () => {
    Bun.spawnSync([...as, join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop"], { stdout: "ignore", stderr: "ignore" });
    rmSync(dir, { recursive: true, force: true });
    rmSync(sharedFile(), { force: true });
  };
  process.once("exit", stop);
  // A port is free when asked and may be taken before the server binds it: then try another.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
    const started = Bun.spawnSync([...as, join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "server.log"), "-w", "-o", options, "start"], { stdout: "pipe", stderr: "pipe" });
    if (started.exitCode === 0) break;
    if (attempt === 3) {
      const log = existsSync(join(dir, "server.log")) ? await Bun.file(join(dir, "server.log")).text() : "";
      stop();
      throw new Error(`PostgreSQL did not start: ${started.stderr.toString()}\n${log}`);
    }
  }
  // If this process is killed (no exit handlers run), the cluster goes with it: the watchdog
  // stops it once the process is gone, and itself ends once the cluster is stopped.
  const pgCtl = [...as, join(bin, "pg_ctl")].map((a) => `'${a}'`).join(" ");
  // Run in the background of a shell that exits at once: not this process's child, so that
  // `bun test --isolate`, which ends what a file left running when the file ends, leaves it to
  // watch over the cluster the process's later files share.
  const watchdog = `while kill -0 ${process.pid} 2>/dev/null && [ -d '${data}' ]; do sleep 1; done; [ -d '${data}' ] && ${pgCtl} -D '${data}' -m immediate stop >/dev/null 2>&1; rm -rf '${dir}' '${sharedFile()}'`;
  Bun.spawn(["sh", "-c", `(${watchdog}) >/dev/null 2>&1 &`], {
    stdio: ["ignore", "ignore", "ignore"],
  }).unref();

  const c = clusterAt(port, dir);
  await admin(c, (sql) => sql.unsafe(`CREATE DATABASE ${TEMPLATE}`));
  const client = new SQL(c.url(TEMPLATE), { max: 1 });
  try {
    await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS });
  } finally {
    await client.close();
  }
  return c;
}

/**
 * A fresh database with a Bun.SQL client of `max` connections on it; `cleanups` (run by the
 * test file's afterEach) closes the client and drops the database.
 */
export async function pgDatabaseWithClient(cleanups: (() => Promise<void> | void)[], max: number): Promise<{ url: string; sql: SQL }> {
  const db = await freshPgDatabase();
  cleanups.push(() => db.drop());
  const sql = new SQL(db.url, { max });
  cleanups.push(() => sql.close());
  return { url: db.url, sql };
}

/**
 * A fresh database and a small pool of its own (as another process has), both closed by
 * `cleanups` (the test file's afterEach list): for the tests of what processes share.
 */
export async function freshPgDatabaseWithPool(cleanups: (() => Promise<void> | void)[]): Promise<{ url: string; sql: SQL }> {
  const db = await freshPgDatabase();
  cleanups.push(() => db.drop());
  const sql = new SQL(db.url, { max: 2 });
  cleanups.push(() => sql.close());
  return { url: db.url, sql };
}
