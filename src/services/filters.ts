import { and, eq, inArray } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
import { customFilterKeywords, customFilters, customFilterStatuses, type CustomFilterRow } from "../db/schema.ts";
import type { IdGenerator } from "../ids.ts";
import { ApiError, notFound, validationFailed } from "../errors.ts";
import type { EventBus } from "./events.ts";
import type { StatusReader } from "./statuses/reader.ts";
import type { FilterMatch, FilterWithRules, KeywordRow } from "../models/views.ts";

export const FILTER_CONTEXTS = ["home", "notifications", "public", "thread", "account"] as const;
export const FILTER_ACTIONS = ["warn", "hide", "blur"] as const;

export interface KeywordInput {
  id?: number | null;
  keyword?: string;
  wholeWord?: boolean;
  destroy?: boolean;
}

export interface FilterInput {
  title?: string;
  context?: string[];
  action?: string;
  /** Seconds from now; null clears the expiry. */
  expiresIn?: number | null;
  keywords?: KeywordInput[];
}

const MAX_TITLE = 256;
const MAX_KEYWORD = 512;
const MAX_EXPIRES_IN = 100 * 365 * 24 * 60 * 60;
const WORD = /[\p{L}\p{N}_]/u;

function escapeRegExp(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Mastodon's keyword regex: case-insensitive, with word boundaries at word-character ends when whole_word. */
export function keywordPattern(keyword: string, wholeWord: boolean): string {
  const start = wholeWord && WORD.test(keyword[0] ?? "") ? "(?<![\\p{L}\\p{N}_])" : "";
  const end = wholeWord && WORD.test(keyword[keyword.length - 1] ?? "") ? "(?![\\p{L}\\p{N}_])" : "";
  return `${start}${escapeRegExp(keyword)}${end}`;
}

interface Compiled {
  filter: CustomFilterRow;
  regex: RegExp | null;
  statusIds: Set<number>;
}

/**
 * Keyword and status filters (v2, with the v1 per-keyword view on top). Statuses rendered
 * for a signed-in viewer carry the viewer's matching filters in `filtered`, whatever the
 * context, as Mastodon does; clients hide or warn. Any change announces `filters.changed`.
 */
export class FilterService {
  /** account -> compiled active filters; dropped on any change of that account's filters. */
  private compiled = new Map<number, Compiled[]>();

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
    private reader: StatusReader,
  ) {}

  /** Accounts with at least one filter; null until first asked (then kept up to date). */
  private owners: Set<number> | null = null;

  private changed(accountId: number) {
    this.compiled.delete(accountId);
    if (this.owners) {
      const any = this.db.select({ id: customFilters.id }).from(customFilters).where(eq(customFilters.accountId, accountId)).limit(1).get();
      if (any) this.owners.add(accountId);
      else this.owners.delete(accountId);
    }
    this.events.emit({ type: "filters.changed", accountId });
  }

  list(accountId: number): FilterWithRules[] {
    const filters = this.db.select().from(customFilters).where(eq(customFilters.accountId, accountId)).orderBy(customFilters.id).all();
    return this.withRules(filters);
  }

  private withRules(filters: CustomFilterRow[]): FilterWithRules[] {
    if (filters.length === 0) return [];
    const ids = filters.map((f) => f.id);
    const keywords = this.db.select().from(customFilterKeywords).where(inArray(customFilterKeywords.filterId, ids)).orderBy(customFilterKeywords.id).all();
    const statuses = this.db.select().from(customFilterStatuses).where(inArray(customFilterStatuses.filterId, ids)).orderBy(customFilterStatuses.id).all();
    return filters.map((filter) => ({
      filter,
      keywords: keywords.filter((k) => k.filterId === filter.id),
      statuses: statuses.filter((s) => s.filterId === filter.id),
    }));
  }

  get(accountId: number, id: number | null): FilterWithRules {
    const filter = id === null ? undefined : this.db.select().from(customFilters).where(and(eq(customFilters.id, id), eq(customFilters.accountId, accountId))).get();
    if (!filter) throw notFound();
    return this.withRules([filter])[0] as FilterWithRules;
  }

  private validate(input: FilterInput, creating: boolean): string[] {
    const errors: string[] = [];
    if (creating || input.title !== undefined) {
      const title = (input.title ?? "").trim();
      if (title === "") errors.push("Title can't be blank");
      else if (title.length > MAX_TITLE) errors.push(`Title is too long (maximum is ${MAX_TITLE} characters)`);
    }
    if (creating || input.context !== undefined) {
      const context = input.context ?? [];
      if (context.length === 0 || context.some((c) => !(FILTER_CONTEXTS as readonly string[]).includes(c))) errors.push("Context None or invalid context supplied");
    }
    if (input.action !== undefined && !(FILTER_ACTIONS as readonly string[]).includes(input.action)) errors.push("Action is not included in the list");
    // Beyond a century is no expiry a person means, and past what a date can hold.
    if (input.expiresIn != null && Math.abs(input.expiresIn) > MAX_EXPIRES_IN) errors.push("Expires at is invalid");
    for (const k of input.keywords ?? []) {
      if (k.destroy) continue;
      if (k.keyword !== undefined && k.keyword.length > MAX_KEYWORD) errors.push(`Keywords keyword is too long (maximum is ${MAX_KEYWORD} characters)`);
      // An existing keyword set to blank; a new blank one is skipped (Rails' reject_if: :all_blank).
      if (k.id != null && k.keyword !== undefined && k.keyword.trim() === "") errors.push("Keywords keyword can't be blank");
    }
    return errors;
  }

  private expiresAt(expiresIn: number | null | undefined): number | null | undefined {
    if (expiresIn === undefined || expiresIn === null) return expiresIn;
    // Zero or less is a filter that has already expired (Mastodon's Expireable).
    return this.clock.now() + expiresIn * 1000;
  }

  create(accountId: number, input: FilterInput): FilterWithRules {
    const errors = this.validate(input, true);
    if (errors.length) throw validationFailed(...errors);
    const row: CustomFilterRow = {
      id: this.ids.next(),
      accountId,
      title: (input.title ?? "").trim(),
      context: JSON.stringify([...new Set(input.context)]),
      action: input.action ?? "warn",
      expiresAt: this.expiresAt(input.expiresIn) ?? null,
      createdAt: this.clock.now(),
    };
    this.db.transaction((tx) => {
      tx.insert(customFilters).values(row).run();
      this.applyKeywords(tx as unknown as Db, row.id, input.keywords ?? []);
    });
    this.changed(accountId);
    return this.get(accountId, row.id);
  }

  update(accountId: number, id: number | null, input: FilterInput): FilterWithRules {
    const { filter } = this.get(accountId, id);
    const errors = this.validate(input, false);
    if (errors.length) throw validationFailed(...errors);
    const changes: Partial<CustomFilterRow> = {};
    if (input.title !== undefined) changes.title = input.title.trim();
    if (input.context !== undefined) changes.context = JSON.stringify([...new Set(input.context)]);
    if (input.action !== undefined) changes.action = input.action;
    const expiresAt = this.expiresAt(input.expiresIn);
    if (expiresAt !== undefined) changes.expiresAt = expiresAt;
    this.db.transaction((tx) => {
      if (Object.keys(changes).length) tx.update(customFilters).set(changes).where(eq(customFilters.id, filter.id)).run();
      this.applyKeywords(tx as unknown as Db, filter.id, input.keywords ?? []);
    });
    this.changed(accountId);
    return this.get(accountId, filter.id);
  }

  /** Rails' nested attributes: new keywords, changed ones (by id), and `_destroy`. Blank entries are skipped. */
  private applyKeywords(tx: Db, filterId: number, keywords: KeywordInput[]) {
    for (const k of keywords) {
      if (k.id != null) {
        const existing = tx.select().from(customFilterKeywords).where(and(eq(customFilterKeywords.id, k.id), eq(customFilterKeywords.filterId, filterId))).get();
        if (!existing) throw notFound();
        if (k.destroy) tx.delete(customFilterKeywords).where(eq(customFilterKeywords.id, k.id)).run();
        else {
          const set: Partial<KeywordRow> = {};
          if (k.keyword !== undefined) set.keyword = k.keyword;
          if (k.wholeWord !== undefined) set.wholeWord = k.wholeWord;
          if (Object.keys(set).length) tx.update(customFilterKeywords).set(set).where(eq(customFilterKeywords.id, k.id)).run();
        }
      } else if (!k.destroy && (k.keyword ?? "").trim() !== "") {
        tx.insert(customFilterKeywords).values({ id: this.ids.next(), filterId, keyword: k.keyword as string, wholeWord: k.wholeWord ?? true }).run();
      }
    }
  }

  remove(accountId: number, id: number | null) {
    const { filter } = this.get(accountId, id);
    this.db.delete(customFilters).where(eq(customFilters.id, filter.id)).run();
    this.changed(accountId);
  }

  // ---- keywords and statuses of one filter ----

  private keywordOf(accountId: number, id: number | null): KeywordRow {
    const row =
      id === null
        ? undefined
        : this.db
            .select({ keyword: customFilterKeywords, owner: customFilters.accountId })
            .from(customFilterKeywords)
            .innerJoin(customFilters, eq(customFilters.id, customFilterKeywords.filterId))
            .where(eq(customFilterKeywords.id, id))
            .get();
    if (!row || row.owner !== accountId) throw notFound();
    return row.keyword;
  }

  getKeyword(accountId: number, id: number | null): KeywordRow {
    return this.keywordOf(accountId, id);
  }

  addKeyword(accountId: number, filterId: number | null, keyword: string | undefined, wholeWord: boolean | undefined): KeywordRow {
    const { filter } = this.get(accountId, filterId);
    if ((keyword ?? "").trim() === "") throw validationFailed("Keyword can't be blank");
    if ((keyword as string).length > MAX_KEYWORD) throw validationFailed(`Keyword is too long (maximum is ${MAX_KEYWORD} characters)`);
    const row: KeywordRow = { id: this.ids.next(), filterId: filter.id, keyword: keyword as string, wholeWord: wholeWord ?? true };
    this.db.insert(customFilterKeywords).values(row).run();
    this.changed(accountId);
    return row;
  }

  updateKeyword(accountId: number, id: number | null, keyword: string | undefined, wholeWord: boolean | undefined): KeywordRow {
    const row = this.keywordOf(accountId, id);
    if (keyword !== undefined && keyword.trim() === "") throw validationFailed("Keyword can't be blank");
    if (keyword !== undefined && keyword.length > MAX_KEYWORD) throw validationFailed(`Keyword is too long (maximum is ${MAX_KEYWORD} characters)`);
    const set: Partial<KeywordRow> = {};
    if (keyword !== undefined) set.keyword = keyword;
    if (wholeWord !== undefined) set.wholeWord = wholeWord;
    if (Object.keys(set).length) this.db.update(customFilterKeywords).set(set).where(eq(customFilterKeywords.id, row.id)).run();
    this.changed(accountId);
    return { ...row, ...set };
  }

  removeKeyword(accountId: number, id: number | null) {
    const row = this.keywordOf(accountId, id);
    this.db.delete(customFilterKeywords).where(eq(customFilterKeywords.id, row.id)).run();
    this.changed(accountId);
  }

  private statusOf(accountId: number, id: number | null) {
    const row =
      id === null
        ? undefined
        : this.db
            .select({ status: customFilterStatuses, owner: customFilters.accountId })
            .from(customFilterStatuses)
            .innerJoin(customFilters, eq(customFilters.id, customFilterStatuses.filterId))
            .where(eq(customFilterStatuses.id, id))
            .get();
    if (!row || row.owner !== accountId) throw notFound();
    return row.status;
  }

  getStatus(accountId: number, id: number | null) {
    return this.statusOf(accountId, id);
  }

  /** Filters a status the owner can see (Mastodon's validate_status_access). */
  addStatus(accountId: number, filterId: number | null, statusId: number | null) {
    const { filter } = this.get(accountId, filterId);
    const status = statusId === null ? undefined : this.reader.findRow(statusId);
    if (!status) throw validationFailed("Status must exist");
    if (this.reader.visible([status], accountId).length === 0) throw validationFailed("Status is invalid");
    const exists = this.db
      .select()
      .from(customFilterStatuses)
      .where(and(eq(customFilterStatuses.filterId, filter.id), eq(customFilterStatuses.statusId, status.id)))
      .get();
    if (exists) throw new ApiError(422, "Validation failed: Status has already been taken");
    const row = { id: this.ids.next(), filterId: filter.id, statusId: status.id };
    this.db.insert(customFilterStatuses).values(row).run();
    this.changed(accountId);
    return row;
  }

  removeStatus(accountId: number, id: number | null) {
    const row = this.statusOf(accountId, id);
    this.db.delete(customFilterStatuses).where(eq(customFilterStatuses.id, row.id)).run();
    this.changed(accountId);
  }

  // ---- matching ----

  private active(accountId: number): Compiled[] {
    let compiled = this.compiled.get(accountId);
    if (!compiled) {
      compiled = this.list(accountId).map(({ filter, keywords, statuses }) => ({
        filter,
        regex: keywords.length ? new RegExp(keywords.map((k) => keywordPattern(k.keyword, k.wholeWord)).join("|"), "iu") : null,
        statusIds: new Set(statuses.map((s) => s.statusId)),
      }));
      if (this.compiled.size > 10_000) this.compiled.clear();
      this.compiled.set(accountId, compiled);
    }
    const now = this.clock.now();
    return compiled.filter((c) => c.filter.expiresAt === null || c.filter.expiresAt > now);
  }

  /** Does the viewer have any filters at all (most have none: skip the work)? */
  hasFilters(accountId: number): boolean {
    // Most accounts have none: answered from memory, so streaming to thousands stays cheap.
    this.owners ??= new Set(this.db.selectDistinct({ id: customFilters.accountId }).from(customFilters).all().map((r) => r.id));
    if (!this.owners.has(accountId)) return false;
    return this.active(accountId).length > 0;
  }

  /**
   * The viewer's filters that match a status: keywords against its searchable text
   * (spoiler, text, poll options, media descriptions), status filters against its id and
   * what it boosts.
   */
  matches(accountId: number, searchable: string, statusIds: number[]): FilterMatch[] {
    const out: FilterMatch[] = [];
    for (const c of this.active(accountId)) {
      const keyword = c.regex ? c.regex.exec(searchable)?.[0] : undefined;
      const statusMatches = statusIds.filter((id) => c.statusIds.has(id)).map(String);
      if (keyword === undefined && statusMatches.length === 0) continue;
      out.push({ filter: c.filter, keywordMatches: keyword !== undefined ? [keyword] : null, statusMatches: statusMatches.length ? statusMatches : null });
    }
    return out;
  }
}
