import type { AccountRow, QuoteRow } from "../../db/schema.ts";
import { hostOf } from "../../net/domains.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { QuoteService } from "../quotes/quotes.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { RemoteAccounts } from "./accounts.ts";
import type { ActorSource, IriRef, RemoteNoteInput } from "./inputs.ts";
import type { RemoteNotes } from "./notes.ts";

/** A QuoteRequest (FEP-044f) for a post of this server, as the inbox reads it. */
export interface QuoteRequestInput {
  /** The request's own IRI: the answer quotes it. */
  id: string;
  actor: ActorSource;
  /** The post it asks to quote. */
  object: IriRef;
  /** The quoting post's IRI. */
  instrument: string | null;
  /** The quoting post: as the request embeds it, or fetched by its IRI (null when it cannot be had). */
  instrumentNote(): Promise<RemoteNoteInput | null>;
}

/** The QuoteRequest an Accept or Reject answers: its IRI, and (embedded) the quoting and the quoted post's IRIs. */
export interface QuoteAnswerInput {
  requestId: string | null;
  instrument: IriRef | null;
}

/**
 * What other servers say about quotes (FEP-044f, as Mastodon 4.5 speaks it): a QuoteRequest
 * for a post here is answered by its author's policy (Mastodon's local users approve only
 * automatically: what the policy does not let through at once is refused); an Accept or a
 * Reject answers a request sent from here; a Delete of a stamp revokes what it approved. Only
 * the quoted post's author answers, and only a stamp on that author's server is taken.
 */
export class RemoteQuotes {
  constructor(
    private quotes: Pick<QuoteService, "policy" | "forStatus" | "byActivityUri" | "answerRequest" | "acceptRemote" | "rejectRemote" | "revokeStamp">,
    private notes: Pick<RemoteNotes, "statusAt" | "store">,
    private remote: Pick<RemoteAccounts, "byUri" | "upsert" | "statusByUri">,
    private reader: Pick<StatusReader, "findRow">,
    private accountById: (id: number) => Promise<AccountRow | undefined>,
  ) {}

  /**
   * A QuoteRequest for a local post (Mastodon's ActivityPub::Activity::QuoteRequest). "reject":
   * the policy refuses, and the requester is told at once (nothing is stored); null otherwise:
   * the quoting post is stored (as embedded, or fetched) with its quote, which the policy then
   * answers (quote.accepted or quote.rejected, whose Accept or Reject federation sends), or the
   * request named nothing this server answers for.
   */
  async request(input: QuoteRequestInput): Promise<"reject" | null> {
    if (hostOf(input.id) === null || hostOf(input.id) !== hostOf(input.actor.uri)) return null;
    const target = await this.notes.statusAt(input.object);
    const quoted = target?.local ? await this.reader.findRow(target.id) : undefined;
    if (!quoted || quoted.reblogOfId !== null || (quoted.visibility !== "public" && quoted.visibility !== "unlisted")) return null;
    const account = await this.account(input.actor);
    if (!account) return null;
    if ((await this.quotes.policy.mayQuote(quoted, account.id)) !== "automatic") return "reject";
    const status = await this.quoting(input, account);
    const quote = status ? await this.quotes.forStatus(status.id) : undefined;
    // The quoting post must be the requester's, and quote this very post.
    if (!status || status.accountId !== account.id || !quote || quote.quotedStatusId !== quoted.id) return null;
    await this.quotes.answerRequest(quote.id, input.id);
    return null;
  }

  /**
   * An Accept of a request sent from here (Mastodon's Accept#accept_quote!): the quote of the
   * answering account's post is accepted with the stamp it names (`result`), which must be on
   * that account's server. False when it answers no quote request (it may answer a Follow).
   */
  async accepted(actorUri: string, answer: QuoteAnswerInput, result: string | null): Promise<boolean> {
    const quote = await this.answered(answer);
    if (!quote) return false;
    const account = await this.remote.byUri(actorUri);
    const stamp = httpUrlOrNull(result);
    if (account && stamp !== null && hostOf(stamp) === hostOf(actorUri)) await this.quotes.acceptRemote(quote.activityUri!, stamp, account.id);
    return true;
  }

  /** A Reject of a request sent from here: the quote is refused (revoked, if it had been accepted). False when it answers no quote request. */
  async rejected(actorUri: string, answer: QuoteAnswerInput): Promise<boolean> {
    const quote = await this.answered(answer);
    if (!quote) return false;
    const account = await this.remote.byUri(actorUri);
    if (account) await this.quotes.rejectRemote(quote.activityUri!, account.id);
    return true;
  }

  /**
   * A Delete of a stamp by the author who issued it (Mastodon's Delete#revoke_quote): the quote
   * it approved is revoked. When the quoting post is one of this server's, the username of its
   * author, whose followers are to be told (the Delete forwarded, as Mastodon's Forwarder does:
   * they believed the quote on that stamp and are not among those its author's server reaches).
   */
  async revoked(actorUri: string, objectUri: string): Promise<string | null> {
    const account = await this.remote.byUri(actorUri);
    const quote = account ? await this.quotes.revokeStamp(objectUri, account.id) : null;
    const quoter = quote ? await this.accountById(quote.accountId) : undefined;
    return quoter && quoter.domain === null ? quoter.username : null;
  }

  /** The local quote a request of ours stands for: by the request's IRI, or (a server that does not echo it) by the quoting post. */
  private async answered(answer: QuoteAnswerInput): Promise<QuoteRow | undefined> {
    const byId = answer.requestId === null ? undefined : await this.quotes.byActivityUri(answer.requestId);
    if (byId) return byId;
    const quoting = answer.instrument ? await this.notes.statusAt(answer.instrument) : null;
    const quote = quoting?.local ? await this.quotes.forStatus(quoting.id) : undefined;
    return quote?.activityUri ? quote : undefined;
  }

  private async account(actor: ActorSource): Promise<AccountRow | null> {
    const stored = await this.remote.byUri(actor.uri);
    if (stored) return stored;
    const loaded = await actor.load();
    return loaded ? this.remote.upsert(loaded) : null;
  }

  /** The quoting post: stored already, or as the request gives it (by the requester, on its server). */
  private async quoting(input: QuoteRequestInput, account: AccountRow) {
    if (input.instrument === null) return null;
    const known = await this.remote.statusByUri(input.instrument);
    if (known) return (await this.reader.findRow(known.id)) ?? null;
    const note = await input.instrumentNote();
    if (!note || note.uri !== input.instrument || note.authorUri !== account.uri) return null;
    return this.notes.store(note, { fetched: true });
  }
}
