import { afterEach, describe, expect, test } from "bun:test";
import { SQL, type Subprocess } from "bun";
import { join } from "node:path";
import type { DomainEvent } from "../../src/infra/events.ts";
import { EVENTS_CHANNEL, INLINE_LIMIT, PgEventRelay, relayedBus } from "../../src/infra/pg-events.ts";
import { PgListener } from "../../src/infra/pg-listener.ts";
import { STREAM_EVENTS } from "../../src/streaming/fanout.ts";
import { pgDatabaseWithClient, postgresAvailable } from "../support/postgres.ts";
import { eventually } from "../support/wait.ts";

/**
 * Stream events across processes on one PostgreSQL (src/infra/pg-events.ts): what one process
 * publishes reaches the others' buses once, in order, never its own twice; large events travel
 * through the table; a listen connection killed and re-established, and a write committing
 * after a later one, lose nothing; and the same between two `bun` processes, one killed with -9.
 */

const PROCESS = join(import.meta.dir, "..", "support", "pg-events-process.ts");

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const database = () => pgDatabaseWithClient(cleanups, 2);

/**
 * One process's side: its pool, listen connection and relay, and the bus its stream fan-out
 * would listen to; `told` is what reached that bus, as the fan-out hears it (after commit).
 */
async function side(url: string, origin: string, options: { pollMs?: number; holeMs?: number } = {}) {
  const sql = new SQL(url, { max: 2 });
  const listener = new PgListener(url);
  const bus = relayedBus();
  const told: DomainEvent[] = [];
  for (const type of STREAM_EVENTS) bus.afterCommit(type, (e) => told.push(e));
  const relay = new PgEventRelay({ sql, listener, origin, tell: (e) => bus.emit(e), pollMs: options.pollMs ?? 60_000, holeMs: options.holeMs });
  await relay.start();
  cleanups.push(async () => {
    await relay.stop();
    await listener.close();
    await sql.close();
  });
  return { relay, told, sql };
}

const small = (accountId: number): DomainEvent => ({ type: "filters.changed", accountId });
/** A status.deleted whose feeds alone pass PostgreSQL's 8000-byte notification. */
function large(id: number, feeds: number): DomainEvent {
  const status = { id, accountId: 1, visibility: "public", content: "<p>gone</p>", tags: "[]" } as unknown as Extract<DomainEvent, { type: "status.deleted" }>["status"];
  return { type: "status.deleted", status, homeRecipients: Array.from({ length: feeds }, (_, i) => 1_000_000_000_000 + i), listIds: [] };
}
const ids = (told: DomainEvent[]) => told.map((e) => (e.type === "filters.changed" ? e.accountId : e.type === "status.deleted" ? e.status.id : e.type));

describe.skipIf(!postgresAvailable)("stream events across processes", () => {
  test("an event published by one process reaches the other's bus once, in order, and not its own", async () => {
    const { url } = await database();
    const a = await side(url, "a");
    const b = await side(url, "b");
    // Three in one turn (one statement), then one more.
    a.relay.publish(small(1));
    a.relay.publish(small(2));
    a.relay.publish(small(3));
    await a.relay.published();
    a.relay.publish(small(4));
    await a.relay.published();
    await eventually(() => b.told.length === 4, () => `b told ${JSON.stringify(ids(b.told))}`);
    b.relay.publish(small(5));
    await b.relay.published();
    await eventually(() => a.told.length === 1, () => `a told ${JSON.stringify(ids(a.told))}`);
    // A marker after everything: whatever was to arrive twice has arrived by the time it does.
    a.relay.publish(small(6));
    await a.relay.published();
    await eventually(() => b.told.length === 5, "the marker at b");
    await b.relay.caughtUp();
    expect(ids(b.told)).toEqual([1, 2, 3, 4, 6]);
    expect(ids(a.told)).toEqual([5]);
    expect(b.told[0]).toEqual(small(1));
  });

  test("an event too long for a notification travels as its number and is read from the table whole", async () => {
    const { url, sql } = await database();
    const a = await side(url, "a");
    const b = await side(url, "b");
    const heard: string[] = [];
    const listen = await sql.listen(EVENTS_CHANNEL, (p) => heard.push(p));
    cleanups.push(() => listen.unlisten());
    const big = large(7, 600);
    expect(JSON.stringify(big).length).toBeGreaterThan(8000);
    a.relay.publish(small(1));
    a.relay.publish(big);
    a.relay.publish(small(2));
    await a.relay.published();
    await eventually(() => b.told.length === 3, () => `b told ${JSON.stringify(ids(b.told))}`);
    expect(ids(b.told)).toEqual([1, 7, 2]);
    expect(b.told[1]).toEqual(big);
    // What went over the wire: the small ones whole, the large one as "<seq> <origin>" alone.
    await eventually(() => heard.length === 3, "the three notifications");
    expect(heard.map((p) => p.split(" ").length > 2)).toEqual([true, false, true]);
    expect(Math.max(...heard.map((p) => Buffer.byteLength(p)))).toBeLessThan(8000);
    // At the limit (counted in bytes: "é" is two) an event still travels whole; one byte more, as its number.
    const sized = (bytes: number) => {
      const bare = Buffer.byteLength(JSON.stringify({ type: "announcement.reaction", announcementId: 1, name: "" }));
      const name = "é".repeat(Math.floor((bytes - bare) / 2)) + "x".repeat((bytes - bare) % 2);
      return { type: "announcement.reaction", announcementId: 1, name } as DomainEvent;
    };
    const atLimit = sized(INLINE_LIMIT);
    const over = sized(INLINE_LIMIT + 1);
    expect(Buffer.byteLength(JSON.stringify(atLimit))).toBe(INLINE_LIMIT);
    expect(Buffer.byteLength(JSON.stringify(over))).toBe(INLINE_LIMIT + 1);
    a.relay.publish(atLimit);
    a.relay.publish(over);
    await a.relay.published();
    await eventually(() => heard.length === 5 && b.told.length === 5, "the events at the limit");
    expect(heard.slice(3).map((p) => p.split(" ").length > 2)).toEqual([true, false]);
    expect(Math.max(...heard.map((p) => Buffer.byteLength(p)))).toBeLessThan(8000);
    expect(b.told.slice(3)).toEqual([atLimit, over]);
  });

  test("a listen connection killed and re-established is told what was published meanwhile, once", async () => {
    const { url, sql } = await database();
    const a = await side(url, "a");
    const b = await side(url, "b");
    a.relay.publish(small(1));
    await a.relay.published();
    await eventually(() => b.told.length === 1, "the first event");
    // Every LISTEN connection is cut (as a network drop or a restarted pgbouncer would).
    const [{ n }] = await sql`SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`;
    expect(Number(n)).toBe(2);
    a.relay.publish(small(2));
    a.relay.publish(large(3, 600));
    await a.relay.published();
    // Nothing else is published: the reconnection itself reads them (b polls once a minute).
    await eventually(() => b.told.length === 3, () => `b told ${JSON.stringify(ids(b.told))}`);
    // Once Bun has sent LISTEN again, notifications come as before.
    await eventually(async () => (await sql`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`)[0].n == 2, "both listening again");
    a.relay.publish(small(4));
    await a.relay.published();
    await eventually(() => b.told.length === 4, () => `b told ${JSON.stringify(ids(b.told))}`);
    await b.relay.caughtUp();
    expect(ids(b.told)).toEqual([1, 2, 3, 4]);
    expect(a.told).toEqual([]);
  });

  test("a write numbered before another but committed after it is told when it commits; a number never written is let go", async () => {
    const { url, sql } = await database();
    const a = await side(url, "a");
    const b = await side(url, "b", { pollMs: 100, holeMs: 300 });
    // Another process's publication, numbered now and committed later.
    const late = await sql.reserve();
    cleanups.push(() => late.release());
    await late`BEGIN`;
    const [held] = await late`INSERT INTO rookery_stream_events (origin, body) VALUES ('c', ${JSON.stringify(small(1))}) RETURNING seq`;
    await late`SELECT pg_notify(${EVENTS_CHANNEL}, ${`${held.seq} c ${JSON.stringify(small(1))}`})`;
    // A number taken and never written (a failed statement).
    await sql`SELECT nextval('rookery_stream_events_seq_seq')`;
    a.relay.publish(small(2));
    await a.relay.published();
    await eventually(() => b.told.length === 1, "the later write");
    await late`COMMIT`;
    await eventually(() => b.told.length === 2, () => `b told ${JSON.stringify(ids(b.told))}`);
    expect(ids(b.told)).toEqual([2, 1]);
    // The number never written is let go after holeMs: the polls stop asking for it.
    await eventually(() => (b.relay as unknown as { holes: Map<number, number> }).holes.size === 0, "the hole let go");
    a.relay.publish(small(3));
    await a.relay.published();
    await eventually(() => b.told.length === 3, "one more");
    expect(ids(b.told)).toEqual([2, 1, 3]);
  });

  test("between two processes: each hears the other's events once; one killed with -9 leaves the other listening, and its last events were delivered", async () => {
    const { url } = await database();
    const a = await side(url, "a");
    const child = childProcess(url, "child");
    await eventually(() => child.lines.includes("ready"), () => `the child ready (${child.lines.join(" | ")})`);
    a.relay.publish(small(1));
    a.relay.publish(large(2, 600));
    await a.relay.published();
    await eventually(() => child.told().length === 2, () => `the child told ${child.lines.join(" | ")}`);
    child.publish(small(3), small(4));
    await eventually(() => child.lines.includes("published 2"), "the child's publications");
    await eventually(() => a.told.length === 2, () => `a told ${JSON.stringify(ids(a.told))}`);
    child.proc.kill("SIGKILL");
    await child.proc.exited;
    a.relay.publish(small(5));
    await a.relay.published();
    const again = childProcess(url, "child");
    await eventually(() => again.lines.includes("ready"), "the new child ready");
    again.publish(small(6));
    await eventually(() => a.told.length === 3, () => `a told ${JSON.stringify(ids(a.told))}`);
    a.relay.publish(small(7));
    await a.relay.published();
    await eventually(() => again.told().length === 1, () => `the new child told ${again.lines.join(" | ")}`);
    expect(ids(a.told)).toEqual([3, 4, 6]);
    expect(ids(child.told())).toEqual([1, 2]);
    expect(child.told()[1]).toEqual(large(2, 600));
    // A process starts from the newest event: what came before it (5) was for streams it did not have.
    expect(ids(again.told())).toEqual([7]);
  });
});

/** pg-events-process.ts in a second `bun` process, with the lines it printed. */
function childProcess(url: string, origin: string) {
  const proc: Subprocess<"pipe", "pipe", "inherit"> = Bun.spawn([process.execPath, PROCESS, url, origin], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  cleanups.push(async () => {
    proc.kill("SIGKILL");
    await proc.exited;
  });
  const lines: string[] = [];
  void (async () => {
    const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let rest = "";
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      lines.push(...parts);
    }
  })();
  return {
    proc,
    lines,
    told: () => lines.filter((l) => l.startsWith("told ")).map((l) => JSON.parse(l.slice(5)) as DomainEvent),
    publish: (...events: DomainEvent[]) => {
      proc.stdin.write(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
      proc.stdin.flush();
    },
  };
}
