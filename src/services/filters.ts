import { eq } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import { lockAccount } from "../db/row-locks.ts";
import type { CustomFilterRow } from "../db/schema.ts";
import type { IdGenerator } from "../ids.ts";
import { ApiError, notFound, validationFailed } from "../errors.ts";
import type { EventBus } from "../infra/events.ts";
import { FilterMatcherCache, type Entry } from "./filters-cache.ts";
import { filterQueries, type FilterQueries } from "./filters-queries.ts";
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
 *
 * On the database port (issue 31). Matching: `matcherFor` reads (once, then keeps) which
 * accounts have filters and the viewer's compiled filters; `matches` then runs synchronously
 * over what it answered, so a page's presenters match without reading.
 */
export class FilterService {
  /** account -> its filters compiled for matching; compiled again on any change of them. */
  private compiled = new FilterMatcherCache();
  private q: FilterQueries;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
    private reader: StatusReader,
  ) {
    this.q = filterQueries(port);
  }

  /** Accounts with at least one filter; null until first asked (then kept up to date). */
  private owners: Set<number> | null = null;

  private async changed(accountId: number) {
    // Compiled again at once, in slices between other work, rather than at the next read.
    this.compiled.put(accountId, await this.list(accountId));
    if (this.owners) {
      const [any] = await this.q.anyOf.execute({ accountId });
      if (any) this.owners.add(accountId);
      else this.owners.delete(accountId);
    }
    await this.events.emit({ type: "filters.changed", accountId });
  }

  async list(accountId: number): Promise<FilterWithRules[]> {
    const filters = await this.q.filtersOf.execute({ accountId });
    if (filters.length === 0) return [];
    const keywords = await this.q.keywordsOfAccount.execute({ accountId });
    const statuses = await this.q.statusesOfAccount.execute({ accountId });
    return filters.map((filter) => ({
      filter,
      keywords: keywords.filter((k) => k.filterId === filter.id),
      statuses: statuses.filter((s) => s.filterId === filter.id),
    }));
  }

  async get(accountId: number, id: number | null): Promise<FilterWithRules> {
    const [filter] = id === null ? [] : await this.q.filter.execute({ id, accountId });
    if (!filter) throw notFound();
    const keywords = await this.q.keywordsOfFilter.execute({ filterId: filter.id });
    const statuses = await this.q.statusesOfFilter.execute({ filterId: filter.id });
    return { filter, keywords, statuses };
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

  async create(accountId: number, input: FilterInput): Promise<FilterWithRules> {
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
    // Counted and written in one transaction under the account's lock: a request running beside
    // it (PostgreSQL) waits for it and then counts what it wrote, so it cannot slip past the caps.
    await this.port.transaction(async () => {
      await lockAccount(this.port, accountId);
      const filters = (await this.q.countOf.execute({ accountId }))[0]?.n ?? 0;
      if (filters >= MAX_FILTERS_PER_ACCOUNT) throw validationFailed(TOO_MANY_FILTERS);
      await this.q.insertFilter.execute(row);
      await this.applyKeywords(row.id, input.keywords ?? []);
      await this.checkKeywordCaps(accountId, row.id);
    });
    await this.changed(accountId);
    return this.get(accountId, row.id);
  }

  async update(accountId: number, id: number | null, input: FilterInput): Promise<FilterWithRules> {
    const { customFilters: table } = this.port.tables;
    // Found in the writing transaction: a filter removed meanwhile is not found, not half written.
    const filterId = await this.port.transaction(async () => {
      await lockAccount(this.port, accountId);
      const { filter } = await this.get(accountId, id);
      const errors = this.validate(input, false);
      if (errors.length) throw validationFailed(...errors);
      const changes: Partial<CustomFilterRow> = {};
      if (input.title !== undefined) changes.title = input.title.trim();
      if (input.context !== undefined) changes.context = JSON.stringify([...new Set(input.context)]);
      if (input.action !== undefined) changes.action = input.action;
      const expiresAt = this.expiresAt(input.expiresIn);
      if (expiresAt !== undefined) changes.expiresAt = expiresAt;
      // A change of a few columns, made by hand: built on the call.
      if (Object.keys(changes).length) await this.port.orm.update(table).set(changes).where(eq(table.id, filter.id));
      await this.applyKeywords(filter.id, input.keywords ?? []);
      await this.checkKeywordCaps(accountId, filter.id);
      return filter.id;
    });
    await this.changed(accountId);
    return this.get(accountId, filterId);
  }

  /** Rails' nested attributes: new keywords, changed ones (by id), and `_destroy`. Blank entries are skipped. In the caller's transaction. */
  private async applyKeywords(filterId: number, keywords: KeywordInput[]) {
    for (const k of keywords) {
      if (k.id != null) {
        const [existing] = await this.q.keywordInFilter.execute({ id: k.id, filterId });
        if (!existing) throw notFound();
        if (k.destroy) await this.q.deleteKeyword.execute({ id: k.id });
        else {
          const set: Partial<KeywordRow> = {};
          if (k.keyword !== undefined) set.keyword = k.keyword;
          if (k.wholeWord !== undefined) set.wholeWord = k.wholeWord;
          if (Object.keys(set).length) await this.setKeyword(k.id, set);
        }
      } else if (!k.destroy && (k.keyword ?? "").trim() !== "") {
        await this.q.insertKeyword.execute({ id: this.ids.next(), filterId, keyword: k.keyword as string, wholeWord: k.wholeWord ?? true });
      }
    }
  }

  private async setKeyword(id: number, set: Partial<KeywordRow>) {
    const { customFilterKeywords: table } = this.port.tables;
    await this.port.orm.update(table).set(set).where(eq(table.id, id));
  }

  /**
   * The caps on keywords, counted as stored (inside the writing transaction, so a refusal rolls
   * everything back) with `adding` more to come.
   */
  private async checkKeywordCaps(accountId: number, filterId: number, adding: { keywords: number; characters: number } = { keywords: 0, characters: 0 }) {
    const inFilter = (await this.q.keywordsInFilter.execute({ filterId }))[0]?.n ?? 0;
    if (inFilter + adding.keywords > MAX_KEYWORDS_PER_FILTER) throw validationFailed(TOO_MANY_KEYWORDS);
    const [inAccount] = await this.q.keywordsInAccount.execute({ accountId });
    if ((inAccount?.n ?? 0) + adding.keywords > MAX_KEYWORDS_PER_ACCOUNT) throw validationFailed(TOO_MANY_ACCOUNT_KEYWORDS);
    if ((inAccount?.characters ?? 0) + adding.characters > MAX_KEYWORD_CHARACTERS_PER_ACCOUNT) throw validationFailed(TOO_LONG_ACCOUNT_KEYWORDS);
  }

  async remove(accountId: number, id: number | null) {
    const { filter } = await this.get(accountId, id);
    await this.q.deleteFilter.execute({ id: filter.id });
    await this.changed(accountId);
  }

  // ---- keywords and statuses of one filter ----

  async getKeyword(accountId: number, id: number | null): Promise<KeywordRow> {
    const [row] = id === null ? [] : await this.q.keywordWithOwner.execute({ id });
    if (!row || row.owner !== accountId) throw notFound();
    return row.keyword;
  }

  async addKeyword(accountId: number, filterId: number | null, keyword: string | undefined, wholeWord: boolean | undefined): Promise<KeywordRow> {
    // The filter found, the caps counted and the keyword added in one transaction: a request
    // running beside it can neither remove the filter under it nor slip past the caps.
    const row = await this.port.transaction(async () => {
      await lockAccount(this.port, accountId);
      const { filter } = await this.get(accountId, filterId);
      if ((keyword ?? "").trim() === "") throw validationFailed("Keyword can't be blank");
      if ((keyword as string).length > MAX_KEYWORD) throw validationFailed(`Keyword is too long (maximum is ${MAX_KEYWORD} characters)`);
      await this.checkKeywordCaps(accountId, filter.id, { keywords: 1, characters: [...(keyword as string)].length });
      const row: KeywordRow = { id: this.ids.next(), filterId: filter.id, keyword: keyword as string, wholeWord: wholeWord ?? true };
      await this.q.insertKeyword.execute({ ...row });
      return row;
    });
    await this.changed(accountId);
    return row;
  }

  async updateKeyword(accountId: number, id: number | null, keyword: string | undefined, wholeWord: boolean | undefined): Promise<KeywordRow> {
    const row = await this.getKeyword(accountId, id);
    if (keyword !== undefined && keyword.trim() === "") throw validationFailed("Keyword can't be blank");
    if (keyword !== undefined && keyword.length > MAX_KEYWORD) throw validationFailed(`Keyword is too long (maximum is ${MAX_KEYWORD} characters)`);
    const set: Partial<KeywordRow> = {};
    if (keyword !== undefined) set.keyword = keyword;
    if (wholeWord !== undefined) set.wholeWord = wholeWord;
    if (Object.keys(set).length) {
      await this.port.transaction(async () => {
        await lockAccount(this.port, accountId);
        await this.setKeyword(row.id, set);
        if (set.keyword !== undefined) await this.checkKeywordCaps(accountId, row.filterId);
      });
    }
    await this.changed(accountId);
    return { ...row, ...set };
  }

  async removeKeyword(accountId: number, id: number | null) {
    const row = await this.getKeyword(accountId, id);
    await this.q.deleteKeyword.execute({ id: row.id });
    await this.changed(accountId);
  }

  async getStatus(accountId: number, id: number | null) {
    const [row] = id === null ? [] : await this.q.statusWithOwner.execute({ id });
    if (!row || row.owner !== accountId) throw notFound();
    return row.status;
  }

  /** Filters a status the owner can see (Mastodon's validate_status_access). */
  async addStatus(accountId: number, filterId: number | null, statusId: number | null) {
    // Checked and written in one transaction, as addKeyword: the pair is unique, and a second
    // request beside this one gets the 422 below rather than the index's refusal (on
    // PostgreSQL both may find it absent: the insert, which then writes nothing, decides).
    const row = await this.port.transaction(async () => {
      const { filter } = await this.get(accountId, filterId);
      const status = statusId === null ? undefined : await this.reader.findRow(statusId);
      if (!status) throw validationFailed("Status must exist");
      if ((await this.reader.visible([status], accountId)).length === 0) throw validationFailed("Status is invalid");
      const taken = () => new ApiError(422, "Validation failed: Status has already been taken");
      const [exists] = await this.q.statusInFilter.execute({ filterId: filter.id, statusId: status.id });
      if (exists) throw taken();
      const row = { id: this.ids.next(), filterId: filter.id, statusId: status.id };
      if (this.port.changes(await this.q.insertStatus.execute(row)) === 0) throw taken();
      return row;
    });
    await this.changed(accountId);
    return row;
  }

  async removeStatus(accountId: number, id: number | null) {
    const row = await this.getStatus(accountId, id);
    await this.q.deleteStatus.execute({ id: row.id });
    await this.changed(accountId);
  }

  /** Another connection committed: what is kept of the filters is read again. */
  forgetCached() {
    this.owners = null;
    this.compiled.clear();
  }

  // ---- matching ----

  /**
   * The viewer's filters, compiled, when any is active; null for most viewers, who have none
   * (answered from memory once the accounts with filters are read, so streaming to thousands
   * stays cheap). What `matches` matches against.
   */
  async matcherFor(accountId: number): Promise<Entry | null> {
    if (this.owners === null) {
      const rows = await this.port.all<{ id: number }>("SELECT DISTINCT account_id AS id FROM custom_filters");
      this.owners ??= new Set(rows.map((r) => Number(r.id)));
    }
    if (!this.owners.has(accountId)) return null;
    const entry = this.compiled.get(accountId) ?? this.compiled.put(accountId, await this.list(accountId));
    const now = this.clock.now();
    return entry.filters.some((f) => f.expiresAt === null || f.expiresAt > now) ? entry : null;
  }

  /**
   * The viewer's filters that match a status: keywords against its searchable text
   * (spoiler, text, poll options, media descriptions), status filters against its id and
   * what it boosts.
   */
  matches(compiled: Entry, searchable: string, statusIds: number[]): FilterMatch[] {
    const { filters, statusIds: filtered, matcher } = this.compiled.ready(compiled);
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
