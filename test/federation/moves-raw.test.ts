import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { configureLog } from "../../src/log.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Moves received from servers whose documents Fedify's parser reads differently from Mastodon:
// GoToSocial (v0.19) redefines alsoKnownAs in its @context without "@type": "@id", so its values
// are plain strings to JSON-LD and Fedify sees no alias; Mastodon reads the raw values and
// believes the Move. Every Move that is refused is logged with its reason.

/** GoToSocial's actor @context, as its serializer writes it (internal/typeutils, TestAccountToASAliasedAndMoved). */
const GOTOSOCIAL_CONTEXT = [
  "https://w3id.org/security/v1",
  "https://www.w3.org/ns/activitystreams",
  {
    alsoKnownAs: "as:alsoKnownAs",
    discoverable: "toot:discoverable",
    featured: { "@id": "toot:featured", "@type": "@id" },
    manuallyApprovesFollowers: "as:manuallyApprovesFollowers",
    movedTo: { "@id": "as:movedTo", "@type": "@id" },
    toot: "http://joinmastodon.org/ns#",
  },
];

let a: TestServer;
let alice: TestUser;
let raw: Awaited<ReturnType<typeof startRawServer>>;
const lines: string[] = [];

beforeAll(async () => {
  configureLog({ enabled: true, sink: (line) => lines.push(line) });
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  raw = await startRawServer("127.0.0.28");
});
afterAll(async () => {
  configureLog({ enabled: false });
  await a?.close();
  raw?.stop();
});

const aliceUri = () => `${a.base}/users/alice`;
const inbox = () => `${a.base}/users/alice/inbox`;
const relationship = async (id: number) => (await alice.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(id) } })).body[0];

/** An actor on the raw server that alice follows (its Accept sent by hand). */
async function followed(path: string) {
  const uri = raw.actor(path, path);
  const account = (await a.federation!.resolveActor(uri))!;
  expect((await alice.client.post(`/api/v1/accounts/${account.id}/follow`)).body.requested).toBe(true);
  const accepted = await raw.post(inbox(), uri, { id: `${uri}#accepts/1`, type: "Accept", object: { type: "Follow", actor: aliceUri(), object: uri } });
  expect(accepted.status).toBe(202);
  await eventually(async () => (await relationship(account.id)).following === true, `alice follows ${path}`);
  return account;
}

const move = (from: string, to: string, id: string) => raw.post(inbox(), from, { id: `${from}#moves/${id}`, type: "Move", object: from, target: to });
const refusals = () => lines.filter((l) => l.includes('msg="Move refused"'));

describe("receiving Move", () => {
  test("from GoToSocial: the new actor's alsoKnownAs, plain strings under its @context, is read as Mastodon reads it; alice follows the new account", async () => {
    const old = await followed("gts-old");
    const target = raw.actor("gts-new", "gtsnew", { "@context": GOTOSOCIAL_CONTEXT, alsoKnownAs: [old.uri], manuallyApprovesFollowers: false });
    expect((await move(old.uri!, target, "1")).status).toBe(202);
    await eventually(async () => (await alice.client.get(`/api/v1/accounts/${old.id}`)).body.moved?.uri === target, () => `the old account shows moved (log: ${lines.filter((l) => l.includes("Move")).join("; ")})`);
    const moved = (await a.ctx.services.remoteAccounts.byUri(target))!;
    expect(await relationship(moved.id)).toMatchObject({ requested: true });
    expect(await relationship(old.id)).toMatchObject({ following: false });
    expect(lines.some((l) => l.includes('msg="Move accepted"') && l.includes(target))).toBe(true);
  });

  test("aliases given as objects with an id are read too; a javascript: alias is not", async () => {
    const old = await followed("obj-old");
    const target = raw.actor("obj-new", "objnew", { alsoKnownAs: [{ id: "javascript:alert(1)" }, { id: old.uri }] });
    expect((await move(old.uri!, target, "1")).status).toBe(202);
    await eventually(async () => (await alice.client.get(`/api/v1/accounts/${old.id}`)).body.moved?.uri === target, "the old account shows moved");
    expect((await a.ctx.services.remoteAccounts.byUri(target))).toBeDefined();
  });

  test("refused Moves change nothing and are logged with the reason: no alias, a forged alias, a new account that cannot be fetched", async () => {
    const old = await followed("refused-old");
    const elsewhere = raw.actor("refused-other", "other", { "@context": GOTOSOCIAL_CONTEXT, alsoKnownAs: [`${raw.base}/actors/somebody-else`] });
    const scheme = raw.actor("refused-scheme", "scheme", { "@context": GOTOSOCIAL_CONTEXT, alsoKnownAs: [`javascript:${old.uri}`] });
    const cases: [string, string][] = [
      [elsewhere, "the new account does not name the old one among its aliases"],
      [scheme, "the new account does not name the old one among its aliases"],
      [`${raw.base}/actors/missing`, "the new account could not be fetched"],
      [old.uri!, "an account cannot move to itself"],
    ];
    for (const [i, [target, reason]] of cases.entries()) {
      const before = refusals().length;
      expect((await move(old.uri!, target, `refused-${i}`)).status).toBe(202);
      await eventually(() => refusals().length > before, `the refusal of the Move to ${target} is logged`);
      const logged = refusals().at(-1)!;
      expect(logged).toContain(reason);
      expect(logged).toContain(`target=${target}`);
    }
    // Another actor's move, and one with no target, are refused before any fetch.
    const other = raw.actor("refused-stranger", "stranger");
    const forged: [Record<string, unknown>, string][] = [
      [{ id: `${other}#moves/1`, type: "Move", object: old.uri, target: elsewhere }, `an actor moves only itself (its object is ${old.uri})`],
      [{ id: `${other}#moves/2`, type: "Move", object: other }, "it names no new account (target)"],
    ];
    for (const [activity, reason] of forged) {
      const before = refusals().length;
      expect((await raw.post(inbox(), other, activity)).status).toBe(202);
      await eventually(() => refusals().length > before, `the refusal (${reason}) is logged`);
      expect(refusals().at(-1)).toContain(reason);
    }
    expect((await a.ctx.services.accounts.get(old.id))!.movedToAccountId).toBeNull();
    expect(await relationship(old.id)).toMatchObject({ following: true });
    expect((await alice.client.get(`/api/v1/accounts/${old.id}`)).body.moved).toBeUndefined();
  });
});
