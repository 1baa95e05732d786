import type { AccountRow, StatusRow } from "../../db/schema.ts";
import type { QuoteService } from "../quotes/quotes.ts";
import type { IriRef, RemoteQuoteInput } from "./inputs.ts";
import type { QuoteStamps } from "./quote-stamps.ts";

/** What a remote post's quote comes to before the post is stored: the quoted post (when it could be had) and its state. */
export interface ResolvedQuote {
  quoted: StatusRow | null;
  quotedUri: string;
  approvalUri: string | null;
  legacy: boolean;
  state: "pending" | "accepted" | "rejected";
}

/** How the quoted post is found: stored here (by its IRI), or fetched and stored (null when it cannot be had). */
export interface QuotedLookup {
  stored(ref: IriRef): StatusRow | null;
  fetch(ref: IriRef): Promise<StatusRow | null>;
}

/**
 * The quotes remote posts make (Mastodon's ActivityPub::Activity::Create#process_quote and
 * ProcessStatusUpdateService#update_quote!): the quoted post is found or fetched (bounded by
 * the caller), its stamp checked (QuoteStamps), and the quote stored with the state that
 * gives, through the quote rules (QuoteService). A quote of a post of this server waits for
 * its QuoteRequest, which its author's policy answers.
 */
export class NoteQuotes {
  constructor(
    private quotes: Pick<QuoteService, "attachRemote" | "forStatus" | "acceptVerified" | "rejectVerified">,
    private stamps: QuoteStamps,
    private accountById: (id: number) => AccountRow | undefined,
  ) {}

  /** The quote of a post about to be stored (its IRI and author given); null when it quotes nothing usable. */
  async resolve(input: RemoteQuoteInput, quoting: { uri: string; accountId: number }, lookup: QuotedLookup): Promise<ResolvedQuote | null> {
    if (input.quoted === null) return null;
    const ref = input.quoted;
    const quoted = lookup.stored(ref) ?? (ref.ours ? null : await lookup.fetch(ref).catch(() => null));
    // What Mastodon's Quote refuses to hold: a boost, or another's post not shared publicly.
    if (quoted && (quoted.reblogOfId !== null || (quoted.accountId !== quoting.accountId && quoted.visibility !== "public" && quoted.visibility !== "unlisted"))) return null;
    const quotedAuthor = quoted ? this.accountById(quoted.accountId) : undefined;
    // A stamp on this server's own posts is ours to issue: one named by the quoting post proves nothing.
    const approvalUri = ref.ours ? null : input.approvalUri;
    const state = quoted && quotedAuthor ? await this.stamps.verdict({ quotingUri: quoting.uri, quotingAccountId: quoting.accountId, quoted, quotedAuthor, approvalUri }) : "pending";
    // The stamp is kept only once it proved the quote (its server served it for this very
    // post): any post may name any stamp, and one named first by a decoy would otherwise be
    // taken by it, the stamp's IRI being unique here (the genuine post refused, its stamp's
    // Delete revoking the decoy alone).
    const proven = state === "accepted" && quoted !== null && quoted.accountId !== quoting.accountId;
    return { quoted, quotedUri: ref.href, approvalUri: proven ? approvalUri : null, legacy: input.legacy, state };
  }

  /** Stores the resolved quote of a post just stored. */
  attach(status: StatusRow, resolved: ResolvedQuote): void {
    this.quotes.attachRemote({ status, ...resolved });
  }

  /**
   * An edited remote post (Update): a quote it did not have is attached; a pending one whose
   * stamp is now named (the quoted author's server accepted after the post went out, and its
   * author sent the post again with the stamp) is checked again. A quote that changes its
   * quoted post or drops it is kept as it was (not followed yet).
   */
  async edited(status: StatusRow, input: RemoteQuoteInput | null, lookup: QuotedLookup): Promise<void> {
    if (input === null || status.uri === null) return;
    const existing = this.quotes.forStatus(status.id);
    if (!existing) {
      const resolved = await this.resolve(input, { uri: status.uri, accountId: status.accountId }, lookup);
      if (resolved) this.attach(status, resolved);
      return;
    }
    if (existing.state !== "pending" || existing.quotedStatusId === null || input.quoted?.href !== existing.quotedUri || input.approvalUri === existing.approvalUri) return;
    const resolved = await this.resolve(input, { uri: status.uri, accountId: status.accountId }, lookup);
    if (resolved?.state === "accepted" && resolved.approvalUri !== null) this.quotes.acceptVerified(existing.id, resolved.approvalUri);
    else if (resolved?.state === "rejected") this.quotes.rejectVerified(existing.id);
  }
}
