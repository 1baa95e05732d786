import { afterEach, describe, expect, test } from "bun:test";
import { createUser, postStatus } from "../support/fixtures.ts";
import { ManualClock } from "../../src/clock.ts";
import { freshPgDatabaseWithPool, postgresAvailable } from "../support/postgres.ts";
import { startTestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";
import { startProcess } from "./processes.ts";

/**
 * Timers every process holds (src/infra/pg-timer-relay.ts): a timer set in one process is told
 * to the others once its write committed, so when that process dies (kill -9) before the
 * timer's time, another runs it, once (the claims of pg-timer-claims.ts); a timer dropped is
 * dropped everywhere.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const database = () => freshPgDatabaseWithPool(cleanups);

describe.skipIf(!postgresAvailable)("timers held by every process", () => {
  test("timers set by a process killed with kill -9 before their time run once, in the process that heard them; the one it dropped does not", async () => {
    const { url, sql } = await database();
    await sql`CREATE TABLE runs (key text NOT NULL, by text NOT NULL)`;
    const other = await startProcess(["shared", url, "other", "900", "0", "0", "none"]);
    cleanups.push(() => other.kill());
    expect(await other.line()).toBe("ready");
    // Time enough for the setter to be killed before the timers are due, even on a loaded machine.
    const due = Date.now() + 5000;
    const setter = await startProcess(["shared", url, "setter", "900", String(due), "5", "scheduled:2"]);
    cleanups.push(() => setter.kill());
    expect(await setter.line()).toBe("ready");
    setter.kill();
    await setter.exited;
    expect(Date.now()).toBeLessThan(due);
    // The four timers are due in the same second: the wheel fires them in one tick, so the
    // dropped one, had it been held, would have run with them.
    const done = [await other.line(), await other.line(), await other.line(), await other.line()];
    expect(done.sort()).toEqual(["done scheduled:0", "done scheduled:1", "done scheduled:3", "done scheduled:4"]);
    expect(Date.now()).toBeGreaterThanOrEqual(due);
    expect([...(await sql`SELECT key, by FROM runs ORDER BY key`)]).toEqual(["scheduled:0", "scheduled:1", "scheduled:3", "scheduled:4"].map((key) => ({ key, by: "other" })));
    // A claim is marked done after its handler returned (which printed its line first).
    const doneClaims = async () => (await sql`SELECT key FROM timer_claims WHERE done ORDER BY key`).map((c: { key: string }) => c.key).join(" ");
    await eventually(async () => (await doneClaims()) === "scheduled:0 scheduled:1 scheduled:3 scheduled:4", "the four claims marked done");
  });

  test("a poll posted through one server is ended by another on the same database once the first has stopped", async () => {
    const { url, sql } = await database();
    const clock = new ManualClock();
    const env = { DATABASE_URL: url };
    const a = await startTestServer(env, { clock });
    cleanups.push(() => a.close());
    const b = await startTestServer(env, { clock });
    cleanups.push(() => b.close());
    const alice = await createUser(a, "alice");
    const status = await postStatus(alice, { status: "which?", poll: { options: ["this", "that"], expires_in: 600 } });
    const [poll] = await sql`SELECT id::text AS id FROM polls WHERE status_id = ${status.id}`;
    // b heard the poll's end from a: it holds the timer as a does.
    await eventually(() => b.ctx.services.wheel.holds(`poll:${poll.id}`), "the other server to hold the poll's end");
    await a.close();
    clock.advance(601 * 1000);
    await b.ctx.services.wheel.idle();
    const [ended] = await sql`SELECT ended_at FROM polls WHERE id = ${poll.id}`;
    expect(Number(ended.ended_at)).toBeGreaterThan(0);
    const [claim] = await sql`SELECT claimed_by, done FROM timer_claims WHERE key = ${`poll:${poll.id}`}`;
    expect(claim.done).toBe(true);
  });
});
