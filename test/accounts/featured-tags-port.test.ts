import { afterEach, describe, expect, test } from "bun:test";
import type { DatabasePort } from "../../src/db/port.ts";
import type { IdGenerator } from "../../src/ids.ts";
import { FeaturedTagService } from "../../src/services/featured-tags.ts";
import { closePortArms, portArms } from "../support/port-arms.ts";

/**
 * Featured tags on the database port (issue 31): the same service on SQLite and on PostgreSQL.
 * The API's behaviour is tested over HTTP in featured-tags.test.ts; this holds the rules on both.
 */

afterEach(closePortArms);

/** A status of the account carrying these tags, written as posting stores one (rows only). */
async function tagged(port: DatabasePort, ids: IdGenerator, accountId: number, names: string[], visibility = "public", at = 1_768_478_400_000) {
  const id = ids.next();
  await port.run("INSERT INTO statuses (id, account_id, visibility, conversation_id, created_at) VALUES (?, ?, ?, ?, ?)", [id, accountId, visibility, id, at]);
  for (const name of names) {
    await port.run("INSERT INTO tags (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [ids.next(), name, at]);
    const tag = await port.get<{ id: number }>("SELECT id FROM tags WHERE name = ?", [name]);
    await port.run("INSERT INTO status_tags (status_id, tag_id) VALUES (?, ?)", [id, tag!.id]);
  }
  return id;
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`featured tags on ${arm.name}`, () => {
    test("created with the counts of public and unlisted statuses, listed, found again by name, removed once", async () => {
      const { t, port, mirror } = await arm.open();
      const alice = await mirror(await t.local("alice"));
      const bob = await mirror(await t.local("bob"));
      const featured = new FeaturedTagService(port, t.ids, t.clock, t.services.search);
      await tagged(port, t.ids, alice.id, ["rust"], "public", 1000);
      const last = 2000;
      await tagged(port, t.ids, alice.id, ["rust"], "unlisted", last);
      await tagged(port, t.ids, alice.id, ["rust"], "private", 3000);
      await tagged(port, t.ids, bob.id, ["rust"], "public", 4000);

      const rust = await featured.create(alice.id, "#Rust");
      expect(rust).toEqual({ id: expect.any(Number), accountId: alice.id, tagId: expect.any(Number), name: "Rust", createdAt: t.clock.now(), statusesCount: 2, lastStatusAt: last });
      expect(await featured.create(alice.id, "Rust")).toEqual(rust);
      const quiet = await featured.create(alice.id, "quiet");
      expect(quiet).toMatchObject({ name: "quiet", statusesCount: 0, lastStatusAt: null });
      expect((await port.get<{ name: string }>("SELECT name FROM tags WHERE id = ?", [quiet.tagId]))!.name).toBe("quiet");

      expect((await featured.list(alice.id)).map((f) => f.name)).toEqual(["Rust", "quiet"]);
      expect((await featured.list(alice.id, true)).map((f) => f.name)).toEqual(["Rust", "quiet"]);
      expect(await featured.list(bob.id)).toEqual([]);

      // Not bob's to remove; alice's, once.
      expect(await featured.remove(bob.id, rust.id).catch((e) => e)).toMatchObject({ status: 404 });
      await featured.remove(alice.id, rust.id);
      expect(await featured.remove(alice.id, rust.id).catch((e) => e)).toMatchObject({ status: 404 });
      expect((await featured.list(alice.id)).map((f) => f.name)).toEqual(["quiet"]);
    });

    test("bad names, the same tag spelled otherwise and the eleventh are refused, and store nothing", async () => {
      const { t, port, mirror } = await arm.open();
      const alice = await mirror(await t.local("alice"));
      const featured = new FeaturedTagService(port, t.ids, t.clock, t.services.search);
      await featured.create(alice.id, "Rust");
      const before = await port.all("SELECT * FROM featured_tags ORDER BY id");
      const tagsBefore = await port.all("SELECT * FROM tags ORDER BY id");
      for (const [name, error] of [
        ["", "Validation failed: Name can't be blank, Name is invalid"],
        ["no spaces", "Validation failed: Name is invalid"],
        ["RUST", "Validation failed: Name has already been taken"],
      ] as const) {
        expect(await featured.create(alice.id, name).catch((e) => e)).toMatchObject({ status: 422, message: error });
      }
      expect(await port.all("SELECT * FROM featured_tags ORDER BY id")).toEqual(before);
      expect(await port.all("SELECT * FROM tags ORDER BY id")).toEqual(tagsBefore);

      for (let i = 1; i < 10; i++) await featured.create(alice.id, `tag${i}`);
      expect(await featured.create(alice.id, "eleventh").catch((e) => e)).toMatchObject({ status: 422, message: "Validation failed: You have already featured the maximum number of hashtags" });
      expect(await featured.list(alice.id)).toHaveLength(10);
    });

    test("a double submit at once: the tag featured once, every request answered it; another spelling at once refused as taken", async () => {
      const { t, port, mirror } = await arm.open();
      const alice = await mirror(await t.local("alice"));
      const featured = new FeaturedTagService(port, t.ids, t.clock, t.services.search);
      const same = await Promise.allSettled(Array.from({ length: 4 }, () => featured.create(alice.id, "Rust")));
      expect(same.map((r) => r.status)).toEqual(Array(4).fill("fulfilled"));
      const [stored] = await featured.list(alice.id);
      for (const r of same) expect((r as PromiseFulfilledResult<unknown>).value).toEqual(stored);

      const spellings = await Promise.allSettled([featured.create(alice.id, "Zig"), featured.create(alice.id, "ZIG")]);
      expect(spellings.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(spellings.find((r) => r.status === "rejected")?.reason).toMatchObject({ status: 422, message: "Validation failed: Name has already been taken" });
      expect((await featured.list(alice.id)).map((f) => f.name.toLowerCase())).toEqual(["rust", "zig"]);
    });

    test("the ninth, tenth and eleventh featured at once: two featured, the last refused as over the limit", async () => {
      const { t, port, mirror } = await arm.open();
      const alice = await mirror(await t.local("alice"));
      const featured = new FeaturedTagService(port, t.ids, t.clock, t.services.search);
      for (let i = 1; i <= 8; i++) await featured.create(alice.id, `tag${i}`);
      const results = await Promise.allSettled(["ninth", "tenth", "eleventh"].map((name) => featured.create(alice.id, name)));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
      expect(results.find((r) => r.status === "rejected")?.reason).toMatchObject({ status: 422, message: "Validation failed: You have already featured the maximum number of hashtags" });
      expect(await featured.list(alice.id)).toHaveLength(10);
    });

    test("suggestions: the most used tags of the latest statuses, not those featured", async () => {
      const { t, port, mirror } = await arm.open();
      const alice = await mirror(await t.local("alice"));
      const featured = new FeaturedTagService(port, t.ids, t.clock, t.services.search);
      await tagged(port, t.ids, alice.id, ["cats", "dogs"]);
      await tagged(port, t.ids, alice.id, ["dogs", "birds"]);
      await tagged(port, t.ids, alice.id, ["dogs"]);
      await featured.create(alice.id, "birds");
      const suggested = await featured.suggestions(alice.id);
      expect(suggested.map((s) => s.name)).toEqual(["dogs", "cats"]);
      const ids = await port.all<{ id: number; name: string }>("SELECT id, name FROM tags WHERE name IN ('dogs', 'cats') ORDER BY name DESC");
      expect(suggested.map((s) => s.id)).toEqual(ids.map((r) => r.id));
      for (const s of suggested) expect(s.history).toHaveLength(7);
    });
  });
}
