import { afterEach, describe, expect, test } from "bun:test";
import { TagFollowService } from "../../src/services/tag-follows.ts";
import { closePortArms, portArms } from "../support/port-arms.ts";

/**
 * Followed tags on the database port (issue 31): the same service on SQLite and on PostgreSQL.
 * The API's behaviour is tested over HTTP in tag-follows.test.ts; this holds the rules on both.
 */

afterEach(closePortArms);

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`followed tags on ${arm.name}`, () => {
    test("follow (twice is once), which are followed, the list paged newest first, unfollow", async () => {
      const { t, port, mirror } = await arm.open();
      const alice = await mirror(await t.local("alice"));
      const bob = await mirror(await t.local("bob"));
      const follows = new TagFollowService(port, t.ids, t.clock, t.services.search);

      const rust = await follows.follow(alice.id, "Rust");
      // (Not toMatchObject with expect.any: bun writes the matcher into the object it is given.)
      expect(typeof rust.id).toBe("number");
      expect(rust.name).toBe("rust");
      expect(rust.history).toHaveLength(7);
      expect(await follows.follow(alice.id, "RUST")).toEqual(rust);
      const zig = await follows.follow(alice.id, "zig");
      const go = await follows.follow(alice.id, "go");
      await follows.follow(bob.id, "go");
      expect(await port.all("SELECT tag_id FROM tag_follows WHERE account_id = ? ORDER BY id", [alice.id])).toEqual([{ tag_id: rust.id }, { tag_id: zig.id }, { tag_id: go.id }]);

      expect(await follows.followed(alice.id, [rust.id, null, go.id, 404])).toEqual(new Set([rust.id!, go.id!]));
      expect(await follows.followed(bob.id, [rust.id, go.id])).toEqual(new Set([go.id!]));
      expect(await follows.followed(alice.id, [null])).toEqual(new Set());

      const all = await follows.list(alice.id, { limit: 10 });
      expect(all.map((r) => r.tag.name)).toEqual(["go", "zig", "rust"]);
      expect(all.map((r) => r.tag.id)).toEqual([go.id, zig.id, rust.id]);
      const [newest, middle, oldest] = all.map((r) => r.cursor) as [number, number, number];
      expect((await follows.list(alice.id, { limit: 1 })).map((r) => r.tag.name)).toEqual(["go"]);
      expect((await follows.list(alice.id, { limit: 10, maxId: newest })).map((r) => r.tag.name)).toEqual(["zig", "rust"]);
      expect((await follows.list(alice.id, { limit: 10, sinceId: oldest })).map((r) => r.tag.name)).toEqual(["go", "zig"]);
      expect((await follows.list(alice.id, { limit: 1, minId: oldest })).map((r) => r.cursor)).toEqual([middle]);

      expect(await follows.unfollow(alice.id, "#Zig".slice(1))).toEqual(zig);
      expect((await follows.list(alice.id, { limit: 10 })).map((r) => r.tag.name)).toEqual(["go", "rust"]);
      // A tag nobody used is answered without an id; unfollowing it changes nothing.
      const never = await follows.unfollow(alice.id, "never");
      expect(never).toMatchObject({ id: null, name: "never" });
      expect(never.history.every((d) => d.uses === 0 && d.accounts === 0)).toBe(true);
      expect(await port.all("SELECT tag_id FROM tag_follows WHERE account_id = ? ORDER BY id", [alice.id])).toEqual([{ tag_id: rust.id }, { tag_id: go.id }]);
    });

    test("a name that is no tag is not found and stores nothing", async () => {
      const { t, port, mirror } = await arm.open();
      const alice = await mirror(await t.local("alice"));
      const follows = new TagFollowService(port, t.ids, t.clock, t.services.search);
      const tagsBefore = await port.all("SELECT * FROM tags");
      for (const bad of ["", "###"]) {
        expect(await follows.follow(alice.id, bad).catch((e) => e)).toMatchObject({ status: 404, message: "Record not found" });
        expect(await follows.unfollow(alice.id, bad).catch((e) => e)).toMatchObject({ status: 404, message: "Record not found" });
      }
      expect(await port.all("SELECT * FROM tag_follows")).toEqual([]);
      expect(await port.all("SELECT * FROM tags")).toEqual(tagsBefore);
    });
  });
}
