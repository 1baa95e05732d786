import type { AccountRow, StatusRow } from "../../db/schema.ts";
import { hostOf } from "../../net/domains.ts";
import { FetchFailed, type RemoteFetcher } from "./fetcher.ts";

/** A stamp is asked for within this; past it, the quote stays pending (no proof either way). */
const STAMP_TIMEOUT_MS = 10_000;

/**
 * What a quote of a remote post comes to once its stamp is read: accepted, still pending (the
 * stamp proves nothing), refused by the stamp's own server, or unreachable (its server gave no
 * answer for now: the quote stays pending and is checked again later, QuoteChecks).
 */
export type StampVerdict = "accepted" | "pending" | "rejected" | "unreachable";

/** The quote a stamp is checked against. */
export interface StampCheck {
  /** The quoting post's IRI, and its author. */
  quotingUri: string;
  quotingAccountId: number;
  /** The quoted post, stored here, and its author. */
  quoted: StatusRow;
  quotedAuthor: AccountRow;
  /** The stamp the quoting post names (quoteAuthorization). */
  approvalUri: string | null;
}

/**
 * Whether a remote post may quote the post it quotes, as Mastodon's VerifyQuoteService
 * decides: an author may always quote themselves; otherwise only a stamp proves it, and only
 * one served by the quoted author's own server at the IRI the quoting post names, issued by
 * the quoted author (`attributedTo`) for this quoting post (`interactingObject`) and this
 * quoted post (`interactionTarget`). A stamp named on any other host is never fetched; one
 * that its server says is not there (404, 410) refuses the quote; one that says something else
 * proves nothing (the quote stays pending, as Mastodon leaves it); one whose server gives no
 * answer for now is asked again later (QuoteChecks). A quote of a post of this
 * server is never settled by a stamp someone else names: its author's policy answers the
 * QuoteRequest (RemoteQuotes).
 */
export class QuoteStamps {
  constructor(
    /** Null while federation is off: nothing is fetched, nothing proven. */
    private fetcher: RemoteFetcher | null,
  ) {}

  async verdict(check: StampCheck): Promise<StampVerdict> {
    const { quoted, quotedAuthor, approvalUri } = check;
    if (check.quotingAccountId === quoted.accountId) return "accepted";
    if (quoted.uri === null || quotedAuthor.domain === null || quotedAuthor.uri === null) return "pending";
    if (approvalUri === null || this.fetcher === null) return "pending";
    if (hostOf(approvalUri) !== hostOf(quotedAuthor.uri)) return "pending";
    let stamp;
    try {
      stamp = await this.fetcher.stamp(approvalUri, AbortSignal.timeout(STAMP_TIMEOUT_MS));
    } catch (e) {
      // No answer within the deadline is no answer at all: asked again later.
      return !(e instanceof FetchFailed) || e.temporary ? "unreachable" : "pending";
    }
    if (stamp === null) return "rejected";
    const proves = stamp.isStamp && stamp.attributedTo === quotedAuthor.uri && stamp.interactingObject === check.quotingUri && stamp.interactionTarget === quoted.uri;
    return proves ? "accepted" : "pending";
  }
}

/** as:Public, as a policy may spell it (Mastodon's quote_subpolicy). */
const PUBLIC_NAMES = new Set(["https://www.w3.org/ns/activitystreams#Public", "as:Public", "Public"]);

/**
 * A remote post's interactionPolicy.canQuote as statuses.quote_approval keeps it (Mastodon's
 * StatusParser#quote_policy): as:Public is "public", the author's followers collection
 * "followers", the author itself nothing (an author may always quote itself), anything else
 * (accounts named one by one, collections unknown here) "unsupported_policy". Null when the
 * post states no policy: then only its author may quote it, as Mastodon reads it.
 */
export function remoteQuoteApproval(policy: { automatic: string[]; manual: string[] } | null, author: Pick<AccountRow, "uri" | "followersUrl">): string | null {
  if (policy === null) return null;
  const list = (iris: string[]) => {
    const out = new Set<string>();
    for (const iri of iris) {
      if (PUBLIC_NAMES.has(iri)) out.add("public");
      else if (author.followersUrl !== null && iri === author.followersUrl) out.add("followers");
      else if (iri !== author.uri) out.add("unsupported_policy");
    }
    return [...out];
  };
  return JSON.stringify({ automatic: list(policy.automatic), manual: list(policy.manual) });
}
