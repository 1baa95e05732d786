import { afterEach, describe, expect, test } from "bun:test";
import { EventBus } from "../../src/infra/events.ts";
import { InstanceInfo } from "../../src/services/instance-info.ts";
import { ReportService } from "../../src/services/reports.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Reports on the database port (issue 31): the same service on SQLite and on PostgreSQL. The
 * accounts and statuses a report names are read by services not yet converted, from SQLite on
 * both arms; the report and the rules it names are written and read through the port. The API's
 * behaviour is tested over HTTP in reports.test.ts.
 */

afterEach(closePortArms);

async function setUp({ t, port, mirror }: PortArm) {
  const alice = await mirror(await t.local("alice"));
  const bob = await mirror(await t.local("bob"));
  const carol = await mirror(await t.remote("carol", "elsewhere.example"));
  // Told as the server's listeners are: within the write's transaction, and once it committed.
  const events = new EventBus(port);
  const within: boolean[] = [];
  const committed: number[] = [];
  const told: unknown[] = [];
  events.within("report.created", (e) => void (within.push(port.inTransaction), told.push(e)));
  events.afterCommit("report.created", (e) => committed.push(e.reportId));
  const s = t.services;
  const info = new InstanceInfo(port, t.ids, t.clock, "http://rookery.test", "open");
  const reports = new ReportService(port, t.ids, t.clock, "http://rookery.test", s.accounts, s.reader, info, events);
  return { alice, bob, carol, info, reports, within, committed, told };
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`reports on ${arm.name}`, () => {
    test("a report is stored unresolved and told once committed; the operator's list, open ones or all, oldest first", async () => {
      const opened = await arm.open();
      const { t, port } = opened;
      const { alice, bob, carol, info, reports, within, committed, told } = await setUp(opened);
      const one = await t.post(bob, { text: "spam one" });
      const two = await t.post(bob, { text: "spam two", visibility: "unlisted" });

      const first = await reports.create(alice.id, { accountId: bob.id, statusIds: [one.id, two.id, one.id], ruleIds: [], comment: "Buy now!", category: "spam", forward: true });
      expect(first.report).toMatchObject({ accountId: alice.id, targetAccountId: bob.id, category: "spam", comment: "Buy now!", forwarded: false, actionTakenAt: null, createdAt: t.clock.now() });
      expect(first.statusIds).toEqual([one.id, two.id]);
      expect(first.ruleIds).toBeNull();
      expect(first.target.id).toBe(bob.id);
      expect(within).toEqual([true]);
      expect(committed).toEqual([first.report.id]);
      // Who reported whom goes with the event: staff's notification needs no read of the report.
      expect(told).toEqual([{ type: "report.created", reportId: first.report.id, accountId: alice.id, targetAccountId: bob.id }]);
      expect(await reports.find(first.report.id)).toEqual(first);
      expect(await reports.find(404)).toBeUndefined();

      const rule = await info.addRule("No spam");
      // Only a remote account's server can be told.
      const second = await reports.create(alice.id, { accountId: carol.id, statusIds: [], ruleIds: [rule.id], forward: true });
      expect(second.report).toMatchObject({ category: "violation", forwarded: true, comment: "" });
      expect(second.ruleIds).toEqual([rule.id]);

      expect((await reports.list(false)).map((r) => r.report)).toEqual([first.report, second.report]);
      await port.run("UPDATE reports SET action_taken_at = ? WHERE id = ?", [t.clock.now(), first.report.id]);
      expect((await reports.list(false)).map((r) => r.report.id)).toEqual([second.report.id]);
      expect((await reports.list(true)).map((r) => r.report.id)).toEqual([first.report.id, second.report.id]);
      expect((await reports.list(true))[1]).toEqual(second);
    });

    test("unknown accounts and statuses are not found, bad fields are refused; nothing is stored or told", async () => {
      const opened = await arm.open();
      const { t, port } = opened;
      const { alice, bob, carol, reports, within, committed } = await setUp(opened);
      const bobs = await t.post(bob, { text: "mine" });
      const secret = await t.post(bob, { text: "for nobody", visibility: "direct" });
      for (const [input, status, message] of [
        [{ accountId: null, statusIds: [], ruleIds: [] }, 404, "Record not found"],
        [{ accountId: 404, statusIds: [], ruleIds: [] }, 404, "Record not found"],
        [{ accountId: carol.id, statusIds: [bobs.id], ruleIds: [] }, 404, "Record not found"],
        [{ accountId: bob.id, statusIds: [secret.id], ruleIds: [] }, 404, "Record not found"],
        [{ accountId: bob.id, statusIds: [null], ruleIds: [] }, 404, "Record not found"],
        [{ accountId: bob.id, statusIds: [], ruleIds: [], comment: "x".repeat(1001) }, 422, "Validation failed: Comment is too long (maximum is 1000 characters)"],
        [{ accountId: bob.id, statusIds: [], ruleIds: [], category: "rude" }, 422, "Validation failed: Category is not included in the list"],
        [{ accountId: bob.id, statusIds: [], ruleIds: [12345] }, 422, "Validation failed: Rule ids does not reference valid rules"],
      ] as const) {
        const refused = await reports.create(alice.id, { ...input, statusIds: [...input.statusIds], ruleIds: [...input.ruleIds] }).catch((e) => e);
        expect(refused).toMatchObject({ status, message });
      }
      expect(await port.all("SELECT * FROM reports")).toEqual([]);
      expect(within).toEqual([]);
      expect(committed).toEqual([]);
    });
  });
}
