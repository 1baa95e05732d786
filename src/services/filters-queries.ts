import { and, count, eq, sql } from "drizzle-orm";
import type { DatabasePort } from "../db/port.ts";

const p = sql.placeholder;

/**
 * The filters' statements on the database port, built once: drizzle spends more building a
 * query than SQLite running it (docs/architecture.md, "The database port"). The rules of a
 * list of filters are read through their owner (a join), not an `IN` list of ids, so that
 * those reads are prepared too.
 */
export function filterQueries(port: DatabasePort) {
  const orm = port.orm;
  const { customFilters: filters, customFilterKeywords: keywords, customFilterStatuses: statuses } = port.tables;
  const owned = eq(filters.accountId, p("accountId"));
  const keywordColumns = { id: keywords.id, filterId: keywords.filterId, keyword: keywords.keyword, wholeWord: keywords.wholeWord };
  const statusColumns = { id: statuses.id, filterId: statuses.filterId, statusId: statuses.statusId };
  return {
    filtersOf: orm.select().from(filters).where(owned).orderBy(filters.id).prepare(),
    filter: orm
      .select()
      .from(filters)
      .where(and(eq(filters.id, p("id")), owned))
      .prepare(),
    anyOf: orm.select({ id: filters.id }).from(filters).where(owned).limit(1).prepare(),
    countOf: orm.select({ n: count() }).from(filters).where(owned).prepare(),
    insertFilter: orm
      .insert(filters)
      .values({ id: p("id"), accountId: p("accountId"), title: p("title"), context: p("context"), action: p("action"), expiresAt: p("expiresAt"), createdAt: p("createdAt") })
      .prepare(),
    deleteFilter: orm.delete(filters).where(eq(filters.id, p("id"))).prepare(),

    keywordsOfAccount: orm.select(keywordColumns).from(keywords).innerJoin(filters, eq(filters.id, keywords.filterId)).where(owned).orderBy(keywords.id).prepare(),
    keywordsOfFilter: orm.select().from(keywords).where(eq(keywords.filterId, p("filterId"))).orderBy(keywords.id).prepare(),
    keywordInFilter: orm
      .select()
      .from(keywords)
      .where(and(eq(keywords.id, p("id")), eq(keywords.filterId, p("filterId"))))
      .prepare(),
    keywordWithOwner: orm.select({ keyword: keywords, owner: filters.accountId }).from(keywords).innerJoin(filters, eq(filters.id, keywords.filterId)).where(eq(keywords.id, p("id"))).prepare(),
    insertKeyword: orm.insert(keywords).values({ id: p("id"), filterId: p("filterId"), keyword: p("keyword"), wholeWord: p("wholeWord") }).prepare(),
    deleteKeyword: orm.delete(keywords).where(eq(keywords.id, p("id"))).prepare(),
    keywordsInFilter: orm.select({ n: count() }).from(keywords).where(eq(keywords.filterId, p("filterId"))).prepare(),
    // length() counts code points on both (characters in PostgreSQL's UTF-8): the automaton's
    // unit. PostgreSQL's sum of an integer is int8, a string from the driver: mapWith(Number).
    keywordsInAccount: orm
      .select({ n: count(), characters: sql<number | null>`sum(length(${keywords.keyword}))`.mapWith(Number) })
      .from(keywords)
      .innerJoin(filters, eq(filters.id, keywords.filterId))
      .where(owned)
      .prepare(),

    statusesOfAccount: orm.select(statusColumns).from(statuses).innerJoin(filters, eq(filters.id, statuses.filterId)).where(owned).orderBy(statuses.id).prepare(),
    statusesOfFilter: orm.select().from(statuses).where(eq(statuses.filterId, p("filterId"))).orderBy(statuses.id).prepare(),
    statusInFilter: orm
      .select({ id: statuses.id })
      .from(statuses)
      .where(and(eq(statuses.filterId, p("filterId")), eq(statuses.statusId, p("statusId"))))
      .prepare(),
    statusWithOwner: orm.select({ status: statuses, owner: filters.accountId }).from(statuses).innerJoin(filters, eq(filters.id, statuses.filterId)).where(eq(statuses.id, p("id"))).prepare(),
    // Nothing written when the filter has the status already (addStatus then answers 422).
    insertStatus: orm
      .insert(statuses)
      .values({ id: p("id"), filterId: p("filterId"), statusId: p("statusId") })
      .onConflictDoNothing({ target: [statuses.filterId, statuses.statusId] })
      .prepare(),
    deleteStatus: orm.delete(statuses).where(eq(statuses.id, p("id"))).prepare(),
  };
}

export type FilterQueries = ReturnType<typeof filterQueries>;
