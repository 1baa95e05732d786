import { afterAll, expect, test } from "bun:test";
import { createUser } from "../support/fixtures.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

// A server stopped while a request's handler still runs, its client gone (a proxy's timeout, a
// benchmark's end): the handler finishes, its write included, before the database closes.
// Bun's server.stop() does not wait for such a handler; it ran on and failed against the
// closed database ("Connection closed" on PostgreSQL).

let raw: Awaited<ReturnType<typeof startRawServer>>;
let restarted: TestServer | undefined;
afterAll(async () => {
  await restarted?.close();
  raw?.stop();
});

test("a stop waits for a handler whose client hung up: the status it was fetching is stored", async () => {
  raw = await startRawServer("127.0.0.76");
  const server = await startTestServer({ HOST: "127.0.0.77", ALLOW_PRIVATE_ADDRESSES: "true" });
  const alice = await createUser(server, "alice");
  const dave = raw.actor("dave", "dave");
  const noteUrl = raw.serve("/notes/1", {
    "@context": MASTODON_CONTEXT,
    id: `${raw.base}/notes/1`,
    type: "Note",
    attributedTo: dave,
    to: ["https://www.w3.org/ns/activitystreams#Public"],
    content: "<p>fetched while the server stopped</p>",
    published: "2026-11-20T10:00:00Z",
  });
  const release = raw.hold("/notes/1");
  const client = new AbortController();
  const search = fetch(`${server.base}/api/v2/search?type=statuses&resolve=true&q=${encodeURIComponent(noteUrl)}`, { headers: { authorization: `Bearer ${alice.token}` }, signal: client.signal }).catch(
    (e: Error) => e.name,
  );
  // The handler waits on the remote server's answer; its client leaves, and the server stops.
  await eventually(() => raw.asked.includes("/notes/1"), "the note to be asked for");
  client.abort();
  expect(await search).toBe("AbortError");
  const restarting = server.restart();
  // Let the answer go only once the server no longer listens: the stop is under way.
  await eventually(async () => (await fetch(`${server.base}/api/v1/instance`).then(() => false, () => true)), "the server to stop listening");
  release();
  restarted = await restarting;
  const stored = await restarted.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses WHERE uri = ?", [noteUrl]);
  expect(Number(stored!.n)).toBe(1);
});
