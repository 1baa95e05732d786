import { SQL } from "bun";
import { SystemClock } from "../../src/clock.ts";
import { PgMessageQueue } from "../../src/federation/pg-queue.ts";
import { OutgoingHttp } from "../../src/net/outgoing.ts";

/**
 * A second process for test/federation/pg-queue.test.ts: one PgMessageQueue worker on its own
 * connection. Usage: bun pg-queue-worker.ts <database url> <worker id> <lease ms>. It prints
 * `ready` once it has looked at the queue and found nothing due, then `start <n>` and `done <n>`
 * around each message's handler, one line each. A message with `hang: true` is never finished,
 * as a delivery to a server that does not answer, until the process is killed.
 */
const [url, worker, lease] = process.argv.slice(2);
const sql = new SQL(url!, { max: 2 });
const queue = new PgMessageQueue({
  sql,
  clock: new SystemClock(),
  outgoing: new OutgoingHttp({
    allowPrivateAddresses: true,
    refusesHost: () => false,
    resolve: async () => ["127.0.0.1"],
    userAgent: "test",
    limits: { firstByteMs: 1000, totalMs: 1000, maxPerHost: 1, maxTotal: 1 },
  }),
  worker,
  leaseMs: Number(lease),
});
const say = (line: string) => process.stdout.write(`${line}\n`);
const controller = new AbortController();
process.on("SIGTERM", () => controller.abort());
queue.idle().then(() => say("ready"));
await queue.listen(
  async (message) => {
    const m = message as { n: number; hang?: boolean };
    say(`start ${m.n}`);
    if (m.hang) await new Promise(() => {});
    // A delivery's round trip, so that the workers' turns interleave.
    await sql`SELECT 1`;
    say(`done ${m.n}`);
  },
  { signal: controller.signal },
);
await sql.close();
