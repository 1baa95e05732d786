import type { CustomFilterRow } from "../db/schema.ts";
import type { FilterMatch, FilterWithRules, KeywordRow } from "../models/views.ts";

function filterFields(f: CustomFilterRow) {
  return {
    id: String(f.id),
    title: f.title,
    context: JSON.parse(f.context) as string[],
    expires_at: f.expiresAt === null ? null : new Date(f.expiresAt).toISOString(),
    filter_action: f.action,
  };
}

export function serializeKeyword(k: KeywordRow) {
  return { id: String(k.id), keyword: k.keyword, whole_word: k.wholeWord };
}

export function serializeFilterStatus(s: { id: number; statusId: number }) {
  return { id: String(s.id), status_id: String(s.statusId) };
}

/** REST::FilterSerializer with its rules, as every /api/v2/filters answer has it. */
export function serializeFilter(f: FilterWithRules) {
  return { ...filterFields(f.filter), keywords: f.keywords.map(serializeKeyword), statuses: f.statuses.map(serializeFilterStatus) };
}

/** FilterResult, as in a Status's `filtered` (the filter without its rules). */
export function serializeFilterResult(m: FilterMatch) {
  return { filter: filterFields(m.filter), keyword_matches: m.keywordMatches, status_matches: m.statusMatches };
}

/** The deprecated v1 Filter: one entry per keyword. */
export function serializeV1Filter(f: CustomFilterRow, k: KeywordRow) {
  return {
    id: String(k.id),
    phrase: k.keyword,
    context: JSON.parse(f.context) as string[],
    whole_word: k.wholeWord,
    expires_at: f.expiresAt === null ? null : new Date(f.expiresAt).toISOString(),
    irreversible: f.action === "hide",
  };
}
