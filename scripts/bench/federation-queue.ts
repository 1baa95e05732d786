/**
 * The federation queue behind deliveries waiting to be retried. A peer that is down leaves
 * its deliveries in fedify_messages, delayed (Fedify retries with backoff for days); every
 * later delivery that has an ordering key (all status deliveries do) is claimed only once no
 * earlier message of its key is left, and fedify_messages has no index on ordering_key: the
 * claim reads every earlier row, past its message text, to find out. Measured with the real
 * PortMessageQueue on a database made by the real migrations, then with the index a
 * migration would add, in a throwaway copy. Also timed: queueing the due deliveries all at
 * once, as Fedify does for a post (one enqueue call per inbox), which holds the event loop.
 *
 *   bun scripts/bench/federation-queue.ts [delayed retries, default 5000] [due deliveries, default 1000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Temporal } from "@js-temporal/polyfill";
import { ManualClock } from "../../src/clock.ts";
import { openDatabase } from "../../src/db/connection.ts";
import { PortMessageQueue } from "../../src/federation/queue.ts";
import { OutgoingHttp } from "../../src/net/outgoing.ts";
import { fmt } from "./lib.ts";

const RETRIES = Number(process.argv[2] ?? 5000);
const DUE = Number(process.argv[3] ?? 1000);

/** An outbox message of the size Fedify writes: the activity and the sender's keys as JWK (~3 KB). */
const message = (inbox: string) => ({ type: "outbox", id: crypto.randomUUID(), inbox, activity: { content: "x".repeat(1200) }, keys: [{ keyId: "k", privateKey: { d: "y".repeat(1700) } }] });

async function run(withIndex: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "rookery-queue-bench-"));
  const db = openDatabase(dir);
  try {
    if (withIndex) db.sqlite.run("CREATE INDEX fedify_messages_ordering ON fedify_messages (ordering_key, id)");
    const clock = new ManualClock(Date.now());
    // Any address allowed: nothing is sent, the handler only counts.
    const outgoing = new OutgoingHttp({ allowPrivateAddresses: true, refusesHost: () => false, resolve: async () => ["127.0.0.1"], userAgent: "bench", limits: { firstByteMs: 1000, totalMs: 1000, maxPerHost: 8, maxTotal: 64 } });
    const queue = new PortMessageQueue(db.port, clock, outgoing);
    const later = { delay: Temporal.Duration.from({ hours: 1 }) };
    await Promise.all(Array.from({ length: RETRIES }, (_, i) => queue.enqueue(message(`http://dead${i % 50}.example/inbox`), { ...later, orderingKey: `note-${i % 50}\nhttp://dead${i % 50}.example` })));
    const enqueueStarted = performance.now();
    await Promise.all(Array.from({ length: DUE }, (_, i) => queue.enqueue(message(`http://live${i % 100}.example/inbox`), { orderingKey: `note\nhttp://live${i % 100}.example` })));
    const enqueueMs = performance.now() - enqueueStarted;
    const controller = new AbortController();
    let handled = 0;
    const started = performance.now();
    await queue.listen(() => void (++handled === DUE && controller.abort()), { signal: controller.signal });
    return { claimUs: ((performance.now() - started) / DUE) * 1000, enqueueMs };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const plain = await run(false);
const indexed = await run(true);
console.log(`${fmt(DUE)} deliveries enqueued at once: ${fmt(plain.enqueueMs, 1)} ms`);
console.log(`${fmt(DUE)} due deliveries claimed and removed one by one, behind ${fmt(RETRIES)} delayed retries:`);
console.log(`  as migrated (no index on ordering_key):   ${fmt(plain.claimUs).padStart(7)} µs per message`);
console.log(`  with an index on (ordering_key, id):      ${fmt(indexed.claimUs).padStart(7)} µs per message`);
