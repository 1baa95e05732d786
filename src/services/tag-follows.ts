import { and, eq, inArray } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
import { tagFollows, tags } from "../db/schema.ts";
import type { IdGenerator } from "../ids.ts";
import { notFound } from "../errors.ts";
import { normalizeTag } from "../text/format.ts";
import { finishPage, pageQuery, type Page } from "../infra/pagination.ts";
import type { SearchService } from "./search.ts";
import type { TagHit } from "../models/views.ts";

/**
 * Followed hashtags (Mastodon 4.0): following one brings its public statuses into the
 * follower's home timeline from then on (the home feed looks them up when it delivers).
 */
export class TagFollowService {
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private search: SearchService,
  ) {}

  follow(accountId: number, rawName: string): TagHit {
    const name = normalizeTag(rawName);
    if (name === "") throw notFound();
    const now = this.clock.now();
    this.db.insert(tags).values({ id: this.ids.next(), name, createdAt: now }).onConflictDoNothing().run();
    const tag = this.db.select({ id: tags.id }).from(tags).where(eq(tags.name, name)).get();
    if (!tag) throw notFound();
    this.db.insert(tagFollows).values({ id: this.ids.next(), accountId, tagId: tag.id, createdAt: now }).onConflictDoNothing().run();
    return this.search.tag(name) as TagHit;
  }

  unfollow(accountId: number, rawName: string): TagHit {
    const tag = this.search.tag(rawName);
    if (!tag) throw notFound();
    if (tag.id !== null) this.db.delete(tagFollows).where(and(eq(tagFollows.accountId, accountId), eq(tagFollows.tagId, tag.id))).run();
    return tag;
  }

  /** Of these tags, the ones the account follows. */
  followed(accountId: number, tagIds: (number | null)[]): Set<number> {
    const ids = tagIds.filter((id): id is number => id !== null);
    if (ids.length === 0) return new Set();
    const rows = this.db
      .select({ id: tagFollows.tagId })
      .from(tagFollows)
      .where(and(eq(tagFollows.accountId, accountId), inArray(tagFollows.tagId, ids)))
      .all();
    return new Set(rows.map((r) => r.id));
  }

  /** GET /api/v1/followed_tags, paginated by the follow's id. */
  list(accountId: number, page: Page): { tag: TagHit; cursor: number }[] {
    const q = pageQuery(tagFollows.id, page);
    const rows = this.db
      .select({ cursor: tagFollows.id, name: tags.name })
      .from(tagFollows)
      .innerJoin(tags, eq(tags.id, tagFollows.tagId))
      .where(and(eq(tagFollows.accountId, accountId), q.where))
      .orderBy(q.orderBy)
      .limit(page.limit)
      .all();
    return finishPage(rows, q.reverse).map((r) => ({ tag: this.search.tag(r.name) as TagHit, cursor: r.cursor }));
  }
}
