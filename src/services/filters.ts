import { and, count, eq, inArray, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
import { customFilterKeywords, customFilters, customFilterStatuses, type CustomFilterRow } from "../db/schema.ts";
import type { IdGenerator } from "../ids.ts";
import { ApiError, notFound, validationFailed } from "../errors.ts";
import type { EventBus } from "../infra/events.ts";
import { FilterMatcherCache } from "./filters-cache.ts";
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

/*
 * Caps. Mastodon has none (only 256 characters a title and 512 a keyword), but every keyword a
 * person has is matched against every status they read, on the one event loop here, and one
 * account's 80,000 keywords once stalled the whole server for seconds. Filters are made by hand
 * (100, twice our 50 lists, and one per muted word for v1 clients); a filter may hold an
 * imported word list (1,000 entries), and an account 2,000 keywords of 100,000 characters in all
 * (50 a keyword on average; real ones are a word or two). The characters bound the matcher:
 * about one automaton state (22 bytes) each, and a build from nothing of ~25 ms at the caps
 * (scripts/bench/filters.ts, docs/benchmarks.md), so even a read that finds it evicted from
 * memory stalls others about as long as one timeline page.
 */
export const MAX_FILTERS_PER_ACCOUNT = 100;
export const MAX_KEYWORDS_PER_FILTER = 1_000;
export const MAX_KEYWORDS_PER_ACCOUNT = 2_000;
export const MAX_KEYWORD_CHARACTERS_PER_ACCOUNT = 100_000;
const TOO_MANY_FILTERS = "You have reached the maximum number of filters";
const TOO_MANY_KEYWORDS = `Keywords is too long (maximum is ${MAX_KEYWORDS_PER_FILTER})`;
const TOO_MANY_ACCOUNT_KEYWORDS = `You have reached the maximum number of filter keywords (${MAX_KEYWORDS_PER_ACCOUNT})`;
const TOO_LONG_ACCOUNT_KEYWORDS = `You have reached the maximum length of all filter keywords together (${MAX_KEYWORD_CHARACTERS_PER_ACCOUNT} characters)`;

/**
 * Keyword and status filters (v2, with the v1 per-keyword view on top). Statuses rendered
 * for a signed-in viewer carry the viewer's matching filters in `filtered`, whatever the
 * context, as Mastodon does; clients hide or warn. Any change announces `filters.changed`.
 */
export class FilterService {
  /** account -> its filters compiled for matching; compiled again on any change of them. */
  private compiled = new FilterMatcherCache((accountId) => this.list(accountId));

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
    this.compiled.rebuild(accountId);
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
    // Refused before any row is written: a request may carry tens of thousands of them.
    const added = (input.keywords ?? []).filter((k) => k.id == null && !k.destroy && (k.keyword ?? "").trim() !== "").length;
    if (added > MAX_KEYWORDS_PER_FILTER) errors.push(TOO_MANY_KEYWORDS);
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
    const filters = this.db.select({ n: count() }).from(customFilters).where(eq(customFilters.accountId, accountId)).get()?.n ?? 0;
    if (filters >= MAX_FILTERS_PER_ACCOUNT) throw validationFailed(TOO_MANY_FILTERS);
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
      this.checkKeywordCaps(tx as unknown as Db, accountId, row.id);
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
      this.checkKeywordCaps(tx as unknown as Db, accountId, filter.id);
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

  /**
   * The caps on keywords, counted as stored (inside the writing transaction, so a refusal rolls
   * everything back) with `adding` more to come.
   */
  private checkKeywordCaps(db: Db, accountId: number, filterId: number, adding: { keywords: number; characters: number } = { keywords: 0, characters: 0 }) {
    const inFilter = db.select({ n: count() }).from(customFilterKeywords).where(eq(customFilterKeywords.filterId, filterId)).get()?.n ?? 0;
    if (inFilter + adding.keywords > MAX_KEYWORDS_PER_FILTER) throw validationFailed(TOO_MANY_KEYWORDS);
    // SQLite's length() counts code points: the automaton's unit.
    const inAccount = db
      .select({ n: count(), characters: sql<number | null>`sum(length(${customFilterKeywords.keyword}))` })
      .from(customFilterKeywords)
      .innerJoin(customFilters, eq(customFilters.id, customFilterKeywords.filterId))
      .where(eq(customFilters.accountId, accountId))
      .get();
    if ((inAccount?.n ?? 0) + adding.keywords > MAX_KEYWORDS_PER_ACCOUNT) throw validationFailed(TOO_MANY_ACCOUNT_KEYWORDS);
    if ((inAccount?.characters ?? 0) + adding.characters > MAX_KEYWORD_CHARACTERS_PER_ACCOUNT) throw validationFailed(TOO_LONG_ACCOUNT_KEYWORDS);
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
    this.checkKeywordCaps(this.db, accountId, filter.id, { keywords: 1, characters: [...(keyword as string)].length });
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
    if (Object.keys(set).length) {
      this.db.transaction((tx) => {
        tx.update(customFilterKeywords).set(set).where(eq(customFilterKeywords.id, row.id)).run();
        if (set.keyword !== undefined) this.checkKeywordCaps(tx as unknown as Db, accountId, row.filterId);
      });
    }
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

  /** Another connection committed: what is kept of the filters is read again. */
  forgetCached() {
    this.owners = null;
    this.compiled.clear();
  }

  // ---- matching ----

  /** Does the viewer have any filters at all (most have none: skip the work)? */
  hasFilters(accountId: number): boolean {
    // Most accounts have none: answered from memory, so streaming to thousands stays cheap.
    this.owners ??= new Set(this.db.selectDistinct({ id: customFilters.accountId }).from(customFilters).all().map((r) => r.id));
    if (!this.owners.has(accountId)) return false;
    const now = this.clock.now();
    return this.compiled.filters(accountId).some((f) => f.expiresAt === null || f.expiresAt > now);
  }

  /**
   * The viewer's filters that match a status: keywords against its searchable text
   * (spoiler, text, poll options, media descriptions), status filters against its id and
   * what it boosts.
   */
  matches(accountId: number, searchable: string, statusIds: number[]): FilterMatch[] {
    const { filters, statusIds: filtered, matcher } = this.compiled.ready(accountId);
    const now = this.clock.now();
    const active = filters.map((f) => f.expiresAt === null || f.expiresAt > now);
    const keywords = matcher ? matcher.match(searchable, active) : [];
    const out: FilterMatch[] = [];
    filters.forEach((filter, i) => {
      if (!active[i]) return;
      const keyword = keywords[i];
      const statusMatches = statusIds.filter((id) => filtered[i]?.has(id)).map(String);
      if (keyword === undefined && statusMatches.length === 0) return;
      out.push({ filter, keywordMatches: keyword !== undefined ? [keyword] : null, statusMatches: statusMatches.length ? statusMatches : null });
    });
    return out;
  }
}
