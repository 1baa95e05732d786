import { randomUUID } from "node:crypto";
import { getTableColumns, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { lockRows } from "../../db/row-locks.ts";
import { rowReader } from "../../db/rows.ts";
import { quotes, type QuoteRow, type StatusRow } from "../../db/schema.ts";
import { ApiError, forbidden, notFound } from "../../errors.ts";
import { parseId, type IdGenerator } from "../../ids.ts";
import type { EventBus } from "../../infra/events.ts";
import { escapeHtml } from "../../text/format.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { RenderCache } from "../statuses/render-cache.ts";
import type { QuoteDecision, QuotePolicy } from "./policy.ts";

/** Mastodon's statuses.errors.quoted_status_not_found: the quoted status is not there, not visible, or its policy refuses. */
export const QUOTED_NOT_FOUND = "The post you are trying to quote does not appear to exist.";
/** Mastodon's statuses.errors.quoted_user_not_mentioned (a private mention quoting someone it does not mention). */
export const QUOTED_NOT_MENTIONED = "Cannot quote a non-mentioned user in a Private Mention post.";

const SILENT_MENTION = "INSERT INTO mentions (status_id, account_id) VALUES (?, ?) ON CONFLICT DO NOTHING";

export type QuoteState = "pending" | "accepted" | "rejected" | "revoked" | "deleted";

/** A remote status's quote, as the federation side read it (FEP-044f `quote`, or the legacy quoteUrl, quoteUri, _misskey_quote). */
export interface RemoteQuoteInput {
  /** The quoting status, stored. */
  status: StatusRow;
  /** The quoted status when it is stored here; null while only its IRI is known. */
  quoted: StatusRow | null;
  quotedUri: string;
  /** The QuoteAuthorization stamp the quoting post carries (already checked by the caller), or none. */
  approvalUri?: string | null;
  /** The QuoteRequest's id when the quote arrived as one. */
  activityUri?: string | null;
  /** Read from a property of servers that do not ask (shown as a link only, never as a quote). */
  legacy?: boolean;
  /** rejected: its stamp's own server says there is none (Mastodon's VerifyQuoteService rejects it). */
  state: "pending" | "accepted" | "rejected";
  /** False when the quoting status was out before (an edit brought the quote): streams show it again. Default true. */
  withStatus?: boolean;
}

const QUOTE = rowReader(quotes);
/** Raw and read by rowReader: asked for every status a remote Create or Update brings, and every answer to a quote. */
const Q = {
  byStatus: `SELECT ${QUOTE.columns} ${QUOTE.from} WHERE status_id = ? LIMIT 1`,
  byId: `SELECT ${QUOTE.columns} ${QUOTE.from} WHERE id = ?`,
  byActivity: `SELECT ${QUOTE.columns} ${QUOTE.from} WHERE activity_uri = ? LIMIT 1`,
  // An accepted one first: other posts may name the same stamp, unproven.
  byApproval: `SELECT ${QUOTE.columns} ${QUOTE.from} WHERE approval_uri = ? ORDER BY CASE WHEN state = 'accepted' THEN 0 ELSE 1 END, id LIMIT 1`,
  ofQuoted: `SELECT ${QUOTE.columns} ${QUOTE.from} WHERE quoted_status_id = ? AND status_id = ? LIMIT 1`,
  localQuotes: `SELECT ${QUOTE.columns} ${QUOTE.from} JOIN accounts ON accounts.id = quotes.account_id WHERE quotes.quoted_status_id = ? AND quotes.state = 'accepted' AND accounts.domain IS NULL`,
};

/**
 * Quote posts (Mastodon's Quote model and its services): a status quoting another is one row
 * of `quotes`, whose state moves pending → accepted | rejected, accepted → revoked. Each
 * transition is announced (quote.requested, quote.accepted, quote.rejected, quote.revoked,
 * quote.removed) and what follows it (quotes_count, the `quote` notification, activities to
 * other servers) is in the table of consequences. Every write here runs inside the caller's
 * transaction or its own, on the database port (issue 31).
 */
export class QuoteService {
  private insertQuery;
  /** A remote status's quote, unless it has one: two Updates adding it at once (PostgreSQL) store it once. */
  private insertIfNone;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
    readonly policy: QuotePolicy,
    private reader: StatusReader,
    /** A status's cached rendering says whether it quotes something: dropped when its quote comes or changes. */
    private cache: RenderCache,
    private publicUrl: string,
  ) {
    const t = port.tables.quotes;
    const values = Object.fromEntries(Object.keys(getTableColumns(t)).map((k) => [k, sql.placeholder(k)])) as never;
    this.insertQuery = port.orm.insert(t).values(values).prepare();
    this.insertIfNone = port.orm.insert(t).values(values).onConflictDoNothing({ target: t.statusId }).prepare();
  }

  /** The status a new post of `accountId` may quote, or Mastodon's 404 (unknown, invisible, a boost, or refused by its policy). */
  async quotable(id: string, accountId: number): Promise<StatusRow> {
    const row = await this.reader.findRow(parseId(id) ?? -1);
    if (!row || (await this.policy.mayQuote(row, accountId)) === "denied") throw new ApiError(404, QUOTED_NOT_FOUND);
    return row;
  }

  async forStatus(statusId: number): Promise<QuoteRow | undefined> {
    return this.one(Q.byStatus, [statusId]);
  }

  find(id: number): Promise<QuoteRow | undefined> {
    return this.one(Q.byId, [id]);
  }

  byActivityUri(uri: string): Promise<QuoteRow | undefined> {
    return this.one(Q.byActivity, [uri]);
  }

  /** The quote a stamp proved (an accepted one first: other posts may name the same stamp, unproven). */
  byApprovalUri(uri: string): Promise<QuoteRow | undefined> {
    return this.one(Q.byApproval, [uri]);
  }

  /** The status a local status quotes, when it is stored (for the fallback link an edit keeps). */
  async quotedStatusOf(statusId: number): Promise<StatusRow | null> {
    const quote = await this.forStatus(statusId);
    return quote?.quotedStatusId ? ((await this.reader.findRow(quote.quotedStatusId)) ?? null) : null;
  }

  /**
   * A new local status quotes `quoted` (checked by `quotable`), within the post's transaction:
   * a local quoted status answers at once (accepted when the policy lets it, else rejected); a
   * remote one is asked (pending, `quote.requested`: the federation side sends the QuoteRequest).
   */
  async attach(status: StatusRow, quoted: StatusRow): Promise<QuoteRow> {
    const now = this.clock.now();
    const local = quoted.uri === null;
    const row: QuoteRow = {
      id: this.ids.next(),
      statusId: status.id,
      accountId: status.accountId,
      quotedStatusId: quoted.id,
      quotedAccountId: quoted.accountId,
      quotedUri: null,
      state: "pending",
      // Mastodon's Quote#set_activity_uri: the request's id, under the quoting actor.
      activityUri: local ? null : `${this.publicUrl}/users/${await this.usernameOf(status.accountId)}/quote_requests/${randomUUID()}`,
      approvalUri: null,
      legacy: false,
      createdAt: now,
      updatedAt: now,
    };
    await this.insertQuery.execute(row);
    // Mastodon's Quote#ensure_quoted_access (see `ensureQuotedAccess`).
    if (row.quotedAccountId !== row.accountId) await this.port.run(SILENT_MENTION, [row.statusId, row.quotedAccountId]);
    this.cache.invalidateStatus(row.statusId);
    if (!local) {
      await this.events.emit({ type: "quote.requested", quote: row });
      return row;
    }
    // A local quoted status answers at once: accepted when the policy lets it, else rejected (Mastodon offers no manual review).
    const state = (await this.policy.mayQuote(quoted, status.accountId)) === "automatic" ? "accepted" : "rejected";
    const updated: QuoteRow = { ...row, state, updatedAt: this.clock.now() };
    await this.port.run("UPDATE quotes SET state = ?, updated_at = ? WHERE id = ?", [state, updated.updatedAt, row.id]);
    await this.moved(updated, true);
    return updated;
  }

  /**
   * A remote status's quote (the federation side read and checked it). Accepted ones count and
   * notify at once; pending ones wait for the quoted author's answer (`answerRequest` when the
   * quoted status is local, `acceptRemote`/`rejectRemote` otherwise). Null if the status already has one.
   */
  async attachRemote(input: RemoteQuoteInput): Promise<QuoteRow | null> {
    const now = this.clock.now();
    const row: QuoteRow = {
      id: this.ids.next(),
      statusId: input.status.id,
      accountId: input.status.accountId,
      quotedStatusId: input.quoted?.id ?? null,
      quotedAccountId: input.quoted?.accountId ?? null,
      quotedUri: input.quotedUri,
      state: input.state,
      activityUri: input.activityUri ?? null,
      approvalUri: input.approvalUri ?? null,
      legacy: input.legacy ?? false,
      createdAt: now,
      updatedAt: now,
    };
    return this.port.transaction(async () => {
      if (this.port.changes(await this.insertIfNone.execute(row)) === 0) return null;
      this.cache.invalidateStatus(row.statusId);
      if (row.state === "accepted") await this.events.emit({ type: "quote.accepted", quote: row, withStatus: input.withStatus ?? true });
      return row;
    });
  }

  /** A QuoteRequest for a local status (its quote stored pending by `attachRemote`): decided by the policy, as Mastodon answers automatically. */
  async answerRequest(quoteId: number, activityUri?: string): Promise<QuoteRow | null> {
    const found = await this.find(quoteId);
    if (!found || found.state !== "pending" || found.quotedStatusId === null) return null;
    const quoted = await this.reader.findRow(found.quotedStatusId);
    if (!quoted || quoted.uri !== null) return null;
    try {
      return await this.port.transaction(async () => {
        // Read again under its lock: the same request delivered twice at once (PostgreSQL; on
        // SQLite both read it before either's transaction) is answered once, not accepted twice.
        await lockRows(this.port, "SELECT id FROM quotes WHERE id = ?", [quoteId]);
        const current = await this.find(quoteId);
        if (!current || current.state !== "pending") return null;
        // The request's IRI, which the answer quotes (Mastodon's quote.update!(activity_uri: ...)).
        const quote = activityUri === undefined ? current : { ...current, activityUri };
        if (activityUri !== undefined) await this.port.run("UPDATE quotes SET activity_uri = ? WHERE id = ?", [activityUri, quote.id]);
        const decision = await this.policy.mayQuote(quoted, quote.accountId);
        // Mastodon's accept_quote_request! gives the quoted author access before accepting.
        if (decision === "automatic") await this.ensureQuotedAccess(quote);
        return this.answer(quote, decision);
      });
    } catch (error) {
      // The request's IRI is another quote's already (a server that gives two requests one id):
      // this one is not answered, as Mastodon's update! fails on its unique index.
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /**
   * A remote post's pending quote of a remote post, now proven by the stamp `approvalUri` (its
   * author sent it again with the stamp, or it was checked again, and the stamp's server vouched
   * for it; null: an author quoting itself needs none): accepted.
   */
  async acceptVerified(quoteId: number, approvalUri: string | null): Promise<QuoteRow | null> {
    const quote = await this.find(quoteId);
    if (!quote || quote.state !== "pending") return null;
    return this.port.transaction(() => this.move(quote, "accepted", approvalUri));
  }

  /**
   * A remote post's quote whose stamp its own server says is not there (Mastodon's
   * VerifyQuoteService: quote.reject!): a pending one rejected, an accepted one revoked.
   */
  async rejectVerified(quoteId: number): Promise<QuoteRow | null> {
    const quote = await this.find(quoteId);
    if (!quote || (quote.state !== "pending" && quote.state !== "accepted")) return null;
    return this.port.transaction(() => this.reject(quote));
  }

  /** A remote quote's quoted post, fetched after the quote was stored (it could not be had then). */
  async setQuoted(quoteId: number, quoted: StatusRow): Promise<void> {
    await this.port.run("UPDATE quotes SET quoted_status_id = ?, quoted_account_id = ? WHERE id = ? AND quoted_status_id IS NULL", [quoted.id, quoted.accountId, quoteId]);
    const quote = await this.find(quoteId);
    if (quote) this.cache.invalidateStatus(quote.statusId);
  }

  /** A pending remote quote now names another stamp (its post's Update): the one to check. */
  async restamp(quoteId: number, approvalUri: string | null): Promise<void> {
    await this.port.run("UPDATE quotes SET approval_uri = ?, updated_at = ? WHERE id = ? AND state = 'pending'", [approvalUri, this.clock.now(), quoteId]);
  }

  /** A quote checked (again) now: not stale for another while (QuoteRefreshWorker's quote.touch). */
  async touch(quoteId: number): Promise<void> {
    await this.port.run("UPDATE quotes SET updated_at = ? WHERE id = ?", [this.clock.now(), quoteId]);
  }

  /**
   * A remote post's edit (an explicit Update) dropped its quote, or quotes another post
   * (Mastodon's ProcessStatusUpdateService#update_quote!): the quote goes, counted back if it
   * counted. An accepted quote of a post of this server is revoked first, so that its stamp is
   * deleted where it was believed (Mastodon's RevokeQuoteService before the destroy).
   */
  async dropRemote(quoteId: number): Promise<QuoteRow | null> {
    const found = await this.find(quoteId);
    if (!found) return null;
    const local = found.quotedStatusId !== null && (await this.reader.findRow(found.quotedStatusId))?.uri === null;
    return this.port.transaction(async () => {
      const quote = found.state === "accepted" && local ? await this.reject(found) : found;
      await this.port.run("DELETE FROM quotes WHERE id = ?", [quote.id]);
      this.cache.invalidateStatus(quote.statusId);
      await this.events.emit({ type: "quote.removed", quote });
      return quote;
    });
  }

  /**
   * The quoted author's server accepted a local status's QuoteRequest (`activityUri`) with the
   * stamp `approvalUri`. Only the quoted account may answer, and only a quote still waiting is
   * accepted (Mastodon's Accept#accept_quote! returns unless `quote.pending?`): one it rejected
   * or revoked stays so, whatever Accept comes later (a replay, or one overtaken by its Reject).
   */
  async acceptRemote(activityUri: string, approvalUri: string, actorAccountId: number): Promise<QuoteRow | null> {
    const quote = await this.byActivityUri(activityUri);
    // Only a question still open is answered (Mastodon's accept_quote!: quote.pending?): an Accept
    // arriving after a Reject, or after the quoted post went, changes nothing.
    if (!quote || quote.quotedAccountId !== actorAccountId || quote.state !== "pending") return null;
    return this.port.transaction(() => this.move(quote, "accepted", approvalUri));
  }

  /** The quoted author's server refused a QuoteRequest (Reject): rejected, or revoked if it had been accepted. */
  async rejectRemote(activityUri: string, actorAccountId: number): Promise<QuoteRow | null> {
    const quote = await this.byActivityUri(activityUri);
    if (!quote || quote.quotedAccountId !== actorAccountId) return null;
    return this.port.transaction(() => this.reject(quote));
  }

  /** The quoted author's server deleted its stamp (Delete of the QuoteAuthorization): the quote is revoked. */
  async revokeStamp(approvalUri: string, actorAccountId: number): Promise<QuoteRow | null> {
    const quote = await this.byApprovalUri(approvalUri);
    if (!quote || quote.quotedAccountId !== actorAccountId) return null;
    return this.port.transaction(() => this.reject(quote));
  }

  /**
   * POST /api/v1/statuses/:id/quotes/:quoting_status_id/revoke: the quoted status's author takes
   * back a quote of it (Mastodon's RevokeQuoteService). The quoted status must be visible (404),
   * the quote one of it (404), and the caller its author (403). The quoting status, as it is now.
   */
  async revoke(accountId: number, quotedStatusId: number | null, quotingStatusId: number | null): Promise<StatusRow> {
    const quoted = await this.reader.visibleRow(quotedStatusId, accountId);
    const quote = quotingStatusId === null ? undefined : await this.one(Q.ofQuoted, [quoted.id, quotingStatusId]);
    if (!quote) throw notFound();
    if (quote.quotedAccountId !== accountId) throw forbidden();
    await this.port.transaction(() => this.reject(quote));
    const status = await this.reader.findRow(quote.statusId);
    if (!status) throw notFound();
    return status;
  }

  /** A quoting status is being deleted (RemovalService, in its transaction): its quote goes first, so that what it counted is counted back. */
  async removing(statusId: number): Promise<void> {
    const quote = await this.forStatus(statusId);
    if (!quote) return;
    await this.port.run("DELETE FROM quotes WHERE id = ?", [quote.id]);
    await this.events.emit({ type: "quote.removed", quote });
  }

  /** Local quoters' statuses quoting `statusId` (accepted ones): who hears of its edits (`quoted_update`). */
  async localQuotesOf(statusId: number): Promise<QuoteRow[]> {
    return (await this.port.values(Q.localQuotes, [statusId])).map(QUOTE.map);
  }

  /**
   * The fallback paragraph Mastodon prepends to a quote post's HTML for clients that do not show
   * quotes, unless the text already links the quoted status. Clients that do hide `.quote-inline`.
   */
  fallbackHtml(quoted: StatusRow, authorUsername: string, text: string, html: string): string {
    const local = quoted.uri === null;
    const url = local ? `${this.publicUrl}/@${authorUsername}/${quoted.id}` : httpUrlOrNull(quoted.url ?? quoted.uri);
    if (url === null) return html;
    if (text.includes(url) || (quoted.uri !== null && text.includes(quoted.uri))) return html;
    const link = escapeHtml(url);
    return `<p class="quote-inline">RE: <a href="${link}">${link}</a></p>${html}`;
  }

  /**
   * Mastodon's Quote#ensure_quoted_access: the quoted author is mentioned silently by the quoting
   * status, so that a private quote can be seen by the author it quotes (and their `quote`
   * notification shown). A silent mention is a row of the mentions table only: the status's own
   * list of mentions (its rendering, its Mention tags, notifications, conversations) is untouched.
   */
  private async ensureQuotedAccess(quote: QuoteRow): Promise<void> {
    if (quote.quotedAccountId === null || quote.quotedAccountId === quote.accountId) return;
    await this.port.run(SILENT_MENTION, [quote.statusId, quote.quotedAccountId]);
  }

  /** A local quoted status's answer: accepted when the policy lets it at once, else rejected (Mastodon offers no manual review). */
  private answer(quote: QuoteRow, decision: QuoteDecision): Promise<QuoteRow> {
    return this.move(quote, decision === "automatic" ? "accepted" : "rejected", quote.approvalUri);
  }

  /** Mastodon's Quote#reject!: an accepted quote is revoked, any other rejected (a revoked one stays so). */
  private async reject(quote: QuoteRow): Promise<QuoteRow> {
    if (quote.state === "revoked") return quote;
    return this.move(quote, quote.state === "accepted" ? "revoked" : "rejected", quote.approvalUri);
  }

  private async move(quote: QuoteRow, state: "accepted" | "rejected" | "revoked", approvalUri: string | null): Promise<QuoteRow> {
    if (quote.state === state) return quote;
    const updated: QuoteRow = { ...quote, state, approvalUri, updatedAt: this.clock.now() };
    await this.port.run("UPDATE quotes SET state = ?, approval_uri = ?, updated_at = ? WHERE id = ?", [state, approvalUri, updated.updatedAt, quote.id]);
    await this.moved(updated, false);
    return updated;
  }

  private async one(text: string, params: unknown[]): Promise<QuoteRow | undefined> {
    const [row] = await this.port.values(text, params);
    return row && QUOTE.map(row);
  }

  /** What follows a quote's move to its new state, once written. `withStatus`: decided in the quoting status's own transaction (see the events). */
  private async moved(updated: QuoteRow, withStatus: boolean): Promise<void> {
    this.cache.invalidateStatus(updated.statusId);
    if (updated.state === "revoked") await this.events.emit({ type: "quote.revoked", quote: updated });
    else await this.events.emit({ type: `quote.${updated.state as "accepted" | "rejected"}`, quote: updated, ...(withStatus ? { withStatus } : {}) });
  }

  private async usernameOf(accountId: number): Promise<string> {
    return (await this.port.get<{ username: string }>("SELECT username FROM accounts WHERE id = ?", [accountId]))?.username ?? "";
  }
}
