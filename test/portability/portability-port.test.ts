import { afterEach, describe, expect, test } from "bun:test";
import type { DatabasePort } from "../../src/db/port.ts";
import type { AccountRow } from "../../src/db/schema.ts";
import { ExportService } from "../../src/services/portability/exports.ts";
import { ImportActions } from "../../src/services/portability/import-actions.ts";
import { ImportOverwrite } from "../../src/services/portability/import-overwrite.ts";
import { ImportService } from "../../src/services/portability/imports.ts";
import { ImportWorker } from "../../src/services/portability/import-worker.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";
import { eventually } from "../support/wait.ts";

/**
 * The CSV exports and imports on the database port (issue 31): the same services on SQLite and
 * on PostgreSQL. The API's behaviour is tested over HTTP in round-trip.test.ts, import-rate.test.ts
 * and the settings pages' tests; this holds the family's SQL on both. The blocks an import makes
 * go through ModerationService, not yet converted: they land in the arm's SQLite services (`t`).
 */

afterEach(closePortArms);

const text = async (lines: AsyncIterable<string>) => {
  let out = "";
  for await (const line of lines) out += line;
  return out;
};

/** What the importing account blocks, in the services that made the blocks (SQLite). */
const blockedBy = async (arm: PortArm, accountId: number) =>
  (await arm.t.database.port.all<{ username: string }>("SELECT a.username FROM blocks b JOIN accounts a ON a.id = b.target_account_id WHERE b.account_id = ? ORDER BY a.username", [accountId])).map((r) => r.username);

/** The port's blocks or follows made equal to the services' (the same table on the SQLite arm). */
async function mirrorRows(arm: PortArm, table: "blocks" | "follows", accountId: number) {
  if (arm.port === arm.t.database.port) return;
  const rows = await arm.t.database.port.orm.select().from(arm.t.database.port.tables[table]);
  await arm.port.run(`DELETE FROM ${table} WHERE account_id = ?`, [accountId]);
  if (rows.length > 0) await arm.port.orm.insert(arm.port.tables[table]).values(rows as never);
}

function importing(arm: PortArm, port: DatabasePort) {
  const s = arm.t.services;
  const deps = { db: port, follows: s.follows, moderation: s.moderation, domainBlocks: s.domainBlocks, lists: s.lists, statusActions: s.statusActions, publicUrl: "http://rookery.test" };
  const actions = new ImportActions({ ...deps, search: s.search, remoteAccounts: s.remoteAccounts, refuses: () => false, answers: async () => true });
  const worker = new ImportWorker(port, arm.t.clock, actions, new ImportOverwrite(deps), { perHost: null, total: null });
  const imports = new ImportService(port, arm.t.ids, arm.t.clock, "rookery.test", () => worker.wake());
  return { imports, worker, overwrite: new ImportOverwrite(deps) };
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`CSV exports and imports on ${arm.name}`, () => {
    test("every list is exported as Mastodon's files, newest first where Mastodon writes them so, and counted", async () => {
      const opened = await arm.open();
      const { t, port, mirror } = opened;
      const [alice, bob, carol, dave] = [await mirror(await t.local("alice")), await mirror(await t.local("bob")), await mirror(await t.remote("carol", "elsewhere.test")), await mirror(await t.local("dave"))] as AccountRow[];
      const { follows, blocks, mutes, accountDomainBlocks, lists, listAccounts, bookmarks, statuses } = port.tables;
      const now = t.clock.now();
      const id = () => t.ids.next();
      await port.orm.insert(follows).values([
        { id: id(), accountId: alice!.id, targetAccountId: carol!.id, createdAt: now },
        { id: id(), accountId: alice!.id, targetAccountId: bob!.id, showReblogs: false, notify: true, languages: '["en","de"]', createdAt: now },
        { id: id(), accountId: carol!.id, targetAccountId: alice!.id, createdAt: now },
      ]);
      const friends = id();
      await port.orm.insert(lists).values({ id: friends, accountId: alice!.id, title: "Friends, old", createdAt: now });
      await port.orm.insert(listAccounts).values([
        { listId: friends, accountId: carol!.id, createdAt: now },
        { listId: friends, accountId: bob!.id, createdAt: now },
      ]);
      await port.orm.insert(blocks).values({ id: id(), accountId: alice!.id, targetAccountId: dave!.id, createdAt: now });
      await port.orm.insert(mutes).values([
        { id: id(), accountId: alice!.id, targetAccountId: bob!.id, hideNotifications: false, createdAt: now },
        // Over: neither exported nor counted.
        { id: id(), accountId: alice!.id, targetAccountId: dave!.id, expiresAt: now - 1, createdAt: now },
      ]);
      await port.orm.insert(accountDomainBlocks).values({ id: id(), accountId: alice!.id, domain: "spam.test", createdAt: now });
      const local = id();
      const remote = id();
      await port.orm.insert(statuses).values([
        { id: local, accountId: bob!.id, visibility: "public", conversationId: local, createdAt: now },
        { id: remote, accountId: carol!.id, uri: "https://elsewhere.test/users/carol/statuses/1", visibility: "public", conversationId: remote, createdAt: now },
      ]);
      await port.orm.insert(bookmarks).values([
        { id: id(), accountId: alice!.id, statusId: local, createdAt: now },
        { id: id(), accountId: alice!.id, statusId: remote, createdAt: now },
      ]);

      const exports = new ExportService(port, t.clock, "http://rookery.test", "rookery.test");
      expect(await text(exports.lines(alice!.id, "following"))).toBe(
        "Account address,Show boosts,Notify on new posts,Languages\nbob@rookery.test,false,true,\"en, de\"\ncarol@elsewhere.test,true,false,\n",
      );
      expect(await text(exports.lines(alice!.id, "followers"))).toBe("Account address\ncarol@elsewhere.test\n");
      expect(await text(exports.lines(alice!.id, "lists"))).toBe(`"Friends, old",bob@rookery.test\n"Friends, old",carol@elsewhere.test\n`);
      expect(await text(exports.lines(alice!.id, "blocks"))).toBe("dave@rookery.test\n");
      expect(await text(exports.lines(alice!.id, "mutes"))).toBe("Account address,Hide notifications\nbob@rookery.test,false\n");
      expect(await text(exports.lines(alice!.id, "domain_blocks"))).toBe("spam.test\n");
      expect(await text(exports.lines(alice!.id, "bookmarks"))).toBe(`https://elsewhere.test/users/carol/statuses/1\nhttp://rookery.test/users/bob/statuses/${local}\n`);
      expect(await text(exports.lines(bob!.id, "following"))).toBe("Account address,Show boosts,Notify on new posts,Languages\n");
      expect(await exports.stats(alice!.id)).toMatchObject({ listsCount: 1, blocksCount: 1, mutesCount: 1, domainBlocksCount: 1, bookmarksCount: 2 });
    });

    test("a file is queued, worked off, reported; an overwrite removes what it does not name", async () => {
      const opened = await arm.open();
      const { t, port, mirror } = opened;
      const alice = await mirror(await t.local("alice"));
      for (const name of ["bob", "dave"]) await mirror(await t.local(name));
      const { imports, worker, overwrite } = importing(opened, port);
      worker.start();
      try {
        const queued = await imports.submit(alice.id, { type: "blocks", data: new TextEncoder().encode("bob@rookery.test\ndave\nnobody@rookery.test\n") });
        expect(queued).toMatchObject({ type: "blocks", overwrite: false, total: 3 });
        expect((await imports.list(alice.id)).map((v) => v.id)).toEqual([queued.id]);
        const done = await eventually(async () => {
          const view = await imports.show(alice.id, queued.id);
          return view.state === "finished" ? view : null;
        }, "the import finished");
        expect(done).toMatchObject({ processed: 3, imported: 2, failed: 1, failures: { unknown_account: 1 } });
        expect(done.failedEntries).toEqual([{ line: 3, entry: "nobody", reason: "unknown_account", detail: "there is no account nobody on this server" }]);
        expect(await blockedBy(opened, alice.id)).toEqual(["bob", "dave"]);

        // An overwrite's removals read the blocks through the port, and remove through moderation.
        await worker.stop();
        await mirrorRows(opened, "blocks", alice.id);
        const replacing = await imports.submit(alice.id, { type: "blocks", mode: "overwrite", data: new TextEncoder().encode("bob@rookery.test\n") });
        expect(replacing).toMatchObject({ overwrite: true, state: "queued" });
        const raw = (await port.get<{ id: number }>("SELECT id FROM imports WHERE id = ?", [replacing.id]))!;
        const imp = { id: raw.id, accountId: alice.id, type: "blocks", overwrite: true, state: "queued", totalItems: 1, createdAt: t.clock.now(), finishedAt: null };
        expect(await overwrite.step(imp)).toBe(false);
        expect(await blockedBy(opened, alice.id)).toEqual(["bob"]);
        await mirrorRows(opened, "blocks", alice.id);
        expect(await overwrite.step(imp)).toBe(true);
      } finally {
        await worker.stop();
      }
    });

    test("a following file's report counts the follows standing now, and lists the ones gone as refused", async () => {
      const opened = await arm.open();
      const { t, port, mirror } = opened;
      const alice = await mirror(await t.local("alice"));
      const bob = await mirror(await t.local("bob"));
      await mirror(await t.local("dave"));
      const { imports, worker } = importing(opened, port);
      worker.start();
      try {
        const queued = await imports.submit(alice.id, { type: "following", data: new TextEncoder().encode("Account address,Show boosts\nbob@rookery.test,true\ndave@rookery.test,false\n") });
        await eventually(async () => (await imports.show(alice.id, queued.id)).state === "finished", "the import finished");
      } finally {
        await worker.stop();
      }
      // Bob's follow is undone since: the report reads the follows as they are now.
      await t.services.follows.unfollow(alice.id, bob.id);
      await mirrorRows(opened, "follows", alice.id);
      const [view] = await imports.list(alice.id);
      expect(view).toMatchObject({ type: "following", total: 2, processed: 2, imported: 1, awaiting: 0, failed: 1, failures: { refused: 1 } });
      expect(view!.failedEntries).toEqual([{ line: 2, entry: "bob", reason: "refused", detail: "not followed: its server refused the follow, or it was undone since" }]);
    });

    test("a bad type, mode or file, or another account's import: refused, and nothing is stored", async () => {
      const opened = await arm.open();
      const { t, port, mirror } = opened;
      const alice = await mirror(await t.local("alice"));
      const bob = await mirror(await t.local("bob"));
      const { imports } = importing(opened, port);
      const data = new TextEncoder().encode("bob@rookery.test\n");
      for (const [input, error] of [
        [{ data }, "Validation failed: Type can't be blank"],
        [{ type: "statuses", data }, "Validation failed: Type must be one of following, blocks, mutes, domain_blocks, bookmarks, lists"],
        [{ type: "blocks", mode: "replace", data }, "Validation failed: Mode must be merge or overwrite"],
        [{ type: "blocks", data: null }, "Validation failed: Data can't be blank"],
      ] as const) {
        expect(await imports.submit(alice.id, input).catch((e) => e)).toMatchObject({ status: 422, message: error });
      }
      expect(await port.all("SELECT * FROM imports")).toEqual([]);
      expect(await port.all("SELECT * FROM import_rows")).toEqual([]);
      const mine = await imports.submit(alice.id, { type: "blocks", data });
      expect(await imports.show(bob.id, mine.id).catch((e) => e)).toMatchObject({ status: 404 });
      expect(await imports.show(alice.id, null).catch((e) => e)).toMatchObject({ status: 404 });
      expect(await imports.list(bob.id)).toEqual([]);
    });
  });
}
