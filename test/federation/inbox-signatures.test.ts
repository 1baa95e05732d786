import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateCryptoKeyPair, signRequest } from "@fedify/fedify";
import { createUser } from "../support/fixtures.ts";
import { AP, eventually } from "../support/federation.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// What the patched Fedify (patches/README.md) does faster on the inbox path must decide as
// before. Keys are kept parsed in memory between requests: a key rotated at its server (the
// same key id, a new key) takes over at once (the kept key fails, the key is fetched once
// more), and from then on the old key verifies nothing. The signed Date is checked in plain
// milliseconds: an hour either way, as Fedify's window is, and not a second more.

let a: TestServer;
let remote: Awaited<ReturnType<typeof startRawServer>>;
let inbox: string;
let rita: string;

const pem = async (key: CryptoKey) => {
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", key)).toString("base64");
  return `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join("\n")}\n-----END PUBLIC KEY-----\n`;
};
// null when there is none, as the assertions below say it.
const stored = async (id: string) => (await a.database.port.get("SELECT id FROM statuses WHERE uri = ?", [id])) ?? null;
const statusCount = async () => (await a.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n;

/** A DM from rita to alice, signed (draft-cavage) with `privateKey` under rita's key id, dated `date` (now by default). */
async function dm(name: string, privateKey: CryptoKey, date?: Date): Promise<{ id: string; res: Response }> {
  const id = `${rita}/notes/${name}`;
  const body = JSON.stringify({
    "@context": MASTODON_CONTEXT,
    id: `${id}/activity`,
    type: "Create",
    actor: rita,
    to: [`${a.base}/users/alice`],
    object: { id, type: "Note", attributedTo: rita, to: [`${a.base}/users/alice`], content: `<p>${name}</p>`, tag: [{ type: "Mention", href: `${a.base}/users/alice` }] },
  });
  const request = new Request(inbox, { method: "POST", headers: { "content-type": AP, accept: AP, ...(date ? { date: date.toUTCString() } : {}) }, body });
  return { id, res: await fetch(await signRequest(request, privateKey, new URL(`${rita}#main-key`))) };
}

beforeAll(async () => {
  [a, remote] = await Promise.all([startTestServer({ HOST: "127.0.0.161", ALLOW_PRIVATE_ADDRESSES: "true" }), startRawServer("127.0.0.162")]);
  await createUser(a, "alice");
  inbox = `${a.base}/users/alice/inbox`;
  rita = remote.actor("rita", "rita");
});
afterAll(async () => {
  await a?.close();
  remote?.stop();
});

describe("a remote actor's key rotated under the same key id", () => {
  test("the new key verifies at once, and the old one no longer does", async () => {
    // Verified with the first key, many times over: the key is kept (parsed) between requests.
    for (const n of [1, 2, 3]) {
      const first = await dm(`before-${n}`, remote.privateKey);
      expect(first.res.status).toBe(202);
      await eventually(() => stored(first.id), `rita's note ${n} stored`);
    }

    // Rotated: rita's actor now names a new key under the same id.
    const next = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
    remote.actor("rita", "rita", { publicKey: { id: `${rita}#main-key`, owner: rita, publicKeyPem: await pem(next.publicKey) } });
    const rotated = await dm("after", next.privateKey);
    expect(rotated.res.status).toBe(202);
    await eventually(() => stored(rotated.id), "the note signed with the new key stored");

    // The old key is refused from now on, and nothing it signs is stored.
    const before = await statusCount();
    const stale = await dm("stale", remote.privateKey);
    expect(stale.res.status).toBe(401);
    expect(await stored(stale.id)).toBeNull();
    expect(await statusCount()).toBe(before);

    // The new key keeps verifying.
    const again = await dm("after-again", next.privateKey);
    expect(again.res.status).toBe(202);
    await eventually(() => stored(again.id), "a second note signed with the new key stored");
  });
});

describe("the Date a signature covers", () => {
  const HOUR = 60 * 60 * 1000;

  test("more than an hour old or ahead: 401, nothing stored", async () => {
    const signer = await rotateBack();
    const before = await statusCount();
    for (const [name, offset] of [["stale", -HOUR - 60_000], ["ahead", HOUR + 60_000]] as const) {
      const { id, res } = await dm(`dated-${name}`, signer, new Date(Date.now() + offset));
      expect([name, res.status]).toEqual([name, 401]);
      expect(await stored(id)).toBeNull();
    }
    expect(await statusCount()).toBe(before);
  });

  test("within the hour, either way: taken", async () => {
    const signer = await rotateBack();
    for (const [name, offset] of [["earlier", -HOUR + 120_000], ["later", HOUR - 120_000]] as const) {
      const { id, res } = await dm(`dated-${name}`, signer, new Date(Date.now() + offset));
      expect([name, res.status]).toEqual([name, 202]);
      await eventually(() => stored(id), `the note dated ${name} stored`);
    }
  });
});

/** Serves rita's first key again (the server's own pair; the test above rotated it) and answers it, once it verifies. */
async function rotateBack(): Promise<CryptoKey> {
  remote.actor("rita", "rita");
  // The first request after a rotation fetches the key again; it verifies with the key served.
  const { id, res } = await dm(`rotated-back-${Date.now()}`, remote.privateKey);
  expect(res.status).toBe(202);
  await eventually(() => stored(id), "the note signed after rotating back stored");
  return remote.privateKey;
}
