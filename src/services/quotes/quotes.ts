import { randomUUID } from "node:crypto";
import { and, eq, getTableColumns, isNull, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import type { DatabasePort } from "../../db/port.ts";
import { accounts, mentions, quotes, type QuoteRow, type StatusRow } from "../../db/schema.ts";
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

/**
 * Quote posts (Mastodon's Quote model and its services): a status quoting another is one row
 * of `quotes`, whose state moves pending → accepted | rejected, accepted → revoked. Each
 * transition is announced (quote.requested, quote.accepted, quote.rejected, quote.revoked,
 * quote.removed) and what follows it (quotes_count, the `quote` notification, activities to
 * other servers) is in the table of consequences. Every write here runs inside the caller's
 * transaction or its own.
 *
 * On the database port (issue 31): `attach`, a local post's quote written in the post's port
 * transaction. The rest stays on `Db`, synchronous, for callers not yet converted: RemoteNotes,
 * NoteQuotes, RemoteInteractions and the quote checks (the remote paths), RemovalService
 * (`removing`, inside its synchronous transaction), the revoke route's `revoke`, and the reads
 * the synchronous reader, policy and editing ask (`forStatus`, `quotedStatusOf`, `localQuotesOf`).
 */
export class QuoteService {
  private byStatusQuery;

  private insertQuery;

  constructor(
    private db: Db,
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
    this.byStatusQuery = db.select().from(quotes).where(eq(quotes.statusId, sql.placeholder("status"))).prepare();
    const t = port.tables.quotes;
    this.insertQuery = port.orm.insert(t).values(Object.fromEntries(Object.keys(getTableColumns(t)).map((k) => [k, sql.placeholder(k)])) as never).prepare();
  }

  /** The status a new post of `accountId` may quote, or Mastodon's 404 (unknown, invisible, a boost, or refused by its policy). */
  quotable(id: string, accountId: number): StatusRow {
    const row = this.reader.findRow(parseId(id) ?? -1);
    if (!row || this.policy.mayQuote(row, accountId) === "denied") throw new ApiError(404, QUOTED_NOT_FOUND);
    return row;
  }

  forStatus(statusId: number): QuoteRow | undefined {
    return this.byStatusQuery.get({ status: statusId });
  }

  find(id: number): QuoteRow | undefined {
    return this.db.select().from(quotes).where(eq(quotes.id, id)).get();
  }

  byActivityUri(uri: string): QuoteRow | undefined {
    return this.db.select().from(quotes).where(eq(quotes.activityUri, uri)).get();
  }

  /** The quote a stamp proved (an accepted one first: other posts may name the same stamp, unproven). */
  byApprovalUri(uri: string): QuoteRow | undefined {
    return this.db.select().from(quotes).where(eq(quotes.approvalUri, uri)).orderBy(sql`${quotes.state} = 'accepted' DESC`, quotes.id).get();
  }

  /** The status a local status quotes, when it is stored (for the fallback link an edit keeps). */
  quotedStatusOf(statusId: number): StatusRow | null {
    const quote = this.forStatus(statusId);
    return quote?.quotedStatusId ? (this.reader.findRow(quote.quotedStatusId) ?? null) : null;
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
    const state = this.policy.mayQuote(quoted, status.accountId) === "automatic" ? "accepted" : "rejected";
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
    if (this.forStatus(input.status.id)) return null;
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
    await this.port.transaction(async () => {
      this.db.insert(quotes).values(row).run();
      this.cache.invalidateStatus(row.statusId);
      if (row.state === "accepted") await this.events.emit({ type: "quote.accepted", quote: row, withStatus: input.withStatus ?? true });
    });
    return row;
  }

  /** A QuoteRequest for a local status (its quote stored pending by `attachRemote`): decided by the policy, as Mastodon answers automatically. */
  async answerRequest(quoteId: number, activityUri?: string): Promise<QuoteRow | null> {
    const found = this.find(quoteId);
    if (!found || found.state !== "pending" || found.quotedStatusId === null) return null;
    const quoted = this.reader.findRow(found.quotedStatusId);
    if (!quoted || quoted.uri !== null) return null;
    return this.port.transaction(async () => {
      // The request's IRI, which the answer quotes (Mastodon's quote.update!(activity_uri: ...)).
      const quote = activityUri === undefined ? found : { ...found, activityUri };
      if (activityUri !== undefined) this.db.update(quotes).set({ activityUri }).where(eq(quotes.id, quote.id)).run();
      const decision = this.policy.mayQuote(quoted, quote.accountId);
      // Mastodon's accept_quote_request! gives the quoted author access before accepting.
      if (decision === "automatic") this.ensureQuotedAccess(quote);
      return await this.answer(quote, decision);
    });
  }

  /**
   * A remote post's pending quote of a remote post, now proven by the stamp `approvalUri` (its
   * author sent it again with the stamp, or it was checked again, and the stamp's server vouched
   * for it; null: an author quoting itself needs none): accepted.
   */
  async acceptVerified(quoteId: number, approvalUri: string | null): Promise<QuoteRow | null> {
    const quote = this.find(quoteId);
    if (!quote || quote.state !== "pending") return null;
    return this.port.transaction(() => this.move(quote, "accepted", approvalUri));
  }

  /**
   * A remote post's quote whose stamp its own server says is not there (Mastodon's
   * VerifyQuoteService: quote.reject!): a pending one rejected, an accepted one revoked.
   */
  async rejectVerified(quoteId: number): Promise<QuoteRow | null> {
    const quote = this.find(quoteId);
    if (!quote || (quote.state !== "pending" && quote.state !== "accepted")) return null;
    return this.port.transaction(() => this.reject(quote));
  }

  /** A remote quote's quoted post, fetched after the quote was stored (it could not be had then). */
  setQuoted(quoteId: number, quoted: StatusRow): void {
    this.db.update(quotes).set({ quotedStatusId: quoted.id, quotedAccountId: quoted.accountId }).where(and(eq(quotes.id, quoteId), isNull(quotes.quotedStatusId))).run();
    const quote = this.find(quoteId);
    if (quote) this.cache.invalidateStatus(quote.statusId);
  }

  /** A pending remote quote now names another stamp (its post's Update): the one to check. */
  restamp(quoteId: number, approvalUri: string | null): void {
    this.db.update(quotes).set({ approvalUri, updatedAt: this.clock.now() }).where(and(eq(quotes.id, quoteId), eq(quotes.state, "pending"))).run();
  }

  /** A quote checked (again) now: not stale for another while (QuoteRefreshWorker's quote.touch). */
  touch(quoteId: number): void {
    this.db.update(quotes).set({ updatedAt: this.clock.now() }).where(eq(quotes.id, quoteId)).run();
  }

  /**
   * A remote post's edit (an explicit Update) dropped its quote, or quotes another post
   * (Mastodon's ProcessStatusUpdateService#update_quote!): the quote goes, counted back if it
   * counted. An accepted quote of a post of this server is revoked first, so that its stamp is
   * deleted where it was believed (Mastodon's RevokeQuoteService before the destroy).
   */
  async dropRemote(quoteId: number): Promise<QuoteRow | null> {
    const found = this.find(quoteId);
    if (!found) return null;
    return this.port.transaction(async () => {
      const local = found.quotedStatusId !== null && this.reader.findRow(found.quotedStatusId)?.uri === null;
      const quote = found.state === "accepted" && local ? await this.reject(found) : found;
      this.db.delete(quotes).where(eq(quotes.id, quote.id)).run();
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
    const quote = this.byActivityUri(activityUri);
    // Only a question still open is answered (Mastodon's accept_quote!: quote.pending?): an Accept
    // arriving after a Reject, or after the quoted post went, changes nothing.
    if (!quote || quote.quotedAccountId !== actorAccountId || quote.state !== "pending") return null;
    return this.port.transaction(() => this.move(quote, "accepted", approvalUri));
  }

  /** The quoted author's server refused a QuoteRequest (Reject): rejected, or revoked if it had been accepted. */
  async rejectRemote(activityUri: string, actorAccountId: number): Promise<QuoteRow | null> {
    const quote = this.byActivityUri(activityUri);
    if (!quote || quote.quotedAccountId !== actorAccountId) return null;
    return this.port.transaction(() => this.reject(quote));
  }

  /** The quoted author's server deleted its stamp (Delete of the QuoteAuthorization): the quote is revoked. */
  async revokeStamp(approvalUri: string, actorAccountId: number): Promise<QuoteRow | null> {
    const quote = this.byApprovalUri(approvalUri);
    if (!quote || quote.quotedAccountId !== actorAccountId) return null;
    return this.port.transaction(() => this.reject(quote));
  }

  /**
   * POST /api/v1/statuses/:id/quotes/:quoting_status_id/revoke: the quoted status's author takes
   * back a quote of it (Mastodon's RevokeQuoteService). The quoted status must be visible (404),
   * the quote one of it (404), and the caller its author (403). The quoting status, as it is now.
   */
  async revoke(accountId: number, quotedStatusId: number | null, quotingStatusId: number | null): Promise<StatusRow> {
    const quoted = this.reader.visibleRow(quotedStatusId, accountId);
    const quote = quotingStatusId === null ? undefined : this.db.select().from(quotes).where(and(eq(quotes.quotedStatusId, quoted.id), eq(quotes.statusId, quotingStatusId))).get();
    if (!quote) throw notFound();
    if (quote.quotedAccountId !== accountId) throw forbidden();
    await this.port.transaction(() => this.reject(quote));
    const status = this.reader.findRow(quote.statusId);
    if (!status) throw notFound();
    return status;
  }

  /** A quoting status is being deleted (RemovalService, in its transaction): its quote goes first, so that what it counted is counted back. */
  async removing(statusId: number): Promise<void> {
    const quote = this.forStatus(statusId);
    if (!quote) return;
    this.db.delete(quotes).where(eq(quotes.id, quote.id)).run();
    await this.events.emit({ type: "quote.removed", quote });
  }

  /** Local quoters' statuses quoting `statusId` (accepted ones): who hears of its edits (`quoted_update`). */
  localQuotesOf(statusId: number): QuoteRow[] {
    return this.db
      .select({ quote: quotes })
      .from(quotes)
      .innerJoin(accounts, eq(accounts.id, quotes.accountId))
      .where(and(eq(quotes.quotedStatusId, statusId), eq(quotes.state, "accepted"), isNull(accounts.domain)))
      .all()
      .map((r) => r.quote);
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
  private ensureQuotedAccess(quote: QuoteRow): void {
    if (quote.quotedAccountId === null || quote.quotedAccountId === quote.accountId) return;
    this.db.insert(mentions).values({ statusId: quote.statusId, accountId: quote.quotedAccountId }).onConflictDoNothing().run();
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
    this.db.update(quotes).set({ state, approvalUri, updatedAt: updated.updatedAt }).where(eq(quotes.id, quote.id)).run();
    await this.moved(updated, false);
    return updated;
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
