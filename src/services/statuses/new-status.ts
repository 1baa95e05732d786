import { getTableColumns, getTableName } from "drizzle-orm";
import type { DatabasePort } from "../../db/port.ts";
import { polls, statuses, type PollRow, type StatusRow } from "../../db/schema.ts";

/**
 * What a local post, a remote note and a boost say of a new status; the rest (counters, card,
 * edit date) every new status starts without. Strings and flags left out are empty.
 */
export interface NewStatusFields {
  id: number;
  accountId: number;
  visibility: string;
  createdAt: number;
  /** The status it replies to, when stored here: it joins that thread. */
  parent?: Pick<StatusRow, "id" | "accountId" | "conversationId"> | null;
  /** What a boost boosts: it joins that thread. */
  reblogOf?: Pick<StatusRow, "id" | "conversationId">;
  applicationId?: number | null;
  text?: string;
  contentHtml?: string;
  spoilerText?: string;
  sensitive?: boolean;
  language?: string | null;
  /** A remote reply whose parent is not stored here yet (kept to fetch the thread, and to link it when it comes). */
  inReplyToUri?: string | null;
  /** JSON, as the row keeps them. */
  mentions?: string;
  tags?: string;
  emojis?: string;
  hasMedia?: boolean;
  hasPoll?: boolean;
  /** A remote status's object IRI and web page. */
  uri?: string | null;
  url?: string | null;
  /** Who may quote it, JSON as the row keeps it (see statuses.quote_approval). */
  quoteApproval?: string | null;
}

/** The one way a status row is made, for every path that publishes one. */
export function newStatusRow(f: NewStatusFields): StatusRow {
  return {
    id: f.id,
    accountId: f.accountId,
    applicationId: f.applicationId ?? null,
    text: f.text ?? "",
    contentHtml: f.contentHtml ?? "",
    spoilerText: f.spoilerText ?? "",
    sensitive: f.sensitive ?? false,
    visibility: f.visibility,
    language: f.language ?? null,
    inReplyToId: f.parent?.id ?? null,
    inReplyToAccountId: f.parent?.accountId ?? null,
    inReplyToUri: f.inReplyToUri ?? null,
    reblogOfId: f.reblogOf?.id ?? null,
    conversationId: f.reblogOf?.conversationId ?? f.parent?.conversationId ?? f.id,
    mentions: f.mentions ?? "[]",
    tags: f.tags ?? "[]",
    emojis: f.emojis ?? "[]",
    card: null,
    hasMedia: f.hasMedia ?? false,
    hasPoll: f.hasPoll ?? false,
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    quotesCount: 0,
    quoteApproval: f.quoteApproval ?? null,
    createdAt: f.createdAt,
    editedAt: null,
    uri: f.uri ?? null,
    url: f.url ?? null,
  };
}

/** A new poll: a local one starts with no votes; a remote one comes with its server's counts. */
export interface NewPollFields {
  id: number;
  statusId: number;
  accountId: number;
  options: string[];
  /** Votes per option; none yet when left out. */
  tallies?: number[];
  multiple: boolean;
  hideTotals?: boolean;
  votesCount?: number;
  votersCount?: number;
  expiresAt: number;
  /** A remote poll already closed. */
  endedAt?: number | null;
  createdAt: number;
}

/**
 * Writes new status and poll rows, as raw statements of every column (a post compiles nothing),
 * in the caller's transaction (the database port's).
 */
export class NewStatuses {
  private status;
  private boost;
  private poll;

  constructor(port: DatabasePort) {
    this.status = rawInsert(port, statuses);
    this.boost = rawInsert(port, statuses, " ON CONFLICT DO NOTHING");
    this.poll = rawInsert(port, polls);
  }

  async insert(row: StatusRow): Promise<void> {
    await this.status(row);
  }

  /**
   * A boost, unless the account's boost of that status (statuses_account_reblog_of), or a status
   * at its IRI, is stored already: false then, with nothing written. On PostgreSQL it waits for
   * a boost being written by another transaction and answers false once that one committed.
   */
  async insertBoost(row: StatusRow): Promise<boolean> {
    return (await this.boost(row)) > 0;
  }

  async insertPoll(f: NewPollFields): Promise<PollRow> {
    const row = pollRow(f);
    await this.poll(row);
    return row;
  }
}

/**
 * An INSERT of every column, raw: on the post's path a prepared builder's execute costs more CPU
 * than the statement (drizzle's layers per call), and a raw statement is cached by the driver.
 */
function rawInsert(port: DatabasePort, table: typeof statuses | typeof polls, onConflict = "") {
  const columns = Object.entries(getTableColumns(table));
  const text = `INSERT INTO ${getTableName(table)} (${columns.map(([, c]) => c.name).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})${onConflict}`;
  return (row: object) => port.run(text, columns.map(([key]) => (row as Record<string, unknown>)[key] ?? null));
}

function pollRow(f: NewPollFields): PollRow {
  const votes = f.tallies?.reduce((a, b) => a + b, 0) ?? 0;
  return {
    id: f.id,
    statusId: f.statusId,
    accountId: f.accountId,
    options: JSON.stringify(f.options),
    tallies: JSON.stringify(f.tallies ?? f.options.map(() => 0)),
    multiple: f.multiple,
    hideTotals: f.hideTotals ?? false,
    votesCount: f.votesCount ?? votes,
    votersCount: f.votersCount ?? 0,
    expiresAt: f.expiresAt,
    endedAt: f.endedAt ?? null,
    createdAt: f.createdAt,
  };
}
