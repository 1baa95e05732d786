import type { Context } from "@fedify/fedify";
import type { Note, Question } from "@fedify/fedify/vocab";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { RemoteQuoteInput, RemoteQuotePolicy } from "../../services/remote/inputs.ts";
import { refOf } from "./refs.ts";

/** Approval lists longer than this are not read further (a policy names a few collections). */
const MAX_APPROVALS = 20;

/** The keys a quoted post is named by, in Mastodon's order (StatusParser#quote_uri). */
const QUOTE_KEYS = ["quote", "_misskey_quote", "quoteUrl", "quoteUri"] as const;

/** A value or the id of an object (Mastodon's value_or_id), of the first of an array. */
export function idOf(value: unknown): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first === "string") return first;
  if (typeof first === "object" && first !== null) {
    const id = (first as Record<string, unknown>).id ?? (first as Record<string, unknown>)["@id"];
    return typeof id === "string" ? id : null;
  }
  return null;
}

/** Whether a document's `type` is, or includes, `type` (Mastodon's equals_or_includes?). */
export function hasType(document: Record<string, unknown>, type: string): boolean {
  const value = document.type ?? document["@type"];
  return Array.isArray(value) ? value.includes(type) : value === type;
}

/**
 * The post a Note quotes, read as Mastodon reads it (StatusParser#quote_uri, legacy_quote?,
 * deleted_quote?, quote_approval_uri) from the document as it came: Mastodon's own @context
 * maps `quote` to FEP-044f's IRI without `"@type": "@id"`, so under JSON-LD its value is a
 * string and Fedify's `quoteId` is empty; plain AS2 contexts do not define `quoteUrl` at all.
 * Fedify's reading is the fallback for documents in other shapes. `quoteUrl`,
 * `_misskey_quote` and `quoteUri` without `quote` are legacy quotes (Misskey, Fedibird and
 * older servers, which ask nobody); a `quote` that is a Tombstone is a quote of a deleted post.
 * Only http(s) IRIs are kept. Null when it quotes nothing.
 */
export function quoteOf(ctx: Context<void>, note: Note | Question, raw: unknown): RemoteQuoteInput | null {
  const doc = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const quoted = doc.quote;
  const deleted = typeof quoted === "object" && quoted !== null && !Array.isArray(quoted) && hasType(quoted as Record<string, unknown>, "Tombstone");
  let uri: string | null = null;
  for (const key of QUOTE_KEYS) {
    uri = httpUrlOrNull(idOf(doc[key]));
    if (uri !== null) break;
  }
  const parsed = "quoteId" in note ? httpUrlOrNull(note.quoteId ?? note.quoteUrl) : null;
  uri ??= parsed;
  const hasQuoteKey = quoted !== undefined && quoted !== null;
  if (uri === null && !deleted) return null;
  const approval = httpUrlOrNull(idOf(doc.quoteAuthorization)) ?? ("quoteAuthorizationId" in note ? httpUrlOrNull(note.quoteAuthorizationId) : null);
  return {
    quoted: uri === null ? null : refOf(ctx, new URL(uri)),
    approvalUri: approval,
    // Fedify saw FEP-044f's `quote` (a document in expanded form, or another context).
    legacy: !hasQuoteKey && !("quoteId" in note && note.quoteId !== null),
    deleted,
  };
}

/**
 * Who the author lets quote it without asking, and who may ask (interactionPolicy.canQuote,
 * GoToSocial's vocabulary, which Mastodon 4.5 uses): the IRIs of each list as Fedify read
 * them (`as:Public` expanded), for the rules to map to public / followers / unsupported.
 * Null when the Note states no policy.
 */
export function quotePolicyOf(note: Note | Question): RemoteQuotePolicy | null {
  const rule = note.interactionPolicy?.canQuote;
  if (!rule) return null;
  const hrefs = (urls: readonly URL[]) => urls.slice(0, MAX_APPROVALS).map((u) => u.href);
  return { automatic: hrefs(rule.automaticApprovals), manual: hrefs(rule.manualApprovals) };
}
