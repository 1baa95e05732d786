import { afterEach, describe, expect, test } from "bun:test";
import type { AccountRow } from "../../src/db/schema.ts";
import { EventBus } from "../../src/infra/events.ts";
import { RemoteAccounts } from "../../src/services/remote/accounts.ts";
import { FederationDomains } from "../../src/services/remote/domains.ts";
import { GoneAccounts } from "../../src/services/remote/gone-accounts.ts";
import { remoteActorInput } from "../support/remote-actor-input.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Remote accounts stored by several tasks at once (issue 31: an inbox retry while a search
 * fetches the actor), and an actor whose IRI changed while its username on its domain stayed
 * (its server reinstalled, moved from http to https): the same account, as Mastodon keeps it.
 * Run on both databases.
 */

afterEach(closePortArms);

const TIMES = 5;

const actor = remoteActorInput;

async function remoteOn({ t, port }: PortArm) {
  const gone = new GoneAccounts(port, t.services.follows, t.services.removal);
  const told: number[] = [];
  const events = new EventBus(port);
  events.within("account.updated", (e) => void told.push(e.accountId));
  const domains = new FederationDomains(port, t.ids, t.clock, events, false, "rookery.test", gone);
  await domains.load();
  return { remote: new RemoteAccounts(port, t.ids, t.clock, events, domains, null, gone), told };
}

const rowsOf = (arm: PortArm, domain: string) => arm.port.all<{ id: number; username: string; uri: string }>("SELECT id, username, uri FROM accounts WHERE domain = ? ORDER BY id", [domain]);

function fulfilled<T>(results: PromiseSettledResult<T>[]): T[] {
  expect(results.map((r) => r.status)).toEqual(Array(results.length).fill("fulfilled"));
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`remote accounts stored at once on ${arm.name}`, () => {
    test("an actor's first sighting by five tasks at once: one row, every call answered with it", async () => {
      const a = await arm.open();
      const { remote } = await remoteOn(a);
      const stored = fulfilled(await Promise.allSettled(Array.from({ length: TIMES }, () => remote.upsert(actor("https://m.example/users/zoe")))));
      const rows = await rowsOf(a, "m.example");
      expect(rows).toEqual([{ id: rows[0]!.id, username: "zoe", uri: "https://m.example/users/zoe" }]);
      expect(stored.map((s) => s?.id)).toEqual(Array(TIMES).fill(rows[0]!.id));
    });

    test("a new IRI for a stored username on its domain (the server moved to https): the row moves to it with its follows, told; the old IRI finds nothing", async () => {
      const a = await arm.open();
      const { remote, told } = await remoteOn(a);
      const alice = await a.mirror(await a.t.local("alice"));
      const old = (await remote.upsert(actor("http://m.example/users/zoe")))!;
      await a.port.run("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)", [a.t.ids.next(), alice.id, old.id, a.t.clock.now()]);

      const moved = await remote.upsert(actor("https://m.example/users/zoe", { displayName: "Zoe on https", username: "Zoe" }));
      expect(moved).toMatchObject({ id: old.id, username: "Zoe", uri: "https://m.example/users/zoe", inboxUrl: "https://m.example/users/zoe/inbox", displayName: "Zoe on https" });
      expect(told).toEqual([old.id]);
      expect(await remote.byUri("http://m.example/users/zoe")).toBeUndefined();
      expect(await a.port.all("SELECT target_account_id FROM follows WHERE account_id = ?", [alice.id])).toEqual([{ target_account_id: old.id }]);
      expect((await rowsOf(a, "m.example")).length).toBe(1);
    });

    test("a new IRI for a stored username, seen by five tasks at once: one row, at the new IRI", async () => {
      const a = await arm.open();
      const { remote } = await remoteOn(a);
      const old = (await remote.upsert(actor("https://m.example/users/zoe")))!;
      const reinstalled = "https://m.example/ap/users/1234";
      const stored = fulfilled(await Promise.allSettled(Array.from({ length: TIMES }, () => remote.upsert(actor(reinstalled, { username: "zoe" })))));
      expect(stored.map((s) => s?.id)).toEqual(Array(TIMES).fill(old.id));
      expect(await rowsOf(a, "m.example")).toEqual([{ id: old.id, username: "zoe", uri: reinstalled }]);
    });

    test("an actor renamed to a name another IRI of its domain still holds: its profile updated, its stored name kept; the name's holder untouched", async () => {
      const a = await arm.open();
      const { remote } = await remoteOn(a);
      const zoe = (await remote.upsert(actor("https://m.example/users/zoe")))!;
      const bo = (await remote.upsert(actor("https://m.example/users/bo")))!;
      const renamed = await remote.upsert(actor("https://m.example/users/zoe", { username: "bo", displayName: "Zoe, now bo" }));
      expect(renamed).toMatchObject({ id: zoe.id, username: "zoe", displayName: "Zoe, now bo" } satisfies Partial<AccountRow>);
      expect(await rowsOf(a, "m.example")).toEqual([
        { id: zoe.id, username: "zoe", uri: "https://m.example/users/zoe" },
        { id: bo.id, username: "bo", uri: "https://m.example/users/bo" },
      ]);
      // A free name is taken as before.
      expect(await remote.upsert(actor("https://m.example/users/zoe", { username: "zed" }))).toMatchObject({ id: zoe.id, username: "zed" });
    });
  });
}
