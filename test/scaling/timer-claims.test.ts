import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { SystemClock } from "../../src/clock.ts";
import { PgTimerClaims } from "../../src/infra/pg-timer-claims.ts";
import { TimerWheel } from "../../src/infra/timer-wheel.ts";
import { freshPgDatabase, postgresAvailable } from "../support/postgres.ts";
import { eventually } from "../support/wait.ts";
import { startProcess } from "./processes.ts";

/**
 * The timer wheel's due jobs claimed once across processes (src/infra/pg-timer-claims.ts): every
 * process's wheel holds the same timers, and each timer runs once, also when the process running
 * it is killed with kill -9 in the middle (another runs it after the lease).
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function database() {
  const db = await freshPgDatabase();
  cleanups.push(() => db.drop());
  const client = () => {
    const sql = new SQL(db.url, { max: 2 });
    cleanups.push(() => sql.close());
    return sql;
  };
  const sql = client();
  await sql`CREATE TABLE runs (key text NOT NULL, by text NOT NULL)`;
  return { url: db.url, sql, client };
}

const runsOf = async (sql: SQL): Promise<{ key: string; by: string }[]> => [...(await sql`SELECT key, by FROM runs ORDER BY key, by`)];

/** A wheel with claims over its own connections, as a process has; its handler records each run in `runs`. */
function wheelOn(sql: SQL, holder: string, leaseMs = 60_000) {
  const clock = new SystemClock();
  const wheel = new TimerWheel(clock, new PgTimerClaims({ sql, clock, holder, leaseMs }));
  wheel.handle("job", async (id) => {
    await sql`INSERT INTO runs (key, by) VALUES (${`job:${id}`}, ${holder})`;
  });
  wheel.start();
  cleanups.push(() => wheel.stop());
  return wheel;
}

describe.skipIf(!postgresAvailable)("timer jobs claimed once across processes", () => {
  test("two wheels holding the same 40 due timers run each once between them; the losers drop them after the lease", async () => {
    const { sql, client } = await database();
    const wheels = [wheelOn(client(), "a", 1000), wheelOn(client(), "b", 1000)];
    const due = Date.now();
    for (let i = 0; i < 40; i++) for (const wheel of wheels) wheel.schedule("job", i, due);
    await Promise.all(wheels.map((w) => w.idle()));
    const runs = await runsOf(sql);
    expect(runs.map((r) => r.key).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `job:${i}`).sort());
    const claims = await sql`SELECT count(*)::int AS n FROM timer_claims WHERE done`;
    expect(claims[0].n).toBe(40);
    // A loser that found a job running holds the timer until the winner's lease ends, then
    // learns from the claim that the job is done and drops it, without running it again.
    await eventually(() => wheels.every((w) => w.size === 0), "both wheels to be empty");
    await Promise.all(wheels.map((w) => w.idle()));
    expect((await runsOf(sql)).length).toBe(40);
  });

  test("a timer scheduled again at a new time is a new job; the same time once more is not run again", async () => {
    const { sql, client } = await database();
    const wheel = wheelOn(client(), "a");
    const due = Date.now();
    wheel.schedule("job", 1, due);
    await wheel.idle();
    wheel.schedule("job", 1, due);
    await wheel.idle();
    expect(await runsOf(sql)).toEqual([{ key: "job:1", by: "a" }]);
    wheel.schedule("job", 1, due + 1);
    await wheel.idle();
    expect(await runsOf(sql)).toEqual([
      { key: "job:1", by: "a" },
      { key: "job:1", by: "a" },
    ]);
  });

  test("a job whose handler throws is done all the same (not run again by another process), and a day later its claim is swept", async () => {
    const { sql, client } = await database();
    const clock = new SystemClock();
    const claims = new PgTimerClaims({ sql: client(), clock, holder: "a", leaseMs: 1000 });
    const wheel = new TimerWheel(clock, claims);
    let calls = 0;
    wheel.handle("job", () => {
      calls++;
      throw new Error("the job failed");
    });
    cleanups.push(() => wheel.stop());
    const due = Date.now();
    wheel.schedule("job", 1, due);
    await wheel.idle();
    expect(calls).toBe(1);
    const other = wheelOn(client(), "b", 1000);
    other.schedule("job", 1, due);
    await other.idle();
    expect(await runsOf(sql)).toEqual([]);
    expect(other.size).toBe(0);
    expect(await claims.sweep()).toBe(0);
    await sql`UPDATE timer_claims SET due_at = due_at - 24 * 60 * 60 * 1000`;
    expect(await claims.sweep()).toBe(1);
    expect((await sql`SELECT count(*)::int AS n FROM timer_claims`)[0].n).toBe(0);
  });

  test("a process killed with kill -9 mid-job: its claim is renewed while it lives, then another process runs the job once, after the lease", async () => {
    const { url, sql } = await database();
    const due = Date.now();
    // The first process runs all 10 jobs and hangs in job:3.
    const dying = await startProcess(["timers", url, "dying", "900", String(due), "10", "job:3"]);
    cleanups.push(() => dying.kill());
    await eventually(async () => (await runsOf(sql)).length === 9 && (await sql`SELECT 1 FROM timer_claims WHERE key = 'job:3'`).length === 1, "the first process to run 9 jobs and claim job:3");
    // The second holds the same timers: the 9 done are dropped, job:3 waits for the lease.
    const other = await startProcess(["timers", url, "other", "900", String(due), "10", "none"]);
    cleanups.push(() => other.kill());
    expect(await other.line()).toBe("ready");
    const [first] = await sql`SELECT claimed_until FROM timer_claims WHERE key = 'job:3'`;
    await eventually(async () => {
      const [now] = await sql`SELECT claimed_until FROM timer_claims WHERE key = 'job:3'`;
      return Number(now.claimed_until) > Number(first.claimed_until) + 900;
    }, "the first process to renew its claim past its first lease");
    expect((await runsOf(sql)).length).toBe(9);
    dying.kill();
    await dying.exited;
    expect(await other.until("done job:3")).toEqual(["start job:3"]);
    const runs = await runsOf(sql);
    expect(runs.filter((r) => r.by === "dying").map((r) => r.key)).toEqual(["job:0", "job:1", "job:2", "job:4", "job:5", "job:6", "job:7", "job:8", "job:9"]);
    expect(runs.filter((r) => r.by === "other").map((r) => r.key)).toEqual(["job:3"]);
    // Its claim is marked done just after the handler returned.
    await eventually(async () => (await sql`SELECT 1 FROM timer_claims WHERE key = 'job:3' AND claimed_by = 'other' AND done`).length === 1, "job:3's claim to be done by the other process");
  });
});
