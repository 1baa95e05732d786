import { SQL } from "bun";
import { SystemClock } from "../../src/clock.ts";
import { IdWorkerLease } from "../../src/infra/pg-id-worker.ts";

/**
 * A second Rookery-like process for test/scaling/: `bun pg-share-process.ts <what> <database url> <name> <lease ms> [args]`.
 * - `id <workers>`: leases an id worker number, prints `worker <n>`, and lives until killed.
 * - `timers <due ms> <count> <hang key>`: a timer wheel with claims, holding timers `job:0` to
 *   `job:<count-1>`, all due at <due ms> (epoch). Prints `ready`, then for each job it runs
 *   `start <key>` and `done <key>`; the job <hang key> starts and never finishes (until killed).
 *   A job's run is recorded in the table `runs` (made by the test) when it finishes.
 */
const [what, url, name, lease, ...args] = process.argv.slice(2);
const sql = new SQL(url!, { max: 2 });
const say = (line: string) => process.stdout.write(`${line}\n`);

if (what === "id") {
  const claimed = await IdWorkerLease.claim({ sql, workers: Number(args[0]), holder: name, leaseMs: Number(lease) });
  say(`worker ${claimed.idWorker.worker}`);
  await new Promise(() => {});
} else if (what === "timers") {
  const [due, count, hang] = args;
  const { PgTimerClaims } = await import("../../src/infra/pg-timer-claims.ts");
  const { TimerWheel } = await import("../../src/infra/timer-wheel.ts");
  const clock = new SystemClock();
  const wheel = new TimerWheel(clock, new PgTimerClaims({ sql, clock, holder: name, leaseMs: Number(lease) }));
  wheel.handle("job", async (id) => {
    const key = `job:${id}`;
    say(`start ${key}`);
    if (key === hang) await new Promise(() => {});
    await sql`INSERT INTO runs (key, by) VALUES (${key}, ${name})`;
    say(`done ${key}`);
  });
  for (let i = 0; i < Number(count); i++) wheel.schedule("job", i, Number(due));
  wheel.start();
  say("ready");
  await new Promise(() => {});
}
