import type { Context } from "@fedify/fedify";
import { InteractionPolicy, InteractionRule, Note, PUBLIC_COLLECTION, QuoteAuthorization, QuoteRequest, Tombstone, type Object as ApObject } from "@fedify/fedify/vocab";
import type { AccountRow, QuoteRow, StatusRow } from "../db/schema.ts";

// Quote posts as FEP-044f words them and Mastodon 4.5 sends them (ActivityPub::NoteSerializer,
// QuoteRequestSerializer, QuoteAuthorizationSerializer): the vocabulary is Fedify's.

/** The path of a local account's stamps, where Mastodon serves its own (account_quote_authorization_url). */
export const STAMP_PATH = "/users/{identifier}/quote_authorizations/{id}";

/** The rows a quote names, looked up by whoever builds its activities. */
export interface QuoteParts {
  account(id: number): AccountRow | undefined;
  status(id: number): StatusRow | undefined;
}

/** The IRI of a status, local or remote. */
function statusIri(ctx: Context<void>, parts: QuoteParts, status: StatusRow): URL | null {
  if (status.uri !== null) return new URL(status.uri);
  const author = parts.account(status.accountId);
  return author ? ctx.getObjectUri(Note, { identifier: author.username, id: String(status.id) }) : null;
}

/** The actor IRI of an account, local or remote. */
function actorIri(ctx: Context<void>, account: AccountRow): URL {
  return account.domain === null ? ctx.getActorUri(account.username) : new URL(account.uri!);
}

/**
 * The stamp's IRI: ours (served at STAMP_PATH) for a quote of a local post once accepted, the
 * one the quoted author's server issued for a quote of a remote post; null while there is none.
 */
export function stampIri(ctx: Context<void>, parts: QuoteParts, quote: QuoteRow): URL | null {
  if (quote.state !== "accepted") return null;
  const quoted = quote.quotedAccountId === null ? undefined : parts.account(quote.quotedAccountId);
  if (quoted?.domain === null) return ctx.getObjectUri(QuoteAuthorization, { identifier: quoted.username, id: String(quote.id) });
  return quote.approvalUri === null ? null : new URL(quote.approvalUri);
}

/**
 * What a Note that quotes says of it, as Mastodon's NoteSerializer: `quote` (a Tombstone once
 * the quoted post is gone), `_misskey_quote` and `quoteUri` for servers that read only those
 * (Fedify's quoteUrl writes them, and `quoteUrl` too), `quoteAuthorization` once approved.
 */
export function quoteValuesOf(ctx: Context<void>, parts: QuoteParts, quote: QuoteRow | undefined) {
  if (!quote) return {};
  const quoted = quote.quotedStatusId === null ? undefined : parts.status(quote.quotedStatusId);
  const iri = quoted ? statusIri(ctx, parts, quoted) : null;
  return {
    quote: iri ?? new Tombstone({}),
    quoteUrl: iri,
    quoteAuthorization: stampIri(ctx, parts, quote),
  };
}

/** Who may quote a status, as statuses.quote_approval keeps it. */
interface QuoteApproval {
  automatic?: string[];
  manual?: string[];
}

/**
 * `interactionPolicy.canQuote` of a local status, as Mastodon sends it: only automatic
 * approval (its local users have no queue to approve by hand); public as as:Public, followers
 * and following as the author's collections, and the author alone when nobody else may.
 */
export function quotePolicyOf(ctx: Context<void>, author: AccountRow, status: StatusRow): InteractionPolicy {
  const approval = (status.quoteApproval === null ? {} : JSON.parse(status.quoteApproval)) as QuoteApproval;
  const automatic = new Set(approval.automatic ?? []);
  const approved: URL[] = [];
  if (automatic.has("public")) approved.push(PUBLIC_COLLECTION);
  if (automatic.has("followers")) approved.push(ctx.getFollowersUri(author.username));
  if (automatic.has("following")) approved.push(ctx.getFollowingUri(author.username));
  if (approved.length === 0) approved.push(ctx.getActorUri(author.username));
  return new InteractionPolicy({ canQuote: new InteractionRule({ automaticApprovals: approved }) });
}

/**
 * The stamp of an accepted quote of a local post (QuoteAuthorizationSerializer): issued by the
 * quoted author, naming the quoting post (interactingObject) and the quoted one (interactionTarget).
 */
export function stampOf(ctx: Context<void>, parts: QuoteParts, quote: QuoteRow): QuoteAuthorization | null {
  const quotedAuthor = quote.quotedAccountId === null ? undefined : parts.account(quote.quotedAccountId);
  const quoted = quote.quotedStatusId === null ? undefined : parts.status(quote.quotedStatusId);
  const quoting = parts.status(quote.statusId);
  if (!quotedAuthor || quotedAuthor.domain !== null || !quoted || !quoting) return null;
  const target = statusIri(ctx, parts, quoted);
  const object = statusIri(ctx, parts, quoting);
  if (!target || !object) return null;
  return new QuoteAuthorization({
    id: ctx.getObjectUri(QuoteAuthorization, { identifier: quotedAuthor.username, id: String(quote.id) }),
    attribution: ctx.getActorUri(quotedAuthor.username),
    interactingObject: object,
    interactionTarget: target,
  });
}

/**
 * The request a local author sends to a remote post's author (QuoteRequestSerializer): its
 * IRI is the quote's activity_uri, `object` the quoted post, `instrument` the quoting Note
 * itself (embedded, as Mastodon's QuoteRequestWorker does, so that the other server need not
 * fetch it). `instrument` is given as an IRI where the request is quoted back (Accept, Reject).
 */
export function quoteRequestOf(ctx: Context<void>, parts: QuoteParts, quote: QuoteRow, instrument: ApObject | URL | null): QuoteRequest | null {
  const account = parts.account(quote.accountId);
  const quoted = quote.quotedStatusId === null ? undefined : parts.status(quote.quotedStatusId);
  const quoting = parts.status(quote.statusId);
  if (!account || !quoted || !quoting || quote.activityUri === null) return null;
  const object = statusIri(ctx, parts, quoted);
  if (!object) return null;
  return new QuoteRequest({ id: new URL(quote.activityUri), actor: actorIri(ctx, account), object, instrument: instrument ?? statusIri(ctx, parts, quoting) });
}
