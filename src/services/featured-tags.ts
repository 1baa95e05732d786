import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import { lockAccount } from "../db/row-locks.ts";
import { notFound, validationFailed } from "../errors.ts";
import type { IdGenerator } from "../ids.ts";
import { LIMITS } from "../limits.ts";
import type { FeaturedTagView, TagHit } from "../models/views.ts";
import { isHashtagName, MAX_HASHTAG_LENGTH, normalizeTag } from "../text/format.ts";
import type { SearchService } from "./search.ts";

/** How many of its latest statuses an account's tag suggestions look at (Tag.recently_used). */
const RECENT_STATUSES = 1000;
const SUGGESTIONS = 10;

// Raw SQL (cheaper than building a query, and portable): aliases quoted, as PostgreSQL folds bare
// ones to lower case. The count and the latest come from one pass over the tag's index range
// (two correlated subqueries made two: 28 against 22 µs for three tags).
const LIST = `SELECT f.id, f.account_id AS "accountId", f.tag_id AS "tagId", f.name, f.created_at AS "createdAt",
         count(s.id) AS "statusesCount", max(s.created_at) AS "lastStatusAt"
  FROM featured_tags f
  LEFT JOIN status_tags st ON st.tag_id = f.tag_id
  LEFT JOIN statuses s ON s.id = st.status_id AND s.account_id = f.account_id AND s.visibility IN ('public', 'unlisted') AND s.reblog_of_id IS NULL
  WHERE f.account_id = ? GROUP BY f.id ORDER BY f.id`;
const RECENTLY_USED = `SELECT t.id, t.name FROM status_tags st JOIN tags t ON t.id = st.tag_id
  WHERE st.status_id IN (SELECT id FROM statuses WHERE account_id = ? ORDER BY id DESC LIMIT ?)
    AND t.id NOT IN (SELECT tag_id FROM featured_tags WHERE account_id = ?)
  GROUP BY t.id ORDER BY count(*) DESC, max(st.status_id) DESC LIMIT ?`;

/**
 * Featured hashtags (Mastodon's FeaturedTag): up to ten per account, shown on its profile
 * with how many of its public and unlisted statuses carry each. The counts are read at
 * request time from status_tags (an index range per tag) rather than kept as counters that
 * posting, editing and deleting would all have to maintain.
 */
export class FeaturedTagService {
  // Built once: drizzle spends more building a query than SQLite running it (docs/architecture.md).
  private q;

  constructor(
    private db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private search: Pick<SearchService, "withHistory">,
  ) {
    const { featuredTags, tags } = db.tables;
    const orm = db.orm;
    const p = (name: string) => sql.placeholder(name) as unknown as number;
    const s = (name: string) => sql.placeholder(name) as unknown as string;
    this.q = {
      byName: orm
        .select({ id: featuredTags.id })
        .from(featuredTags)
        .where(and(eq(featuredTags.accountId, sql.placeholder("accountId")), eq(featuredTags.name, sql.placeholder("name"))))
        .limit(1)
        .prepare(),
      addTag: orm.insert(tags).values({ id: p("id"), name: s("name"), createdAt: p("now") }).onConflictDoNothing().prepare(),
      tagByName: orm.select({ id: tags.id }).from(tags).where(eq(tags.name, sql.placeholder("name"))).prepare(),
      insert: orm
        .insert(featuredTags)
        .values({ id: p("id"), accountId: p("accountId"), tagId: p("tagId"), name: s("name"), createdAt: p("now") })
        .onConflictDoNothing({ target: [featuredTags.accountId, featuredTags.tagId] })
        .prepare(),
      remove: orm
        .delete(featuredTags)
        .where(and(eq(featuredTags.id, sql.placeholder("id")), eq(featuredTags.accountId, sql.placeholder("accountId"))))
        .returning({ id: featuredTags.id })
        .prepare(),
    };
  }

  /** The account's featured tags; `byUse` orders them as the owner's own list (most used first). */
  async list(accountId: number, byUse = false): Promise<FeaturedTagView[]> {
    const rows = await this.db.all<FeaturedTagView>(LIST, [accountId]);
    return byUse ? rows.sort((a, b) => b.statusesCount - a.statusesCount || a.id - b.id) : rows;
  }

  /**
   * Mastodon's CreateFeaturedTagService: the same name again answers the existing one; the
   * same tag under another spelling is taken.
   */
  async create(accountId: number, rawName: string | undefined): Promise<FeaturedTagView> {
    const name = (rawName ?? "").trim().replace(/^#/, "");
    // Only a valid name can be stored, so an invalid one is not looked up (PostgreSQL refuses the NUL it may hold).
    const [existing] = isHashtagName(name) ? await this.q.byName.execute({ accountId, name }) : [];
    if (existing) return this.view(accountId, existing.id);
    const errors: string[] = [];
    if (name === "") errors.push("Name can't be blank");
    if (!isHashtagName(name)) errors.push("Name is invalid");
    // Rails' length validation counts characters, not UTF-16 units.
    if (name.length > MAX_HASHTAG_LENGTH && [...name].length > MAX_HASHTAG_LENGTH) errors.push(`Name is too long (maximum is ${MAX_HASHTAG_LENGTH} characters)`);
    const normalized = normalizeTag(name);
    const mine = await this.list(accountId);
    // Featured by a request beside this one since the look above (a double submit; PostgreSQL): the same name answers it.
    const meanwhile = errors.length === 0 ? mine.find((f) => f.name === name) : undefined;
    if (meanwhile) return meanwhile;
    if (errors.length === 0 && mine.some((f) => normalizeTag(f.name) === normalized)) errors.push("Name has already been taken");
    if (mine.length >= LIMITS.maxFeaturedTags) errors.push("You have already featured the maximum number of hashtags");
    if (errors.length) throw validationFailed(...errors);
    const id = this.ids.next();
    const added = await this.db.transaction(async () => {
      // Counted again under the account's row lock: requests beside this one (PostgreSQL) may
      // each have seen room for one more above; they take their turns here, and the last is refused.
      await lockAccount(this.db, accountId);
      const featured = await this.db.get<{ n: number }>("SELECT count(*) AS n FROM featured_tags WHERE account_id = ?", [accountId]);
      if (Number(featured!.n) >= LIMITS.maxFeaturedTags) throw validationFailed("You have already featured the maximum number of hashtags");
      const now = this.clock.now();
      await this.q.addTag.execute({ id: this.ids.next(), name: normalized, now });
      const [tag] = await this.q.tagByName.execute({ name: normalized });
      return this.db.changes(await this.q.insert.execute({ id, accountId, tagId: tag!.id, name, now })) > 0;
    });
    if (added) return this.view(accountId, id);
    // A request beside this one (a double submit; PostgreSQL) featured the tag first: answered
    // as if it had come before, the same name with the tag it made, another spelling refused.
    const [first] = await this.q.byName.execute({ accountId, name });
    if (first) return this.view(accountId, first.id);
    throw validationFailed("Name has already been taken");
  }

  async remove(accountId: number, id: number | null): Promise<void> {
    if (id === null) throw notFound();
    const gone = await this.q.remove.execute({ id, accountId });
    if (gone.length === 0) throw notFound();
  }

  /** Tag.recently_used: the tags of the account's latest statuses, most used first, not yet featured. */
  async suggestions(accountId: number): Promise<TagHit[]> {
    const rows = await this.db.all<{ id: number; name: string }>(RECENTLY_USED, [accountId, RECENT_STATUSES, accountId, SUGGESTIONS]);
    return this.search.withHistory(rows);
  }

  private async view(accountId: number, id: number): Promise<FeaturedTagView> {
    return (await this.list(accountId)).find((f) => f.id === id)!;
  }
}
