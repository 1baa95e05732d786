import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signRequest } from "@fedify/fedify";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser } from "../support/fixtures.ts";
import { AP } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { ManualClock } from "../../src/clock.ts";

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

const stored = async () => (await a.database.port.get<{ n: number }>("SELECT (SELECT count(*) FROM statuses) + (SELECT count(*) FROM accounts) + (SELECT count(*) FROM follows) AS n"))!.n;

/** A POST to alice's inbox signed by the receiver's actor, with this body as it is. */
async function signedPost(body: string) {
  const request = new Request(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP, accept: AP }, body });
  return fetch(await signRequest(request, receiver.privateKey, receiver.keyId));
}

describe("malformed activities", () => {
  test("not JSON, JSON that is no activity, an activity without actor or of another actor: 4xx, nothing stored", async () => {
    const before = await stored();
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
    expect(await stored()).toBe(before);
  });
});

describe("the inbox rate limit", () => {
  test("past INBOX_RATE_LIMIT POSTs from one address: 429 with Mastodon's body and limit headers and a Retry-After, before anything is read; other paths are untouched", async () => {
    // A server of its own, with a small limit (the default, 2000/300, is read in test/unit/config.test.ts).
    // Windows end on the hour; the server's clock stands still in the middle of this hour, so
    // that the test never straddles two windows however slowly it runs.
    const HOUR = 3_600_000;
    const clock = new ManualClock(Math.floor(Date.now() / HOUR) * HOUR + HOUR / 2);
    const fresh = await startTestServer({ HOST: "127.0.0.4", ALLOW_PRIVATE_ADDRESSES: "true", RATE_LIMITS: "on", INBOX_RATE_LIMIT: "40/3600" }, { clock });
    try {
      const stored = async () => (await fresh.database.port.get<{ n: number }>("SELECT (SELECT count(*) FROM statuses) + (SELECT count(*) FROM accounts) AS n"))!.n;
      await createUser(fresh, "alice");
      const post = (path = "/inbox") => fetch(`${fresh.base}${path}`, { method: "POST", headers: { "content-type": AP }, body: "{}" });
      // 40 unsigned POSTs of nothing, to the shared inbox and a user's: each refused (4xx), none limited yet.
      const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => post(i % 2 ? "/inbox" : "/users/alice/inbox").then((r) => r.status)));
      expect(statuses.filter((s) => s < 400 || s >= 500 || s === 429)).toEqual([]);
      const before = await stored();
      for (const path of ["/inbox", "/users/alice/inbox"]) {
        const limited = await post(path);
        expect([path, limited.status]).toEqual([path, 429]);
        expect(await limited.json()).toEqual({ error: "Too many requests" });
        // Mastodon's throttled responder tells the limit and when it resets; Retry-After (seconds) too.
        expect([limited.headers.get("x-ratelimit-limit"), limited.headers.get("x-ratelimit-remaining")]).toEqual(["40", "0"]);
        const reset = Date.parse(limited.headers.get("x-ratelimit-reset")!);
        const retryAfter = Number(limited.headers.get("retry-after"));
        expect(retryAfter).toBe(1800);
        expect(reset).toBe(clock.now() + retryAfter * 1000);
      }
      // A signed activity of a real server is refused just the same, unread: nothing stored.
      const follow = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${receiver.base}/f/1`, type: "Follow", actor: receiver.actor, object: `${fresh.base}/users/alice` });
      const signed = await fetch(await signRequest(new Request(`${fresh.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP, accept: AP }, body: follow }), receiver.privateKey, receiver.keyId));
      expect(signed.status).toBe(429);
      expect(await stored()).toBe(before);
      // The client API and the actor documents answer as before, without Retry-After.
      const api = await fetch(`${fresh.base}/api/v1/instance`);
      expect([api.status, api.headers.get("retry-after")]).toEqual([200, null]);
      expect((await fetch(`${fresh.base}/users/alice`, { headers: { accept: AP } })).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });

  test("INBOX_RATE_LIMIT=off: no inbox limit, while the API's limits stay", async () => {
    const open = await startTestServer({ HOST: "127.0.0.5", ALLOW_PRIVATE_ADDRESSES: "true", RATE_LIMITS: "on", INBOX_RATE_LIMIT: "off" });
    try {
      const statuses = await Promise.all(Array.from({ length: 60 }, () => fetch(`${open.base}/inbox`, { method: "POST", headers: { "content-type": AP }, body: "{}" }).then((r) => r.status)));
      expect(statuses.filter((s) => s === 429)).toEqual([]);
      // The API's own limits still count (Mastodon's headers on an API answer).
      expect((await fetch(`${open.base}/api/v1/instance`)).headers.get("x-ratelimit-limit")).toBe("300");
    } finally {
      await open.close();
    }
  });
});
