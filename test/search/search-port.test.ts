import { afterEach, describe, expect, test } from "bun:test";
import type { DatabasePort } from "../../src/db/port.ts";
import { idFloorForTime } from "../../src/ids.ts";
import { InstanceInfo } from "../../src/services/instance-info.ts";
import { SearchService } from "../../src/services/search.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Search, trending tags and the instance's description and activity on the database port
 * (issue 31): the same services on SQLite and on PostgreSQL. The API's behaviour is tested over
 * HTTP in search.test.ts, trends.test.ts and ../instance/instance-info.test.ts; this holds the
 * rules of their SQL on both databases. Rows are written straight into the port's database, as
 * the services that make them (accounts, posting) are not on the port yet.
 */

afterEach(closePortArms);

const DAY = 86_400_000;

/** The rows a search reads, written into the port's database. */
function rows(port: DatabasePort, arm: PortArm) {
  const { ids, clock } = arm.t;
  let older = 0;
  return {
    async account(username: string, fields: { displayName?: string; domain?: string; followers?: number; suspended?: boolean; approved?: boolean } = {}) {
      const id = ids.next();
      await port.run("INSERT INTO accounts (id, username, display_name, domain, followers_count, suspended_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", [
        id,
        username,
        fields.displayName ?? "",
        fields.domain ?? null,
        fields.followers ?? 0,
        fields.suspended ? clock.now() : null,
        clock.now(),
      ]);
      if (!fields.domain) {
        await port.run("INSERT INTO users (account_id, email, password_hash, approved, created_at) VALUES (?, ?, ?, ?, ?)", [id, `${username}@mail.test`, "x", fields.approved ?? true, clock.now()]);
      }
      return id;
    },
    follow: (from: number, to: number) => port.run("INSERT INTO follows (account_id, target_account_id, created_at) VALUES (?, ?, ?)", [from, to, clock.now()]),
    block: (from: number, to: number) => port.run("INSERT INTO blocks (account_id, target_account_id, created_at) VALUES (?, ?, ?)", [from, to, clock.now()]),
    /** A status carrying these tags, posted `daysAgo` days before now. */
    async tagged(accountId: number, names: string[], visibility = "public", daysAgo = 0) {
      const at = clock.now() - daysAgo * DAY;
      // An id of its time, as ids grow with time (the counts read ranges of ids).
      const id = daysAgo === 0 ? ids.next() : idFloorForTime(at) + ++older;
      await port.run("INSERT INTO statuses (id, account_id, visibility, conversation_id, created_at) VALUES (?, ?, ?, ?, ?)", [id, accountId, visibility, id, at]);
      for (const name of names) {
        await port.run("INSERT INTO tags (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [ids.next(), name, at]);
        const tag = await port.get<{ id: number }>("SELECT id FROM tags WHERE name = ?", [name]);
        await port.run("INSERT INTO status_tags (status_id, tag_id) VALUES (?, ?)", [id, tag!.id]);
      }
      return id;
    },
  };
}

function searchOn(arm: PortArm, port: DatabasePort) {
  const s = arm.t.services;
  return new SearchService(port, arm.t.clock, s.reader, s.remoteAccounts, s.remoteNotes, null, "http://rookery.test", "rookery.test");
}

const options = { limit: 10, offset: 0, resolve: false, following: false };

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`search on ${arm.name}`, () => {
    test("accounts by name or display-name word: the exact name first, then followed, local, most followed; never blocked, suspended or unapproved", async () => {
      const a = await arm.open();
      const { port } = a;
      const r = rows(port, a);
      const viewer = await r.account("viewer");
      const ann = await r.account("annabel", { followers: 1 });
      const anna = await r.account("anna");
      const ab = await r.account("ab");
      const remote = await r.account("annie", { domain: "elsewhere.example", followers: 50 });
      const popular = await r.account("annika", { followers: 9 });
      const friend = await r.account("zed", { displayName: "Zed Anniversary" });
      const middle = await r.account("bob", { displayName: "Bobanna" });
      const blocked = await r.account("annblocked");
      const blocker = await r.account("annblocker");
      await r.account("annsuspended", { suspended: true });
      await r.account("annpending", { approved: false });
      await r.follow(viewer, friend);
      await r.block(viewer, blocked);
      await r.block(blocker, viewer);
      const search = searchOn(a, port);

      const found = await search.search(viewer, "Ann", { ...options, type: "accounts" });
      expect(found.accounts.map((x) => x.id)).toEqual([friend, popular, ann, anna, remote]);
      expect(found.accounts.map((x) => x.id)).not.toContain(middle);
      // Booleans come back as booleans from either database.
      expect(found.accounts[0]).toMatchObject({ username: "zed", displayName: "Zed Anniversary", locked: false, discoverable: true, domain: null });

      expect((await search.search(viewer, "anna", { ...options, type: "accounts" })).accounts.map((x) => x.id)).toEqual([anna, ann]);
      expect((await search.findAccounts(viewer, "ann", { ...options, following: true })).map((x) => x.id)).toEqual([friend]);
      expect((await search.findAccounts(viewer, "ann", { ...options, limit: 2, offset: 1 })).map((x) => x.id)).toEqual([popular, ann]);
      // Anonymous: blocks do not apply, and a name under three letters finds only user@domain.
      expect((await search.search(null, "annb", options)).accounts.map((x) => x.id)).toEqual([blocked, blocker]);
      expect((await search.search(null, "an", options)).accounts).toEqual([]);
      expect((await search.search(null, "ab@rookery.test", options)).accounts.map((x) => x.id)).toEqual([ab]);
      expect((await search.search(null, "ab", options)).accounts).toEqual([]);
      // Another server's handle: that account, if stored.
      expect((await search.search(viewer, "@ANNIE@Elsewhere.example", options)).accounts.map((x) => x.id)).toEqual([remote]);
      expect((await search.findAccounts(viewer, "annie@elsewhere.example", { ...options, following: true })).map((x) => x.id)).toEqual([]);
      // A URL of this server names a local account.
      expect((await search.search(viewer, "http://rookery.test/@anna", { ...options, resolve: true })).accounts.map((x) => x.id)).toEqual([anna]);
    });

    test("hashtags by prefix with their week of history, one tag by name, and the trending ones", async () => {
      const a = await arm.open();
      const { port } = a;
      const r = rows(port, a);
      const alice = await r.account("alice");
      const bob = await r.account("bob");
      await r.tagged(alice, ["rustacean"]);
      await r.tagged(alice, ["rust", "zig"]);
      await r.tagged(bob, ["rust"], "public", 1);
      await r.tagged(bob, ["rust"], "private");
      await r.tagged(bob, ["rustic"], "public", 10);
      const search = searchOn(a, port);
      const today = Math.floor(a.t.clock.now() / DAY) * DAY;

      const found = await search.search(alice, "#Rust", { ...options, type: "hashtags" });
      expect(found.hashtags.map((h) => h.name)).toEqual(["rust", "rustic", "rustacean"]);
      const [rust] = found.hashtags;
      expect(rust!.history).toHaveLength(7);
      // Private statuses are not counted.
      expect(rust!.history.slice(0, 2)).toEqual([
        { day: today, uses: 1, accounts: 1 },
        { day: today - DAY, uses: 1, accounts: 1 },
      ]);
      expect((await search.hashtags("rustace", 10, 0)).map((h) => h.name)).toEqual(["rustacean"]);
      expect(await search.hashtags("rust", 1, 3)).toEqual([]);

      expect(await search.tag("ZIG")).toMatchObject({ id: expect.any(Number), name: "zig", history: expect.arrayContaining([{ day: today, uses: 1, accounts: 1 }]) });
      expect(await search.tag("never")).toEqual({ id: null, name: "never", history: expect.any(Array) });

      // Used by the most accounts first, then the most statuses; ten days ago is too old.
      expect((await search.trendingTags(10, 0)).map((h) => h.name)).toEqual(["rust", "rustacean", "zig"]);
      expect((await search.trendingTags(1, 1)).map((h) => h.name)).toEqual(["rustacean"]);
    });

    test("queries that can find nothing find nothing, and change nothing", async () => {
      const a = await arm.open();
      const { port } = a;
      const r = rows(port, a);
      const viewer = await r.account("viewer");
      await r.account("someone");
      await r.tagged(viewer, ["something"]);
      const search = searchOn(a, port);
      const before = await port.all("SELECT id, username FROM accounts ORDER BY id");
      const empty = { accounts: [], statuses: [], hashtags: [] };
      for (const q of ["", "   ", "#", "@", "someone@", "some one@x", "http://elsewhere.example/@someone"]) {
        expect(await search.search(viewer, q, { ...options, resolve: true })).toEqual(empty);
      }
      expect(await search.search(viewer, "some", { ...options, limit: 0 })).toEqual(empty);
      // Characters that LIKE would take as patterns are themselves.
      expect(await search.search(viewer, "s%", { ...options, type: "accounts" })).toEqual(empty);
      expect(await search.search(viewer, "so_e", { ...options, type: "accounts" })).toEqual(empty);
      expect(await search.tag("#")).toBeNull();
      expect(await port.all("SELECT id, username FROM accounts ORDER BY id")).toEqual(before);
    });
  });

  describe.skipIf(arm.skip)(`instance info on ${arm.name}`, () => {
    test("the extended description and the weekly activity are read from the port's database", async () => {
      const a = await arm.open();
      const { port, t } = a;
      const info = new InstanceInfo(port, t.ids, t.clock, "http://rookery.test", "open");
      expect(await info.extendedDescriptionSource()).toEqual({ text: "", updatedAt: null });
      await port.run("INSERT INTO instance_settings (key, value) VALUES (?, ?), (?, ?)", ["extended_description", "Hello #world", "extended_description_updated_at", "1234"]);
      expect(await info.extendedDescriptionSource()).toEqual({ text: "Hello #world", updatedAt: 1234 });
      expect((await info.extendedDescription()).html).toContain("http://rookery.test/tags/world");

      const r = rows(port, a);
      const alice = await r.account("alice");
      const remote = await r.account("far", { domain: "elsewhere.example" });
      await r.tagged(alice, []);
      await r.tagged(alice, [], "unlisted");
      await r.tagged(remote, []);
      await r.tagged(alice, [], "public", 8);
      await port.run("INSERT INTO web_sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?)", [
        "a",
        alice,
        t.clock.now(),
        t.clock.now() + DAY,
        "b",
        alice,
        t.clock.now(),
        t.clock.now() + DAY,
      ]);
      const weeks = await info.activity();
      expect(weeks).toHaveLength(12);
      // 2026-01-15 is a Thursday: this week began on Monday the 12th.
      expect(weeks[0]).toEqual({ week: Date.UTC(2026, 0, 12), statuses: 2, logins: 1, registrations: 1 });
      expect(weeks[1]).toEqual({ week: Date.UTC(2026, 0, 5), statuses: 1, logins: 0, registrations: 0 });
      expect(weeks.slice(2).every((w) => w.statuses === 0 && w.logins === 0 && w.registrations === 0)).toBe(true);
    });
  });
}
