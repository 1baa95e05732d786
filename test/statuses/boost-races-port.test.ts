import { afterEach, describe, expect, test } from "bun:test";
import { statuses, type StatusRow } from "../../src/db/schema.ts";
import { StatusActionService } from "../../src/services/statuses/actions.ts";
import { Counters } from "../../src/services/statuses/counters.ts";
import { NewStatuses } from "../../src/services/statuses/new-status.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";
import { statusesOnPort } from "../support/statuses-on-port.ts";

/**
 * Boosts made by several tasks at once (issue 31): a double tap of Boost, the same Announce
 * stored twice. On PostgreSQL each task finds no boost; the unique index on (account, original)
 * keeps one, and only the task that wrote it counts and announces it. Run on both databases.
 */

afterEach(closePortArms);

const TIMES = 5;

/** The statuses the arm's SQLite services wrote, in the port's database too. */
async function copyStatuses(arm: PortArm) {
  if (arm.port.dialect !== "postgres") return;
  const rows = await arm.t.database.port.orm.select().from(statuses);
  if (rows.length) await arm.port.orm.insert(arm.port.tables.statuses).values(rows).onConflictDoNothing();
}

/**
 * The family on the arm's port, with the counters a new or removed status moves (as the server's
 * consequences do); its actions remove a boost through the port's removal.
 */
function family(arm: PortArm) {
  const f = statusesOnPort(arm);
  const { t, port } = arm;
  const actions = new StatusActionService(port, t.ids, t.clock, t.services.reader, t.services.moderation, f.removal, f.events, new NewStatuses(port));
  const counters = new Counters(arm.port, arm.t.services.renderCache);
  const created: number[] = [];
  f.events.within("status.created", async (e) => {
    created.push(e.status.id);
    await counters.statusAdded(e.status);
  });
  f.events.within("status.deleted", (e) => counters.statusRemoved(e.status));
  return { actions, created };
}

const counted = async (arm: PortArm, original: number, booster: number) => ({
  boosts: Number((await arm.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses WHERE reblog_of_id = ?", [original]))!.n),
  reblogs: Number((await arm.port.get<{ n: number }>("SELECT reblogs_count AS n FROM statuses WHERE id = ?", [original]))!.n),
  statuses: Number((await arm.port.get<{ n: number }>("SELECT statuses_count AS n FROM accounts WHERE id = ?", [booster]))!.n),
});

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`boosts made at once on ${arm.name}`, () => {
    test("five boosts of one status at once (a double tap): one boost, counted and told once, every call answered with it; one unboost takes it back", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const status = await a.t.post(alice, { text: "boost me once" });
      await copyStatuses(a);
      const { actions, created } = family(a);
      const before = await counted(a, status.id, bob.id);

      const results = await Promise.allSettled(Array.from({ length: TIMES }, () => actions.reblog(bob.id, status.id, undefined)));
      expect(results.map((r) => r.status)).toEqual(Array(TIMES).fill("fulfilled"));
      const ids = new Set(results.map((r) => (r as PromiseFulfilledResult<StatusRow>).value.id));
      expect(ids.size).toBe(1);
      expect(created).toEqual([...ids]);
      expect(await counted(a, status.id, bob.id)).toEqual({ boosts: 1, reblogs: before.reblogs + 1, statuses: before.statuses + 1 });

      await actions.unreblog(bob.id, status.id);
      expect(await counted(a, status.id, bob.id)).toEqual(before);
    });

    test("the same remote Announce stored by five tasks at once: one boost at its IRI, counted once", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const zoe = await a.mirror(await a.t.remote("zoe", "remote.example"));
      const status = await a.t.post(alice, { text: "announce me" });
      await copyStatuses(a);
      const { actions, created } = family(a);
      const uri = "https://remote.example/users/zoe/statuses/1/activity";
      const results = await Promise.allSettled(Array.from({ length: TIMES }, () => actions.reblog(zoe.id, status.id, "public", { uri, createdAt: a.t.clock.now() })));
      expect(results.map((r) => r.status)).toEqual(Array(TIMES).fill("fulfilled"));
      expect(new Set(results.map((r) => (r as PromiseFulfilledResult<StatusRow>).value.id)).size).toBe(1);
      expect(await a.port.all("SELECT account_id, reblog_of_id FROM statuses WHERE uri = ?", [uri])).toEqual([{ account_id: zoe.id, reblog_of_id: status.id }]);
      expect(created).toHaveLength(1);
      expect((await counted(a, status.id, zoe.id)).reblogs).toBe(1);
    });
  });
}
