import { afterEach, describe, expect, test } from "bun:test";
import type { StatusRow } from "../../src/db/schema.ts";
import type { StatusParts } from "../../src/models/views.ts";
import { RenderCache } from "../../src/services/statuses/render-cache.ts";
import { closePortArms, freshPostgresPort, freshSqlitePort } from "../support/port-arms.ts";
import { postgresAvailable } from "../support/postgres.ts";

/**
 * The render cache and a write's transaction (issue 31): until the write commits, a request in
 * another flow still reads the old row (on PostgreSQL nothing makes it wait), renders it and
 * keeps the rendering. What the write invalidated is dropped again at its commit, or the stale
 * rendering stayed for good (a link card set and never shown). link previews in cards.test.ts
 * show it over HTTP; here the order of the two flows is fixed.
 */

afterEach(closePortArms);

const parts = (content: string): StatusParts => ({ head: "", content, tail: "", after: "", approval: "", visibility: "public", reblogOfId: null, quoted: false });

for (const [name, open, skip] of [
  ["SQLite", freshSqlitePort, false],
  ["PostgreSQL", freshPostgresPort, !postgresAvailable],
] as const) {
  describe.skipIf(skip)(`the render cache on ${name}`, () => {
    test("what a transaction invalidates is dropped again at its commit, not before; a rollback leaves what was kept", async () => {
      const port = await open();
      const cache = new RenderCache(undefined, port);
      cache.set(1, 10, parts("old"));
      cache.set(2, 20, parts("kept"));

      await port.transaction(async () => {
        await port.get("SELECT 1 AS one");
        cache.invalidateStatus(1);
        cache.touchAccount(20);
        // Another request rendered the rows as they were before this write's commit.
        cache.set(1, 10, parts("read before the commit"));
        cache.set(2, 20, parts("read before the commit"));
        expect(cache.get(1)?.content).toBe("read before the commit");
      });
      expect(cache.get(1)).toBeUndefined();
      expect(cache.get(2)).toBeUndefined();

      cache.set(1, 10, parts("read after the commit"));
      await expect(
        port.transaction(async () => {
          cache.invalidateStatus(2);
          cache.set(2, 20, parts("rendered in a write that failed"));
          throw new Error("rolled back");
        }),
      ).rejects.toThrow("rolled back");
      expect(cache.get(1)?.content).toBe("read after the commit");
      expect(cache.get(2)?.content).toBe("rendered in a write that failed");

      // Outside a transaction an invalidation is at once, as before.
      cache.invalidateStatus(1);
      expect(cache.get(1)).toBeUndefined();
    });

    test("what was read while an invalidation happened is not kept, rendering or row; what was read after it is", async () => {
      const cache = new RenderCache(undefined, await open());
      const row = { id: 1, accountId: 10, repliesCount: 0, reblogsCount: 0, favouritesCount: 0, quotesCount: 0, editedAt: null } as unknown as StatusRow;
      // A request takes its stamp, reads (a quote's state, media: other tables than the row),
      // and meanwhile another write commits and invalidates any status.
      const stamp = cache.stamp();
      expect(stamp).toBe(cache.generation);
      cache.invalidateStatus(99);
      cache.set(1, 10, parts("read while another write committed"), row, stamp);
      cache.keepRow(row, stamp);
      expect(cache.get(1)).toBeUndefined();
      expect(cache.row(1)).toBeUndefined();
      // Read with nothing invalidated meanwhile: kept.
      const after = cache.stamp();
      cache.set(1, 10, parts("read after it"), row, after);
      cache.keepRow(row, after);
      expect(cache.get(1)?.content).toBe("read after it");
      expect(cache.row(1)).toBe(row);
    });

    test("a rendering of an older row than the one a request read is not used, and goes", async () => {
      const cache = new RenderCache(undefined, await open());
      const row = (favourites: number) => ({ id: 1, accountId: 10, repliesCount: 0, reblogsCount: 0, favouritesCount: favourites, quotesCount: 0, editedAt: null }) as unknown as StatusRow;
      cache.set(1, 10, parts("no favourite"), row(0));
      expect(cache.get(1, row(0))?.content).toBe("no favourite");
      expect(cache.get(1, row(1))).toBeUndefined();
      // Dropped: even a request with the old row renders again.
      expect(cache.get(1, row(0))).toBeUndefined();
      // A quote policy changed in place (no edit): the rendering of the row before is not used either.
      const policy = (quoteApproval: string | null) => ({ ...row(0), quoteApproval }) as unknown as StatusRow;
      cache.set(1, 10, parts("quotable by all"), policy('{"automatic":["public"]}'));
      expect(cache.get(1, policy('{"automatic":["public"]}'))?.content).toBe("quotable by all");
      expect(cache.get(1, policy(null))).toBeUndefined();
      // A reply joined to its parent once the parent came (PostingService's adopt): nor this.
      const parent = (inReplyToId: number | null) => ({ ...row(0), quoteApproval: null, inReplyToId }) as unknown as StatusRow;
      cache.set(1, 10, parts("a reply to nothing known"), parent(null));
      expect(cache.get(1, parent(7))).toBeUndefined();
    });
  });
}

test("on SQLite (no commits to follow: a write holds the connection until its commit) there is no stamp, and everything read is kept", () => {
  const cache = new RenderCache();
  expect(cache.stamp()).toBeUndefined();
  const row = { id: 1, accountId: 10 } as unknown as StatusRow;
  cache.invalidateStatus(99);
  cache.set(1, 10, parts("kept"), row, cache.stamp());
  cache.keepRow(row, cache.stamp());
  expect(cache.get(1)?.content).toBe("kept");
  expect(cache.row(1)).toBe(row);
});

/**
 * What the row check (render-cache.ts's `versionOf`) covers, by the columns an UPDATE of statuses
 * sets: a new column changed in place that no rendering's check sees would keep renderings of
 * the row before on PostgreSQL. An edit's columns go with edited_at; a parent's account and IRI
 * with its id.
 */
test("every UPDATE of statuses in src/ sets only columns the render cache's row check covers", async () => {
  const covered = new Set(["replies_count", "reblogs_count", "favourites_count", "quotes_count", "card", "quote_approval", "in_reply_to_id", "in_reply_to_account_id", "in_reply_to_uri", "edited_at"]);
  const editColumns = new Set(["text", "content_html", "spoiler_text", "sensitive", "language", "mentions", "tags", "emojis", "has_media", "has_poll"]);
  const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const found: { file: string; columns: string[] }[] = [];
  for await (const file of new Bun.Glob("src/**/*.ts").scan(".")) {
    const text = await Bun.file(file).text();
    // Raw statements: `column = ...` up to WHERE, and the counters' `${moved("column")}`.
    for (const m of text.matchAll(/UPDATE statuses SET (.+?) WHERE/g)) found.push({ file, columns: [...m[1]!.matchAll(/(?:^|, )([a-z_]+) = |moved\("([a-z_]+)"\)/g)].map((c) => (c[1] ?? c[2])!) });
    for (const m of text.matchAll(/\.update\((?:[a-z.]*\.)?statuses\)\s*\.set\(\{([^}]*)\}/g)) found.push({ file, columns: [...m[1]!.matchAll(/(?:^|,)\s*([a-zA-Z]+)\s*(?=[:,]|$)/g)].map((c) => snake(c[1]!)) });
  }
  // The statements are found (a change of their shape would otherwise pass unseen): the counters, adopt, the card, both edits and the quote policy.
  expect(found.length).toBeGreaterThanOrEqual(8);
  for (const { file, columns } of found) {
    const edit = columns.includes("edited_at");
    const unseen = columns.filter((c) => !covered.has(c) && !(edit && editColumns.has(c)));
    expect({ file, unseen, read: columns.length > 0 }).toEqual({ file, unseen: [], read: true });
  }
});
