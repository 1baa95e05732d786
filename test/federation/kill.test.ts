import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Accept } from "@fedify/fedify/vocab";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { cli, freePort, serveProcess, signIn } from "../support/serve-process.ts";
import { databaseEnv, dropDatabase, knownDatabaseEnv } from "../support/test-database.ts";

// `rookery serve` as a process of its own, killed with SIGKILL while deliveries wait, and a
// receiver that can be down: what was queued is sent after the restart, and what was sent is
// not sent again.
const HOST = "127.0.0.8";
let dataDir: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let running: Awaited<ReturnType<typeof serveProcess>> | null = null;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "rookery-fedkill-"));
  const port = String(freePort(HOST));
  env = { HOST, PORT: port, PUBLIC_URL: `http://${HOST}:${port}`, ALLOW_PRIVATE_ADDRESSES: "true" };
  // A new data directory: its database is made by migrate (or the server), never by another command.
  // In the PostgreSQL test mode the directory's database is named first, for the commands too.
  await databaseEnv(dataDir);
  cli(dataDir, ["migrate"]);
  cli(dataDir, ["accounts", "create", "kim", "--email", "kim@example.test", "--password", "kims password"]);
  receiver = await startReceiver("127.0.0.9");
});
afterAll(async () => {
  running?.proc.kill("SIGKILL");
  await running?.proc.exited;
  receiver?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  await dropDatabase(dataDir);
});

/**
 * A statement on the server's database, opened for it alone (the server is another process):
 * its SQLite file, or in the PostgreSQL test mode the database the server was given.
 */
async function onServerDatabase(text: string): Promise<Record<string, unknown>[]> {
  const url = knownDatabaseEnv(dataDir).DATABASE_URL;
  if (url) {
    const sql = new SQL(url, { max: 1 });
    try {
      return [...(await sql.unsafe(text))];
    } finally {
      await sql.close();
    }
  }
  const db = new Database(join(dataDir, "rookery.sqlite3"));
  try {
    return db.query(text).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}
/** The messages in the server's queue (parsed here: JSON's functions are each dialect's own). */
const messages = async () => (await onServerDatabase("SELECT message FROM fedify_messages")).map((row) => JSON.parse(row.message as string) as { attempt?: number });
const queued = async () => (await messages()).length;
/**
 * Messages that are retries (Fedify's `attempt` above 0): a first attempt that failed has ended
 * only once its retry is written. Until then its second knock (Fedify re-sends a refused
 * delivery signed the other way, a 503 included) may still be on its way.
 */
const retries = async () => (await messages()).filter((message) => (message.attempt ?? 0) > 0).length;
const restart = async (options: { retriesDue?: boolean } = {}) => {
  running!.proc.kill("SIGKILL");
  await running!.proc.exited;
  if (options.retriesDue) {
    // The first retry waits 30 s on the real clock of a process of its own; the time the server
    // was down is made to have passed by moving the queued retries' due time, nothing else.
    await onServerDatabase("UPDATE fedify_messages SET run_at = 0");
  }
  running = await serveProcess(dataDir, env);
};
const creates = (uri: string) => receiver.posts.filter((p) => p.type === "Create" && p.id === `${uri}/activity` && p.answered < 300);

test("kill -9 with a delivery waiting for a receiver that is down: sent once the server is back, exactly once", async () => {
  running = await serveProcess(dataDir, env);
  const kim = await signIn(running.base, "kim", "kims password");
  await receiver.follow(`${running.base}/users/kim`, `${running.base}/users/kim/inbox`);
  await eventually(() => receiver.received.some((x) => x instanceof Accept), "follow accepted");

  receiver.down = true;
  const post = (await kim.post("/api/v1/statuses", { json: { status: "waiting out an outage", visibility: "public" } })).body;
  await eventually(() => receiver.posts.some((p) => p.type === "Create" && p.answered === 503), "a first attempt met the outage");
  await eventually(async () => (await retries()) > 0, "the first attempt ended and its retry waits");
  expect(creates(post.uri)).toHaveLength(0);

  // Up again before the restarted server's first try (its retry is 30 s away until then).
  receiver.down = false;
  await restart({ retriesDue: true });
  await eventually(() => creates(post.uri).length > 0, "delivered after the restart", 20_000);
  await eventually(async () => (await queued()) === 0, "queue empty");
  expect(creates(post.uri)).toHaveLength(1);
}, 60_000);

test("kill -9 after a delivery went out: nothing is sent again after the restart", async () => {
  const kim = await signIn(running!.base, "kim", "kims password");
  const first = (await kim.post("/api/v1/statuses", { json: { status: "sent before the crash", visibility: "public" } })).body;
  await eventually(() => creates(first.uri).length === 1, "delivered");
  await eventually(async () => (await queued()) === 0, "queue empty");

  await restart();
  // A later post's delivery proves the restarted queue has run; the first one is still not resent.
  const kimAgain = await signIn(running!.base, "kim", "kims password");
  const marker = (await kimAgain.post("/api/v1/statuses", { json: { status: "after the restart", visibility: "public" } })).body;
  await eventually(() => creates(marker.uri).length === 1, "the marker delivered");
  await eventually(async () => (await queued()) === 0, "queue empty");
  expect(creates(first.uri)).toHaveLength(1);
}, 60_000);
