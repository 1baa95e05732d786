import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signRequest } from "@fedify/fedify";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser } from "../support/fixtures.ts";
import { AP } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// What a misbehaving server gets at the inboxes: malformed activities refused with nothing
// stored, and a flood cut off by the inbox's rate limit (RATE_LIMITS on, as in production).
let a: TestServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true", RATE_LIMITS: "on" });
  await createUser(a, "alice");
  receiver = await startReceiver("127.0.0.16");
});
afterAll(async () => {
  await a?.close();
  receiver?.stop();
});

const stored = () => a.database.sqlite.query<{ n: number }, []>("SELECT (SELECT count(*) FROM statuses) + (SELECT count(*) FROM accounts) + (SELECT count(*) FROM follows) AS n").get()!.n;

/** A POST to alice's inbox signed by the receiver's actor, with this body as it is. */
async function signedPost(body: string) {
  const request = new Request(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP, accept: AP }, body });
  return fetch(await signRequest(request, receiver.privateKey, receiver.keyId));
}

describe("malformed activities", () => {
  test("not JSON, JSON that is no activity, an activity without actor or of another actor: 4xx, nothing stored", async () => {
    const before = stored();
    const note = { "@context": "https://www.w3.org/ns/activitystreams", id: `${receiver.base}/notes/x`, type: "Note", content: "no activity", attributedTo: receiver.actor };
    const cases: [string, string][] = [
      ["not JSON", "{this is not json"],
      ["a JSON array", "[1, 2, 3]"],
      ["a Note, not an activity", JSON.stringify(note)],
      ["a Create without actor", JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${receiver.base}/c/1`, type: "Create", object: note })],
      ["a Create by someone else than the signer", JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${receiver.base}/c/2`, type: "Create", actor: `${a.base}/users/alice`, object: note })],
    ];
    for (const [what, body] of cases) {
      const res = await signedPost(body);
      expect([what, res.status >= 400 && res.status < 500]).toEqual([what, true]);
    }
    expect(stored()).toBe(before);
  });
});

describe("the inbox rate limit", () => {
  test("past 2,000 POSTs in 5 minutes from one address: 429 with Mastodon's body and limit headers, before anything is read; other paths are untouched", async () => {
    // A server of its own: the POSTs of the test above would count in this one's window.
    const fresh = await startTestServer({ HOST: "127.0.0.4", ALLOW_PRIVATE_ADDRESSES: "true", RATE_LIMITS: "on" });
    const stored = () => fresh.database.sqlite.query<{ n: number }, []>("SELECT (SELECT count(*) FROM statuses) + (SELECT count(*) FROM accounts) AS n").get()!.n;
    await createUser(fresh, "alice");
    const post = () => fetch(`${fresh.base}/inbox`, { method: "POST", headers: { "content-type": AP }, body: "{}" });
    // 2,000 unsigned POSTs of nothing (each refused, 4xx, not limited yet), 50 at a time.
    for (let sent = 0; sent < 2000; sent += 50) {
      const statuses = await Promise.all(Array.from({ length: 50 }, () => post().then((r) => r.status)));
      expect(statuses.filter((s) => s < 400 || s >= 500 || s === 429)).toEqual([]);
    }
    const before = stored();
    const limited = await post();
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: "Too many requests" });
    // Mastodon's throttled responder tells the limit and when it resets (no Retry-After).
    expect([limited.headers.get("x-ratelimit-limit"), limited.headers.get("x-ratelimit-remaining")]).toEqual(["2000", "0"]);
    expect(Date.parse(limited.headers.get("x-ratelimit-reset")!)).toBeGreaterThan(0);
    expect(stored()).toBe(before);
    // The client API and the actor documents answer as before.
    expect((await fetch(`${fresh.base}/api/v1/instance`)).status).toBe(200);
    expect((await fetch(`${fresh.base}/users/alice`, { headers: { accept: AP } })).status).toBe(200);
    await fresh.close();
  }, 60_000);
});
