import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signRequest } from "@fedify/fedify";
import { createUser } from "../support/fixtures.ts";
import { AP } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Garbage at the inboxes, as a fuzzer sends it: never a 500 (which makes a sender retry
// forever), always a JSON {error}, and nothing stored.

let a: TestServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  await createUser(a, "alice");
  receiver = await startReceiver("127.0.0.41");
});
afterAll(async () => {
  receiver?.stop();
  await a?.close();
});

const counts = () => a.database.port.get("SELECT (SELECT count(*) FROM statuses) AS statuses, (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM follows) AS follows");
const deep = (n: number) => "[".repeat(n) + "]".repeat(n);

const bodies: [string, string][] = [
  ["a bare string", JSON.stringify("Create")],
  ["a number", "42"],
  ["an array", JSON.stringify([{ type: "Create" }])],
  ["not JSON", "{type: Create"],
  ["empty", ""],
  ["a context that is not one", JSON.stringify({ "@context": 5, type: "Create", actor: "http://x.example/a" })],
  ["a context list with a number", JSON.stringify({ "@context": ["https://www.w3.org/ns/activitystreams", 7], type: "Create" })],
  ["50,000-deep nesting", `{"@context":"https://www.w3.org/ns/activitystreams","type":"Create","object":${deep(50_000)}}`],
  ["deep objects", `{"type":"Create","object":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}`],
  ["a Note from another origin, unsigned", JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: "http://evil.example/create", type: "Create", actor: `${"http://127.0.0.41"}/actors/carol`, object: { id: "http://elsewhere.example/note", type: "Note", attributedTo: "http://third.example/u", content: "hi" } })],
];

describe("garbage at the inboxes", () => {
  for (const path of ["/inbox", "/users/alice/inbox"]) {
    test(`unsigned garbage at ${path}: 400 or 401 with a JSON error, nothing stored`, async () => {
      const before = await counts();
      for (const [what, body] of bodies) {
        const res = await fetch(`${a.base}${path}`, { method: "POST", headers: { "content-type": AP }, body });
        const json = await res.json().catch(() => null);
        expect([what, [400, 401].includes(res.status), typeof json?.error]).toEqual([what, true, "string"]);
      }
      expect(await counts()).toEqual(before);
    });
  }

  test("signed garbage (a valid signature over a body that is no activity): 400 with a JSON error, nothing stored", async () => {
    const before = await counts();
    for (const [what, body] of bodies.filter(([w]) => !w.includes("unsigned"))) {
      const signed = await signRequest(new Request(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP }, body }), receiver.privateKey, receiver.keyId);
      const res = await fetch(signed);
      const json = await res.json().catch(() => null);
      expect([what, res.status, typeof json?.error]).toEqual([what, 400, "string"]);
    }
    expect(await counts()).toEqual(before);
  });

  test("an unsigned activity is refused with Mastodon's words", async () => {
    const res = await fetch(`${a.base}/inbox`, { method: "POST", headers: { "content-type": AP }, body: JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", type: "Follow", actor: receiver.actor, object: `${a.base}/users/alice` }) });
    expect([res.status, await res.json()]).toEqual([401, { error: "Request not signed" }]);
  });
});
