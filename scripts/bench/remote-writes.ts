/**
 * CPU per call of a write of the remote family's leaves before and after their move to the
 * database port (issue 31), in-process: a relay's answer to its Follow (Relays.answered: the
 * relay read by its Follow's IRI, then its state written). Its HTTP writes are admin pages that
 * answer 303, which before-after.ts's wrk runs do not take; the inbox's Accept needs a signed
 * delivery. Both classes run on one fresh database, 16 calls at once, alternately round after round.
 *
 *   bun scripts/bench/remote-writes.ts --before=<dir of the other checkout> [--rounds=6] [--calls=20000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/clock.ts";
import { openDatabase } from "../../src/db/connection.ts";
import { IdGenerator } from "../../src/ids.ts";
import { EventBus } from "../../src/infra/events.ts";
import { Relays } from "../../src/services/remote/relays.ts";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const beforeRoot = arg("before");
if (!beforeRoot) throw new Error("--before=<dir of the other checkout> is required");
const rounds = Number(arg("rounds") ?? 6);
const calls = Number(arg("calls") ?? 20_000);

const dir = mkdtempSync(join(tmpdir(), "rookery-remote-writes-"));
const handle = openDatabase(dir);
const clock = new ManualClock(1_764_000_000_000);
const ids = new IdGenerator(clock);
const events = new EventBus(handle.port);
const { Relays: BeforeRelays } = (await import(join(beforeRoot, "src/services/remote/relays.ts"))) as { Relays: new (...args: unknown[]) => { answered(f: string, a: string, ok: boolean): boolean | Promise<boolean> } };
const after = new Relays(handle.port, ids, clock, events, () => false, null, "http://rookery.test");
const before = new BeforeRelays(handle.port, ids, clock, events, () => false, null, "http://rookery.test");
const { relay } = await after.add("https://relay.example/inbox", "mastodon");

async function measure(relays: { answered(f: string, a: string, ok: boolean): boolean | Promise<boolean> }): Promise<number> {
  const start = process.cpuUsage();
  let next = 0;
  const flow = async () => {
    while (next < calls) {
      next++;
      await relays.answered(relay.followActivityId, "https://relay.example/actor", next % 2 === 0);
    }
  };
  await Promise.all(Array.from({ length: 16 }, flow));
  const used = process.cpuUsage(start);
  return ((used.user + used.system) / calls);
}

const figures: Record<string, number[]> = { before: [], after: [] };
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? (["before", "after"] as const) : (["after", "before"] as const);
  for (const name of order) figures[name]!.push(await measure(name === "before" ? before : after));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`Relays.answered, CPU µs per call (16 at once, ${calls} calls a round, ${rounds} rounds):`);
console.log(`before ${median(figures.before!).toFixed(1)}  after ${median(figures.after!).toFixed(1)}  ratio ${(median(figures.after!) / median(figures.before!)).toFixed(2)}`);
console.log(`rounds: ${figures.before!.map((b, i) => `${b.toFixed(1)}/${figures.after![i]!.toFixed(1)}`).join(" ")}`);
handle.close();
rmSync(dir, { recursive: true, force: true });
