import type { AccountRow, StatusRow } from "../../db/schema.ts";
import type { QuoteService } from "../quotes/quotes.ts";
import type { IriRef, RemoteQuoteInput } from "./inputs.ts";
import type { QuoteChecks, RecheckOutcome } from "./quote-checks.ts";
import type { QuoteStamps } from "./quote-stamps.ts";

/** What a remote post's quote comes to before the post is stored: the quoted post (when it could be had) and its state. */
export interface ResolvedQuote {
  quoted: StatusRow | null;
  quotedUri: string;
  approvalUri: string | null;
  legacy: boolean;
  state: "pending" | "accepted" | "rejected";
  /** To be checked again later: the quoted post could not be had, or the stamp's server did not answer. */
  recheck: boolean;
}

/** How the quoted post is found: stored here (by its IRI), or fetched and stored (null when it cannot be had). */
export interface QuotedLookup {
  stored(ref: IriRef): Promise<StatusRow | null>;
  fetch(ref: IriRef): Promise<StatusRow | null>;
  /** Whether `fetch` asks other servers at all (not while federation is off). */
  fetching: boolean;
}

/**
 * The quotes remote posts make (Mastodon's ActivityPub::Activity::Create#process_quote and
 * ProcessStatusUpdateService#update_quote!): the quoted post is found or fetched (bounded by
 * the caller), its stamp checked (QuoteStamps), and the quote stored with the state that
 * gives, through the quote rules (QuoteService). A quote of a post of this server waits for
 * its QuoteRequest, which its author's policy answers. What could not be settled for want of
 * an answer (the quoted post, the stamp) is checked again later (QuoteChecks), as Mastodon's
 * RefetchAndVerifyQuoteWorker does.
 */
export class NoteQuotes {
  constructor(
    private quotes: Pick<QuoteService, "attachRemote" | "forStatus" | "find" | "acceptVerified" | "rejectVerified" | "setQuoted" | "restamp" | "touch" | "dropRemote">,
    private stamps: QuoteStamps,
    private accountById: (id: number) => Promise<AccountRow | undefined>,
    private statusById: (id: number) => Promise<StatusRow | undefined>,
    private checks: QuoteChecks,
  ) {}

  /** The quote of a post about to be stored (its IRI and author given); null when it quotes nothing usable. */
  async resolve(input: RemoteQuoteInput, quoting: { uri: string; accountId: number }, lookup: QuotedLookup): Promise<ResolvedQuote | null> {
    if (input.quoted === null) return null;
    const ref = input.quoted;
    const quoted = (await lookup.stored(ref)) ?? (ref.ours ? null : await lookup.fetch(ref).catch(() => null));
    if (quoted && !holdable(quoted, quoting.accountId)) return null;
    const quotedAuthor = quoted ? await this.accountById(quoted.accountId) : undefined;
    // A stamp on this server's own posts is ours to issue: one named by the quoting post proves nothing.
    const approvalUri = ref.ours ? null : input.approvalUri;
    const verdict = quoted && quotedAuthor ? await this.stamps.verdict({ quotingUri: quoting.uri, quotingAccountId: quoting.accountId, quoted, quotedAuthor, approvalUri }) : "pending";
    // Mastodon's QuoteRefetchScheduler: a quoted post not had (its server down, or the chain too
    // deep to fetch now) or a stamp its server did not answer for is asked for again later.
    const recheck = verdict === "unreachable" || (quoted === null && !ref.ours && lookup.fetching);
    // The stamp is kept once it proved the quote (its server served it for this very post), or
    // to be asked for again with the quote (its server, or the quoted post's, did not answer);
    // any post may name any stamp, so a
    // stamp named by several posts revokes, when deleted, only the quote it proved (byApprovalUri).
    const proven = verdict === "accepted" && quoted !== null && quoted.accountId !== quoting.accountId;
    const kept = proven || recheck ? approvalUri : null;
    return { quoted, quotedUri: ref.href, approvalUri: kept, legacy: input.legacy, state: verdict === "unreachable" ? "pending" : verdict, recheck };
  }

  /** Stores the resolved quote of a post just stored (`withStatus` false: the post was out before, an edit brought the quote). */
  async attach(status: StatusRow, resolved: ResolvedQuote, withStatus = true): Promise<void> {
    const { recheck, ...quote } = resolved;
    const row = await this.quotes.attachRemote({ status, ...quote, withStatus });
    if (row && recheck) await this.checks.schedule(row.id);
  }

  /**
   * An Update of a remote post (Mastodon's ProcessStatusUpdateService): a quote it did not
   * have is attached; a pending one whose stamp is now another (the quoted author's server
   * accepted after the post went out, and its author sent the post again with the stamp) is
   * checked again. An edit (`explicit`: an `updated` newer than the last one, Mastodon's
   * handle_explicit_update!) that drops the quote removes it, and one that quotes another post
   * replaces it, checked anew (update_quote!); an Update that is no edit changes neither
   * (update_quote_approval!). A Tombstone in place of the quoted post leaves the quote as it is.
   */
  async edited(status: StatusRow, input: RemoteQuoteInput | null, lookup: QuotedLookup, explicit: boolean): Promise<void> {
    if (status.uri === null || input?.deleted) return;
    const quoting = { uri: status.uri, accountId: status.accountId };
    const existing = await this.quotes.forStatus(status.id);
    if (!existing) {
      const resolved = input && (await this.resolve(input, quoting, lookup));
      if (resolved) await this.attach(status, resolved, false);
      return;
    }
    if (input === null || input.quoted === null || input.quoted.href !== existing.quotedUri) {
      if (!explicit) return;
      await this.checks.settled(existing.id);
      await this.quotes.dropRemote(existing.id);
      const resolved = input && (await this.resolve(input, quoting, lookup));
      if (resolved) await this.attach(status, resolved, false);
      return;
    }
    // The same post quoted: only a stamp it did not name before is news.
    if (input.approvalUri === existing.approvalUri || (existing.state !== "pending" && existing.state !== "accepted")) return;
    const resolved = await this.resolve(input, quoting, lookup);
    if (!resolved) return;
    if (resolved.state === "accepted") {
      if (existing.state === "pending") await this.quotes.acceptVerified(existing.id, resolved.approvalUri);
      // An accepted quote whose new stamp proves it too stays accepted, on the stamp it had.
    } else if (resolved.state === "rejected") {
      await this.quotes.rejectVerified(existing.id);
    } else if (existing.state === "pending") {
      await this.quotes.restamp(existing.id, resolved.approvalUri);
      if (resolved.recheck) await this.checks.schedule(existing.id);
    }
  }

  /**
   * A quote checked again (RefetchAndVerifyQuoteWorker, QuoteRefreshWorker): its quoted post
   * fetched if it is still missing, then its stamp asked for again. "again" when either gave
   * no answer for now. An accepted quote whose stamp is gone is revoked.
   */
  async recheck(quoteId: number, lookup: QuotedLookup): Promise<RecheckOutcome> {
    const quote = await this.quotes.find(quoteId);
    const status = quote && (await this.statusById(quote.statusId));
    if (!quote || !status || status.uri === null || quote.quotedUri === null || (quote.state !== "pending" && quote.state !== "accepted")) return "settled";
    await this.quotes.touch(quote.id);
    let quoted = quote.quotedStatusId === null ? null : ((await this.statusById(quote.quotedStatusId)) ?? null);
    if (!quoted) {
      // Only quotes of posts of other servers are checked again: the IRI is theirs.
      const ref: IriRef = { href: quote.quotedUri, ours: false, actor: null, status: null };
      quoted = (await lookup.stored(ref)) ?? (await lookup.fetch(ref).catch(() => null));
      if (!quoted) return "again";
      if (!holdable(quoted, status.accountId)) return "settled";
      await this.quotes.setQuoted(quote.id, quoted);
    }
    const quotedAuthor = await this.accountById(quoted.accountId);
    if (!quotedAuthor || quoted.uri === null) return "settled";
    const verdict = await this.stamps.verdict({ quotingUri: status.uri, quotingAccountId: status.accountId, quoted, quotedAuthor, approvalUri: quote.approvalUri });
    if (verdict === "unreachable") return "again";
    if (verdict === "accepted") await this.quotes.acceptVerified(quote.id, quote.approvalUri);
    else if (verdict === "rejected") await this.quotes.rejectVerified(quote.id);
    return "settled";
  }
}

/** What Mastodon's Quote refuses to hold: a boost, or another's post not shared publicly. */
function holdable(quoted: StatusRow, quotingAccountId: number): boolean {
  if (quoted.reblogOfId !== null) return false;
  return quoted.accountId === quotingAccountId || quoted.visibility === "public" || quoted.visibility === "unlisted";
}
