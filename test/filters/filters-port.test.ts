import { afterEach, describe, expect, test } from "bun:test";
import type { AccountRow, StatusRow } from "../../src/db/schema.ts";
import { EventBus } from "../../src/infra/events.ts";
import { FilterService, MAX_FILTERS_PER_ACCOUNT, MAX_KEYWORD_CHARACTERS_PER_ACCOUNT } from "../../src/services/filters.ts";
import { V1FilterService } from "../../src/services/filters-v1.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Filters on the database port (issue 31): the same service on SQLite and on PostgreSQL for its
 * CRUD (v2 and v1, keywords, statuses). Matching stays synchronous on SQLite (the presenters
 * read it inside ReadSnapshot) and is tested over HTTP in filters.test.ts, like the API's shapes.
 * The statuses a filter names are read by the status reader, not yet converted, from SQLite on
 * both arms; the filter rows are written through the port.
 */

afterEach(closePortArms);

async function setUp({ t, port, mirror }: PortArm) {
  const alice = await mirror(await t.local("alice"));
  const bob = await mirror(await t.local("bob"));
  const events = new EventBus(port);
  const changed: number[] = [];
  events.afterCommit("filters.changed", (e) => changed.push(e.accountId));
  const filters = new FilterService(port, t.ids, t.clock, events, t.services.reader);
  /** A status posted in SQLite (where the reader looks), copied to the port's database for the foreign key. */
  const post = async (author: AccountRow, text: string): Promise<StatusRow> => {
    const status = await t.post(author, { text });
    if (port !== t.database.port) await port.orm.insert(port.tables.statuses).values(status);
    return status;
  };
  const rows = async () => ({
    filters: await port.all("SELECT id, title FROM custom_filters ORDER BY id"),
    keywords: await port.all("SELECT id, keyword FROM custom_filter_keywords ORDER BY id"),
    statuses: await port.all("SELECT id, status_id FROM custom_filter_statuses ORDER BY id"),
  });
  return { alice, bob, filters, v1: new V1FilterService(filters), changed, post, rows };
}

const refusal = (p: Promise<unknown>) => p.then(() => "accepted", (e: { status?: number; message: string }) => ({ status: e.status, message: e.message }));

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`filters on ${arm.name}`, () => {
    test("create, read, update and delete filters, their keywords and statuses, v2 and v1", async () => {
      const opened = await arm.open();
      const { t } = opened;
      const { alice, bob, filters, v1, changed, post, rows } = await setUp(opened);
      const now = t.clock.now();

      const created = await filters.create(alice.id, {
        title: " Spoilers ",
        context: ["home", "public", "home"],
        action: "hide",
        expiresIn: 3600,
        keywords: [{ keyword: "finale", wholeWord: false }, { keyword: "  " }, { keyword: "ending" }],
      });
      expect(created.filter).toEqual({ id: created.filter.id, accountId: alice.id, title: "Spoilers", context: '["home","public"]', action: "hide", expiresAt: now + 3_600_000, createdAt: now });
      expect(created.keywords.map((k) => [k.keyword, k.wholeWord])).toEqual([
        ["finale", false],
        ["ending", true],
      ]);
      expect(await filters.list(alice.id)).toEqual([created]);
      expect(await filters.list(bob.id)).toEqual([]);
      expect(await filters.get(alice.id, created.filter.id)).toEqual(created);

      const [finale, ending] = created.keywords;
      const updated = await filters.update(alice.id, created.filter.id, {
        title: "Plot",
        expiresIn: null,
        keywords: [{ id: finale!.id, keyword: "finales" }, { id: ending!.id, destroy: true }, { keyword: "twist", wholeWord: false }],
      });
      expect(updated.filter).toMatchObject({ title: "Plot", action: "hide", expiresAt: null });
      expect(updated.keywords.map((k) => [k.keyword, k.wholeWord])).toEqual([
        ["finales", false],
        ["twist", false],
      ]);

      const added = await filters.addKeyword(alice.id, created.filter.id, "reveal", undefined);
      expect(await filters.getKeyword(alice.id, added.id)).toEqual({ id: added.id, filterId: created.filter.id, keyword: "reveal", wholeWord: true });
      expect(await filters.updateKeyword(alice.id, added.id, undefined, false)).toEqual({ ...added, wholeWord: false });
      expect(await filters.getKeyword(alice.id, added.id)).toEqual({ ...added, wholeWord: false });
      await filters.removeKeyword(alice.id, added.id);
      expect((await filters.get(alice.id, created.filter.id)).keywords.map((k) => k.keyword)).toEqual(["finales", "twist"]);

      const status = await post(bob, "the butler did it");
      const filtered = await filters.addStatus(alice.id, created.filter.id, status.id);
      expect(await filters.getStatus(alice.id, filtered.id)).toEqual({ id: filtered.id, filterId: created.filter.id, statusId: status.id });
      expect((await filters.get(alice.id, created.filter.id)).statuses).toEqual([filtered]);

      // v1: one entry per keyword, the filter's settings on each.
      const listed = await v1.list(alice.id);
      expect(listed.map((f) => [f.keyword.keyword, f.filter.title])).toEqual([
        ["finales", "Plot"],
        ["twist", "Plot"],
      ]);
      const single = await v1.create(alice.id, { phrase: "ads", context: ["notifications"], irreversible: true, wholeWord: false });
      expect(single.filter).toMatchObject({ title: "ads", action: "hide", context: '["notifications"]' });
      expect(await v1.update(alice.id, single.keyword.id, { phrase: "adverts", irreversible: false })).toMatchObject({ filter: { title: "adverts", action: "warn" }, keyword: { keyword: "adverts", wholeWord: false } });
      await v1.remove(alice.id, single.keyword.id);
      expect((await filters.get(alice.id, single.filter.id)).keywords).toEqual([]);

      await filters.removeStatus(alice.id, filtered.id);
      await filters.remove(alice.id, created.filter.id);
      await filters.remove(alice.id, single.filter.id);
      expect(await filters.list(alice.id)).toEqual([]);
      // The keywords and statuses went with their filters.
      expect(await rows()).toEqual({ filters: [], keywords: [], statuses: [] });
      // Every change was told, once committed.
      expect(changed.length).toBe(12);
      expect(new Set(changed)).toEqual(new Set([alice.id]));
    });

    test("a status added to a filter by a double submit at once: added once, the others refused with Mastodon's 422", async () => {
      const opened = await arm.open();
      const { alice, bob, filters, post, rows } = await setUp(opened);
      const mine = await filters.create(alice.id, { title: "Mine", context: ["home"] });
      const status = await post(bob, "a status");
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => filters.addStatus(alice.id, mine.filter.id, status.id)));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results.filter((r) => r.status === "rejected")) expect(r.reason).toMatchObject({ status: 422, message: "Validation failed: Status has already been taken" });
      expect((await rows()).statuses).toEqual([{ id: (results.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<{ id: number }>).value.id, status_id: status.id }]);
    });

    test("the 99th to 102nd filters made at once: two made, two refused at the cap of 100", async () => {
      const opened = await arm.open();
      const { alice, filters, rows } = await setUp(opened);
      for (let i = 0; i < MAX_FILTERS_PER_ACCOUNT - 2; i++) {
        await opened.port.run("INSERT INTO custom_filters (id, account_id, title, context, action, created_at) VALUES (?, ?, ?, ?, ?, ?)", [opened.t.ids.next(), alice.id, `filter ${i}`, '["home"]', "warn", opened.t.clock.now()]);
      }
      const results = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => filters.create(alice.id, { title: `late ${i}`, context: ["home"], keywords: [{ keyword: `late${i}` }] })));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
      for (const r of results.filter((r) => r.status === "rejected")) expect(r.reason).toMatchObject({ status: 422, message: "Validation failed: You have reached the maximum number of filters" });
      const after = await rows();
      expect(after.filters).toHaveLength(MAX_FILTERS_PER_ACCOUNT);
      expect(after.keywords).toHaveLength(2);
    });

    test("bad input, another's filters and the caps are refused, and a refused write keeps nothing", async () => {
      const opened = await arm.open();
      const { alice, bob, filters, v1, changed, post, rows } = await setUp(opened);
      const mine = await filters.create(alice.id, { title: "Mine", context: ["home"], keywords: [{ keyword: "one" }] });
      const keywordId = mine.keywords[0]!.id;
      const status = await post(alice, "my own words");
      const filtered = await filters.addStatus(alice.id, mine.filter.id, status.id);
      const before = await rows();
      changed.length = 0;

      const notFound = { status: 404, message: "Record not found" };
      expect(await refusal(filters.create(alice.id, { title: " ", context: ["nowhere"] }))).toEqual({ status: 422, message: "Validation failed: Title can't be blank, Context None or invalid context supplied" });
      expect(await refusal(v1.create(alice.id, { phrase: "", context: ["home"] }))).toEqual({ status: 422, message: "Validation failed: Title can't be blank" });
      expect(await refusal(filters.get(bob.id, mine.filter.id))).toEqual(notFound);
      expect(await refusal(filters.get(alice.id, null))).toEqual(notFound);
      expect(await refusal(filters.update(bob.id, mine.filter.id, { title: "Stolen" }))).toEqual(notFound);
      // A keyword id of no keyword of this filter undoes the whole update, the title too.
      expect(await refusal(filters.update(alice.id, mine.filter.id, { title: "Renamed", keywords: [{ keyword: "two" }, { id: 12345, keyword: "x" }] }))).toEqual(notFound);
      expect(await refusal(filters.update(alice.id, mine.filter.id, { action: "explode" }))).toEqual({ status: 422, message: "Validation failed: Action is not included in the list" });
      expect(await refusal(filters.remove(bob.id, mine.filter.id))).toEqual(notFound);
      expect(await refusal(filters.getKeyword(bob.id, keywordId))).toEqual(notFound);
      expect(await refusal(filters.addKeyword(alice.id, mine.filter.id, " ", true))).toEqual({ status: 422, message: "Validation failed: Keyword can't be blank" });
      expect(await refusal(filters.updateKeyword(alice.id, keywordId, "", undefined))).toEqual({ status: 422, message: "Validation failed: Keyword can't be blank" });
      expect(await refusal(filters.removeKeyword(bob.id, keywordId))).toEqual(notFound);
      expect(await refusal(filters.addStatus(alice.id, mine.filter.id, status.id))).toEqual({ status: 422, message: "Validation failed: Status has already been taken" });
      expect(await refusal(filters.addStatus(alice.id, mine.filter.id, 404))).toEqual({ status: 422, message: "Validation failed: Status must exist" });
      expect(await refusal(filters.getStatus(bob.id, filtered.id))).toEqual(notFound);
      expect(await refusal(filters.removeStatus(bob.id, filtered.id))).toEqual(notFound);
      expect(await rows()).toEqual(before);
      expect(changed).toEqual([]);

      // The characters of an account's keywords are summed by the database (length() in code
      // points on both): 199 keywords of 500 characters, then one past the cap is refused.
      const words = Array.from({ length: 199 }, (_, i) => ({ keyword: `${String(i).padStart(3, "0")}${"é".repeat(497)}` }));
      const big = await filters.create(alice.id, { title: "Big", context: ["public"], keywords: words });
      const used = 199 * 500 + "one".length;
      const past = "x".repeat(MAX_KEYWORD_CHARACTERS_PER_ACCOUNT - used + 1);
      const tooLong = `Validation failed: You have reached the maximum length of all filter keywords together (${MAX_KEYWORD_CHARACTERS_PER_ACCOUNT} characters)`;
      expect(await refusal(filters.addKeyword(alice.id, big.filter.id, past, true))).toEqual({ status: 422, message: tooLong });
      // "one" grown by as many characters as the cap has left, plus one.
      expect(await refusal(filters.updateKeyword(alice.id, keywordId, `one${past}`, undefined))).toEqual({ status: 422, message: tooLong });
      expect((await filters.getKeyword(alice.id, keywordId)).keyword).toBe("one");
      expect((await filters.get(alice.id, big.filter.id)).keywords.length).toBe(199);
      expect(await filters.addKeyword(alice.id, big.filter.id, past.slice(1), true)).toMatchObject({ keyword: past.slice(1) });
    });
  });
}
