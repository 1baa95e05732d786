import type { CustomFilterRow } from "../db/schema.ts";
import type { FilterWithRules } from "../models/views.ts";
import { buildMatcher, finishBuild, type KeywordMatcher } from "./filters-matcher.ts";

/** One account's filters, ready to match statuses against. */
export interface CompiledFilters {
  filters: CustomFilterRow[];
  statusIds: Set<number>[];
  /** One automaton over the keywords of all the filters (group i = filters[i]); null without keywords. */
  matcher: KeywordMatcher | null;
}

/** One account's filters as the cache keeps them: what `FilterService.matcherFor` answers. */
export interface Entry extends CompiledFilters {
  accountId: number;
  /** The automaton's build while its slices are still running between requests. */
  build: Generator<void, KeywordMatcher, void> | null;
}

/** How many accounts, and automaton states in all (~22 bytes each), are kept in memory. */
const MAX_ACCOUNTS = 10_000;
const MAX_STATES = 4_000_000;

/**
 * Compiled filters per account. When an account's filters change, its automaton is rebuilt
 * in slices (filters-matcher.ts BUILD_SLICE) run one per event-loop turn, so requests of
 * everybody else go on between them; the first read that needs it before the last slice ran
 * finishes it at once (bounded by the caps on keywords). An account not seen since start-up
 * (or evicted) is compiled once its rules are read (`put`, by FilterService through the
 * database port), bounded the same way.
 */
export class FilterMatcherCache {
  private entries = new Map<number, Entry>();
  private states = 0;

  /** The account's entry if kept (its automaton may still be building: see `ready`). */
  get(accountId: number): Entry | undefined {
    const entry = this.entries.get(accountId);
    if (entry) {
      // Most recently used last: eviction takes the oldest first.
      this.entries.delete(accountId);
      this.entries.set(accountId, entry);
    }
    return entry;
  }

  /** An entry with its automaton built. */
  ready(entry: Entry): CompiledFilters {
    if (entry.build) this.finish(entry, finishBuild(entry.build));
    return entry;
  }

  /** The account's filters as just read: compiled in slices between other work, kept and answered. */
  put(accountId: number, rules: FilterWithRules[]): Entry {
    this.drop(accountId);
    const entry = this.entry(accountId, rules);
    const slice = () => {
      if (this.entries.get(accountId) !== entry || !entry.build) return;
      const step = entry.build.next();
      if (step.done) this.finish(entry, step.value);
      else setImmediate(slice);
    };
    if (entry.build) setImmediate(slice);
    return entry;
  }

  private entry(accountId: number, rules: FilterWithRules[]): Entry {
    const hasKeywords = rules.some((r) => r.keywords.length > 0);
    const entry: Entry = {
      accountId,
      filters: rules.map((r) => r.filter),
      statusIds: rules.map((r) => new Set(r.statuses.map((s) => s.statusId))),
      matcher: null,
      build: hasKeywords ? buildMatcher(rules.map((r) => r.keywords)) : null,
    };
    this.entries.set(accountId, entry);
    this.evict(accountId);
    return entry;
  }

  private finish(entry: Entry, matcher: KeywordMatcher) {
    entry.build = null;
    entry.matcher = matcher;
    this.states += matcher.states;
    this.evict(entry.accountId);
  }

  private evict(keep: number) {
    for (const [id] of this.entries) {
      if (this.entries.size <= MAX_ACCOUNTS && this.states <= MAX_STATES) return;
      if (id !== keep) this.drop(id);
    }
  }

  /** Everything goes: another connection committed (see forgetCached in consequences.ts). */
  clear() {
    this.entries.clear();
    this.states = 0;
  }

  /** The account's entry goes (its filters changed): read again when next asked. */
  drop(accountId: number) {
    const entry = this.entries.get(accountId);
    if (!entry) return;
    this.entries.delete(accountId);
    if (entry.matcher) this.states -= entry.matcher.states;
  }
}
