import { SQL } from "bun";
import { PgEventRelay } from "../../src/infra/pg-events.ts";
import { PgListener } from "../../src/infra/pg-listener.ts";
import type { DomainEvent } from "../../src/infra/events.ts";

/**
 * A second process for test/streaming/pg-events.test.ts: one PgEventRelay on its own
 * connections. Usage: bun pg-events-process.ts <database url> <origin>. It prints `ready` once it
 * listens, then `told <json>` for each event another process published, one line each. Each line
 * of its standard input is an event (JSON) it publishes; it prints `published <n>` once the n
 * first are written and notified.
 */
const [url, origin] = process.argv.slice(2);
const sql = new SQL(url!, { max: 2 });
const listener = new PgListener(url!);
const say = (line: string) => process.stdout.write(`${line}\n`);
const relay = new PgEventRelay({ sql, listener, origin: origin!, tell: (event) => say(`told ${JSON.stringify(event)}`), pollMs: 200 });
await relay.start();
say("ready");
let count = 0;
let rest = "";
const input = Bun.stdin.stream().pipeThrough(new TextDecoderStream()).getReader();
for (;;) {
  const { done, value: chunk } = await input.read();
  if (done) break;
  const lines = (rest + chunk).split("\n");
  rest = lines.pop()!;
  for (const line of lines) relay.publish(JSON.parse(line) as DomainEvent);
  count += lines.length;
  await relay.published();
  say(`published ${count}`);
}
await relay.stop();
await listener.close();
await sql.close();
