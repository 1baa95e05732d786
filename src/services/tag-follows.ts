import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import type { IdGenerator } from "../ids.ts";
import { notFound } from "../errors.ts";
import { normalizeTag } from "../text/format.ts";
import type { Page } from "../infra/pagination.ts";
import type { SearchService } from "./search.ts";
import type { TagHit } from "../models/views.ts";

/**
 * Followed hashtags (Mastodon 4.0): following one brings its public statuses into the
 * follower's home timeline from then on (the home feed looks them up when it delivers).
 * The tags are read through the port; their usage history is still the search's to count.
 */
export class TagFollowService {
  // Built once: drizzle spends more building a query than SQLite running it (docs/architecture.md).
  private q;

  constructor(
    private db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private search: Pick<SearchService, "withHistory">,
  ) {
    const { tags, tagFollows } = db.tables;
    const orm = db.orm;
    const p = (name: string) => sql.placeholder(name) as unknown as number;
    this.q = {
      addTag: orm.insert(tags).values({ id: p("id"), name: sql.placeholder("name") as unknown as string, createdAt: p("now") }).onConflictDoNothing().prepare(),
      tagByName: orm.select({ id: tags.id, name: tags.name }).from(tags).where(eq(tags.name, sql.placeholder("name"))).prepare(),
      follow: orm.insert(tagFollows).values({ id: p("id"), accountId: p("accountId"), tagId: p("tagId"), createdAt: p("now") }).onConflictDoNothing().prepare(),
      unfollow: orm
        .delete(tagFollows)
        .where(and(eq(tagFollows.accountId, sql.placeholder("accountId")), eq(tagFollows.tagId, sql.placeholder("tagId"))))
        .prepare(),
    };
  }

  async follow(accountId: number, rawName: string): Promise<TagHit> {
    const name = normalizeTag(rawName);
    if (name === "") throw notFound();
    const now = this.clock.now();
    const tag = await this.db.transaction(async () => {
      await this.q.addTag.execute({ id: this.ids.next(), name, now });
      const [tag] = await this.q.tagByName.execute({ name });
      if (!tag) throw notFound();
      await this.q.follow.execute({ id: this.ids.next(), accountId, tagId: tag.id, now });
      return tag;
    });
    return (await this.search.withHistory([tag]))[0]!;
  }

  async unfollow(accountId: number, rawName: string): Promise<TagHit> {
    const name = normalizeTag(rawName);
    if (name === "") throw notFound();
    const [tag] = await this.q.tagByName.execute({ name });
    if (tag) await this.q.unfollow.execute({ accountId, tagId: tag.id });
    // A tag never used is answered all the same, without an id (as GET /api/v1/tags/:name).
    return (await this.search.withHistory([tag ?? { id: null, name }]))[0]!;
  }

  /** Of these tags, the ones the account follows. */
  async followed(accountId: number, tagIds: (number | null)[]): Promise<Set<number>> {
    const ids = tagIds.filter((id): id is number => id !== null);
    if (ids.length === 0) return new Set();
    // Raw SQL: a list of any length cannot be one prepared builder, and building one costs more than running it.
    const rows = await this.db.all<{ id: number }>(
      `SELECT tag_id AS id FROM tag_follows WHERE account_id = ? AND tag_id IN (${ids.map(() => "?").join(", ")})`,
      [accountId, ...ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** GET /api/v1/followed_tags, paginated by the follow's id (pageQuery's conditions, written out). */
  async list(accountId: number, page: Page): Promise<{ tag: TagHit; cursor: number }[]> {
    const conditions = ["f.account_id = ?"];
    const params: number[] = [accountId];
    if (page.maxId !== undefined) conditions.push("f.id < ?"), params.push(page.maxId);
    if (page.sinceId !== undefined) conditions.push("f.id > ?"), params.push(page.sinceId);
    if (page.minId !== undefined) conditions.push("f.id > ?"), params.push(page.minId);
    const forward = page.minId !== undefined;
    const rows = await this.db.all<{ cursor: number; id: number; name: string }>(
      `SELECT f.id AS "cursor", t.id, t.name FROM tag_follows f JOIN tags t ON t.id = f.tag_id
       WHERE ${conditions.join(" AND ")} ORDER BY f.id ${forward ? "ASC" : "DESC"} LIMIT ?`,
      [...params, page.limit],
    );
    if (forward) rows.reverse();
    const hits = await this.search.withHistory(rows);
    return rows.map((r, i) => ({ tag: hits[i]!, cursor: r.cursor }));
  }
}
