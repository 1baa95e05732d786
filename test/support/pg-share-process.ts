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
 * - `shared <due ms> <count> <cancel key>`: a wheel with claims that shares its timers with the
 *   other processes' (pg-timer-relay.ts): it sets `scheduled:0` to `scheduled:<count-1>` due at
 *   <due ms>, drops <cancel key>, prints `ready` once the others were told (and it listens), then
 *   runs what it wins of its timers and of those it hears, printing `done <key>` after recording it.
 * - `media`: claims the oldest waiting image job of media_attachments (pg-media-claims.ts), prints
 *   `claimed <id>` (or `none`), and holds it, never renewing the lease, until killed: a process
 *   stopped dead in the middle of a job.
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
} else if (what === "shared") {
  const [due, count, cancel] = args;
  const { PgTimerClaims } = await import("../../src/infra/pg-timer-claims.ts");
  const { PgTimerRelay } = await import("../../src/infra/pg-timer-relay.ts");
  const { PgListener } = await import("../../src/infra/pg-listener.ts");
  const { TimerWheel } = await import("../../src/infra/timer-wheel.ts");
  const clock = new SystemClock();
  // Outside any transaction: told at once, as the port's afterCommit does there.
  const relay = new PgTimerRelay({ sql, listener: new PgListener(url!), origin: name!, afterCommit: (task) => task() });
  const wheel = new TimerWheel(clock, new PgTimerClaims({ sql, clock, holder: name, leaseMs: Number(lease) }), relay);
  wheel.handle("scheduled", async (id) => {
    await sql`INSERT INTO runs (key, by) VALUES (${`scheduled:${id}`}, ${name})`;
    say(`done scheduled:${id}`);
  });
  await relay.start(() => {});
  for (let i = 0; i < Number(count); i++) wheel.schedule("scheduled", i, Number(due));
  if (cancel?.startsWith("scheduled:")) wheel.cancel("scheduled", cancel.slice("scheduled:".length));
  await relay.published();
  wheel.start();
  say("ready");
  await new Promise(() => {});
} else if (what === "media") {
  const { PgMediaClaims } = await import("../../src/infra/pg-media-claims.ts");
  const id = await new PgMediaClaims({ sql, holder: name!, leaseMs: Number(lease) }).claim("image");
  say(id === null ? "none" : `claimed ${id}`);
  await new Promise(() => {});
}
