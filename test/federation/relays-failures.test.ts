import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signJsonLd } from "@fedify/fedify";
import { cliBeside } from "../support/cli.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startRelay, type Relay } from "../support/relay.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The domain rules hold for a relay and for the authors it carries, here under WHITELIST_MODE
// (blocks are tested with the LitePub relay): nothing of a domain off the allow list is
// taken, whether it wrote the status or relayed it, and nothing is sent to a relay off it. A
// relay that goes away fails its deliveries, which `relays list` shows; the server goes on.

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

let w: TestServer;
let relay: Relay;
let raw: Awaited<ReturnType<typeof startRawServer>>;
let wendy: TestUser;
let dave: string;

const statusByUri = async (uri: string) => (await w.database.port.get("SELECT id FROM statuses WHERE uri = ?", [uri])) ?? null;
const counts = () => w.database.port.get("SELECT (SELECT count(*) FROM statuses) AS statuses, (SELECT count(*) FROM accounts) AS accounts");
const stateOf = async (url: string) => (await w.database.port.get<{ state: string }>("SELECT state FROM relays WHERE url = ?", [url]))?.state;
const host = (url: string) => new URL(url).hostname;

/** A public Create by dave (or another actor of his server), LD-signed by his key. */
async function daveCreate(name: string, author = dave) {
  const id = `${author}/statuses/${name}`;
  const create = {
    "@context": MASTODON_CONTEXT,
    id: `${id}/activity`,
    type: "Create",
    actor: author,
    to: [PUBLIC],
    object: { id, type: "Note", attributedTo: author, to: [PUBLIC], content: `<p>dave ${name}</p>` },
  };
  return { uri: id, signed: (await signJsonLd(create, raw.privateKey, new URL(`${author}#main-key`), {})) as Record<string, unknown> };
}

beforeAll(async () => {
  [w, relay, raw] = await Promise.all([startTestServer({ HOST: "127.0.0.91", ALLOW_PRIVATE_ADDRESSES: "true", WHITELIST_MODE: "true" }), startRelay("127.0.0.93", "mastodon"), startRawServer("127.0.0.94")]);
  wendy = await createUser(w, "wendy");
  dave = raw.actor("dave", "dave");
  await w.ctx.services.federationDomains.allow(host(relay.base));
  await w.ctx.services.relays.add(relay.inbox);
  await eventually(async () => (await stateOf(relay.inbox)) === "accepted", "the relay accepted under WHITELIST_MODE", 20_000);
});
afterAll(async () => {
  await w?.close();
  relay?.stop();
  raw?.stop();
});

describe("relays under WHITELIST_MODE", () => {
  test("a status whose author is off the allow list is not taken through an allowed relay; once allowed, it is", async () => {
    const refused = await daveCreate("1");
    const before = await counts();
    // Its author's key is not fetched (the domain is refused), so the relay's signature is all there is: 401.
    expect((await relay.post(`${w.base}/inbox`, refused.signed)).status).toBe(401);
    expect(await statusByUri(refused.uri)).toBeNull();
    expect(await counts()).toEqual(before);

    await w.ctx.services.federationDomains.allow(host(dave));
    // Another actor of that server: Fedify remembers for 10 minutes that dave's key could not be had.
    const allowed = await daveCreate("2", raw.actor("dave2", "dave2"));
    expect((await relay.post(`${w.base}/inbox`, allowed.signed)).status).toBe(202);
    expect(await statusByUri(allowed.uri)).not.toBeNull();
  });

  test("a relay off the allow list: what it forwards is refused at the door, it is sent nothing, and it cannot be added", async () => {
    await w.ctx.services.federationDomains.disallow(host(relay.base));
    try {
      const forwarded = await daveCreate("3");
      const before = await counts();
      const res = await relay.post(`${w.base}/inbox`, forwarded.signed);
      expect([res.status, await res.json()]).toEqual([403, { error: `Public key not found for key ${relay.actor}#main-key` }]);
      expect(await counts()).toEqual(before);

      const creates = relay.of("Create").length;
      await postStatus(wendy, { status: "not for a refused relay", visibility: "public" });
      await w.federation!.idle();
      expect(relay.of("Create")).toHaveLength(creates);

      const other = `http://${host(relay.base)}:1/inbox`;
      expect(await cliBeside(w)(["relays", "add", other])).toMatchObject({ code: 1, stderr: `rookery: ${host(relay.base)} is a domain this server does not federate with\n` });
      expect(await w.database.port.all("SELECT url FROM relays")).toEqual([{ url: relay.inbox }]);
    } finally {
      await w.ctx.services.federationDomains.allow(host(relay.base));
    }
  });
});

describe("a relay that goes away", () => {
  test("deliveries to it fail and relays list says so; posting, timelines and unsubscribing go on", async () => {
    relay.down = true;
    const posted = await postStatus(wendy, { status: "while the relay is down", visibility: "public" });
    const cli = cliBeside(w);
    const list = await eventually(async () => {
      const out = (await cli(["relays", "list"])).stdout;
      return out.includes("failing: ") ? out : null;
    }, "the failed delivery shown", 20_000);
    expect(list).toContain(`${relay.inbox}\tmastodon\taccepted\t`);
    expect(list).toMatch(/failing: \d+ failed attempt\(s\), the last at \S+: /);
    expect((await cli(["federation", "status"])).stdout).toContain(`${host(relay.base)}:`);

    // Gone for good: the server keeps serving, and the relay can be dropped.
    relay.stop();
    expect((await wendy.client.get(`/api/v1/statuses/${posted.id}`)).status).toBe(200);
    expect((await wendy.client.get("/api/v1/timelines/public", { query: { local: "true" } })).body.map((s: { id: string }) => s.id)).toContain(posted.id);
    const removed = await cli(["relays", "remove", relay.inbox]);
    expect([removed.code, removed.stdout]).toEqual([0, `Unsubscribed from ${relay.inbox}: Undo of the Follow sent\n`]);
    expect((await cli(["relays", "list"])).stdout).toBe("No relays.\n");
    await postStatus(wendy, { status: "after the relay went", visibility: "public" });
  });
});

describe("a relay at an address this server may not reach", () => {
  test("its Follow is refused for the address, and relays list and federation status show that rather than ok", async () => {
    // ALLOW_PRIVATE_ADDRESSES is off: deliveries to loopback are refused before they are sent.
    const guarded = await startTestServer({ HOST: "127.0.0.95" });
    try {
      const inbox = "http://127.0.0.96:9/inbox";
      const cli = cliBeside(guarded);
      expect((await cli(["relays", "add", inbox, "--kind", "mastodon"])).code).toBe(0);
      await guarded.federation!.idle();
      const list = (await cli(["relays", "list"])).stdout;
      expect(list).toContain(`${inbox}\tmastodon\tpending\t`);
      expect(list).toMatch(/failing: 1 failed attempt\(s\), the last at \S+: refused: .*127\.0\.0\.96.*not a public address/);
      expect((await cli(["federation", "status"])).stdout).toContain("\n127.0.0.96:9\t1\t-\t");
    } finally {
      await guarded.close();
    }
  });
});
