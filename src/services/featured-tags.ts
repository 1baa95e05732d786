import { and, eq } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
import { featuredTags, tags } from "../db/schema.ts";
import { notFound, validationFailed } from "../errors.ts";
import type { IdGenerator } from "../ids.ts";
import { LIMITS } from "../limits.ts";
import type { FeaturedTagView, TagHit } from "../models/views.ts";
import { isHashtagName, MAX_HASHTAG_LENGTH, normalizeTag } from "../text/format.ts";
import type { SearchService } from "./search.ts";

/** How many of its latest statuses an account's tag suggestions look at (Tag.recently_used). */
const RECENT_STATUSES = 1000;
const SUGGESTIONS = 10;

/**
 * Featured hashtags (Mastodon's FeaturedTag): up to ten per account, shown on its profile
 * with how many of its public and unlisted statuses carry each. The counts are read at
 * request time from status_tags (an index range per tag) rather than kept as counters that
 * posting, editing and deleting would all have to maintain.
 */
export class FeaturedTagService {
  private q;

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private search: SearchService,
  ) {
    const usage = (fn: string) =>
      `(SELECT ${fn} FROM status_tags st JOIN statuses s ON s.id = st.status_id
        WHERE st.tag_id = f.tag_id AND s.account_id = f.account_id AND s.visibility IN ('public', 'unlisted') AND s.reblog_of_id IS NULL)`;
    this.q = {
      list: db.$client.query<FeaturedTagView, [number]>(
        `SELECT f.id, f.account_id AS accountId, f.tag_id AS tagId, f.name, f.created_at AS createdAt,
                ${usage("count(*)")} AS statusesCount, ${usage("max(s.created_at)")} AS lastStatusAt
         FROM featured_tags f WHERE f.account_id = ? ORDER BY f.id`,
      ),
      recentlyUsed: db.$client.query<{ name: string }, [number, number, number]>(
        `SELECT t.name FROM status_tags st JOIN tags t ON t.id = st.tag_id
         WHERE st.status_id IN (SELECT id FROM statuses WHERE account_id = ?1 ORDER BY id DESC LIMIT ?2)
           AND t.id NOT IN (SELECT tag_id FROM featured_tags WHERE account_id = ?1)
         GROUP BY t.id ORDER BY count(*) DESC, max(st.status_id) DESC LIMIT ?3`,
      ),
    };
  }

  /** The account's featured tags; `byUse` orders them as the owner's own list (most used first). */
  list(accountId: number, byUse = false): FeaturedTagView[] {
    const rows = this.q.list.all(accountId);
    return byUse ? rows.sort((a, b) => b.statusesCount - a.statusesCount || a.id - b.id) : rows;
  }

  /**
   * Mastodon's CreateFeaturedTagService: the same name again answers the existing one; the
   * same tag under another spelling is taken.
   */
  create(accountId: number, rawName: string | undefined): FeaturedTagView {
    const name = (rawName ?? "").trim().replace(/^#/, "");
    const existing = this.db
      .select()
      .from(featuredTags)
      .where(and(eq(featuredTags.accountId, accountId), eq(featuredTags.name, name)))
      .get();
    if (existing) return this.view(accountId, existing.id);
    const errors: string[] = [];
    if (name === "") errors.push("Name can't be blank");
    if (!isHashtagName(name)) errors.push("Name is invalid");
    // Rails' length validation counts characters, not UTF-16 units.
    if (name.length > MAX_HASHTAG_LENGTH && [...name].length > MAX_HASHTAG_LENGTH) errors.push(`Name is too long (maximum is ${MAX_HASHTAG_LENGTH} characters)`);
    const normalized = normalizeTag(name);
    const mine = this.list(accountId);
    if (errors.length === 0 && mine.some((f) => normalizeTag(f.name) === normalized)) errors.push("Name has already been taken");
    if (mine.length >= LIMITS.maxFeaturedTags) errors.push("You have already featured the maximum number of hashtags");
    if (errors.length) throw validationFailed(...errors);
    const id = this.ids.next();
    this.db.transaction((tx) => {
      const now = this.clock.now();
      tx.insert(tags).values({ id: this.ids.next(), name: normalized, createdAt: now }).onConflictDoNothing().run();
      const tag = tx.select({ id: tags.id }).from(tags).where(eq(tags.name, normalized)).get()!;
      tx.insert(featuredTags).values({ id, accountId, tagId: tag.id, name, createdAt: now }).run();
    });
    return this.view(accountId, id);
  }

  remove(accountId: number, id: number | null) {
    if (id === null) throw notFound();
    const gone = this.db
      .delete(featuredTags)
      .where(and(eq(featuredTags.id, id), eq(featuredTags.accountId, accountId)))
      .returning({ id: featuredTags.id })
      .all();
    if (gone.length === 0) throw notFound();
  }

  /** Tag.recently_used: the tags of the account's latest statuses, most used first, not yet featured. */
  suggestions(accountId: number): TagHit[] {
    return this.q.recentlyUsed.all(accountId, RECENT_STATUSES, SUGGESTIONS).flatMap((r) => this.search.tag(r.name) ?? []);
  }

  private view(accountId: number, id: number): FeaturedTagView {
    return this.list(accountId).find((f) => f.id === id)!;
  }
}
