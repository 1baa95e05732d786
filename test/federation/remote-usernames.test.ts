import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Remote usernames under Mastodon's rule for them (Account::USERNAME_ONLY_RE): an actor whose
// preferredUsername would show in `acct` as something it is not (homoglyphs, zero-width and
// direction-changing characters) is refused, whichever way it would have been stored.

let a: TestServer;
let alice: TestUser;
let evil: Awaited<ReturnType<typeof startRawServer>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  evil = await startRawServer("127.0.0.52");
});
afterAll(async () => {
  evil?.stop();
  await a?.close();
});

const counts = () => a.database.port.get("SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM statuses) AS statuses");
const resolve = (q: string) => alice.client.get("/api/v2/search", { query: { q, resolve: "true" } });
const host = () => new URL(evil.base).host;

describe("remote usernames", () => {
  test("refused: homoglyphs, zero-width and right-to-left characters, and what Mastodon's rule leaves out; neither a search nor an inbound Note stores them", async () => {
    const refused = [
      // The example: a Cyrillic а, a zero-width space, a right-to-left override.
      "аdmin\u200b\u202egnp.exe",
      "admin\u200b",
      "\u202eadmin",
      "adm\u200dín",
      "ſtaff",
      "\u212Aelvin",
      "ad min",
      "admin@evil.example",
      "-admin",
      "admin.",
      "a_b.-",
      "",
    ];
    const before = await counts();
    for (const [i, name] of refused.entries()) {
      const actor = evil.actor(`refused${i}`, name);
      const found = await resolve(actor);
      expect([name, found.status, found.body]).toEqual([name, 200, { accounts: [], statuses: [], hashtags: [] }]);
      const note = `${evil.base}/notes/refused${i}`;
      const res = await evil.post(`${a.base}/users/alice/inbox`, actor, {
        id: `${note}/activity`,
        type: "Create",
        to: [`${a.base}/users/alice`],
        object: { id: note, type: "Note", attributedTo: actor, to: [`${a.base}/users/alice`], content: "<p>hi alice</p>", tag: [{ type: "Mention", href: `${a.base}/users/alice` }] },
      });
      // Taken in (as Mastodon answers), and dropped.
      expect([name, res.status]).toEqual([name, 202]);
    }
    await a.federation!.idle();
    expect(await counts()).toEqual(before);
    expect((await alice.client.get("/api/v1/notifications")).body).toEqual([]);
  });

  test("accepted: letters, digits and underscores, with dots and hyphens between them", async () => {
    for (const name of ["first.last-name_1", "Carol", "_x_", "a..b--c", "9"]) {
      const actor = evil.actor(`ok-${name}`, name);
      const found = await resolve(actor);
      expect(found.status).toBe(200);
      expect(found.body.accounts.map((x: any) => [x.username, x.acct, x.uri])).toEqual([[name, `${name}@${host()}`, actor]]);
    }
  });

  test("a stored account whose Update says a refused name keeps its name (the Update is not taken)", async () => {
    const actor = evil.actor("dave", "dave", { name: "Dave" });
    const stored = (await resolve(actor)).body.accounts[0];
    expect(stored).toMatchObject({ username: "dave", acct: `dave@${host()}`, display_name: "Dave" });
    const renamed = evil.actor("dave", "dаve\u202e", { name: "Dave (renamed)" });
    const res = await evil.post(`${a.base}/users/alice/inbox`, renamed, {
      id: `${evil.base}/updates/dave`,
      type: "Update",
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      object: { id: renamed, type: "Person", preferredUsername: "dаve\u202e", name: "Dave (renamed)", inbox: `${renamed}/inbox` },
    });
    expect(res.status).toBe(202);
    await a.federation!.idle();
    expect((await alice.client.get(`/api/v1/accounts/${stored.id}`)).body).toEqual(stored);
  });
});
