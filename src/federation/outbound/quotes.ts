import { Accept, Delete, Note, PUBLIC_COLLECTION, Reject, Tombstone } from "@fedify/fedify/vocab";
import type { AccountRow, QuoteRow } from "../../db/schema.ts";
import type { EventBus } from "../../infra/events.ts";
import { quoteRequestOf, stampOf } from "../quote-vocab.ts";
import { loadParts, noteOf } from "../vocab.ts";
import type { Outbound } from "./index.ts";
import { recipientOf } from "./sender.ts";
import { deliverNote, sendNote, statusKey, updateOf } from "./statuses.ts";

/**
 * Quotes told to other servers once committed (FEP-044f, as Mastodon 4.5 sends it):
 *
 * - a local post quoting a remote one asks its author's server (QuoteRequest, the quoting Note
 *   embedded, as Mastodon's QuoteRequestWorker);
 * - a remote post's request for a local one is answered as the local author's policy decided:
 *   Accept with our stamp as `result` (AcceptQuoteRequestSerializer), or Reject;
 * - once a remote author's server accepts, the quoting post goes out again with its stamp
 *   (Update, as Mastodon's StatusUpdateDistributionWorker after Accept#accept_quote!);
 * - a stamp of ours taken back is deleted (Delete of the QuoteAuthorization, to the quoting
 *   author and to the followers of both, as RevokeQuoteService);
 * - a local post whose quote policy changed goes out again (Update).
 */
export function quotes(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { services, lookups, context: ctx, sender, urls } = out;
  const account = async (id: number | null) => (id === null ? undefined : lookups.account(id));
  const isRemote = (a: AccountRow | undefined): a is AccountRow => a !== undefined && a.domain !== null && a.inboxUrl !== null;
  /** The rows a quote names, read first for the synchronous builders of quote-vocab.ts. */
  const partsOf = (quote: QuoteRow) => loadParts(lookups, [quote.statusId, quote.quotedStatusId], [quote.accountId, quote.quotedAccountId]);
  // A quote's activities are prepared in the order they were set in motion (their rows read inside the send).
  const quoteKey = (quote: QuoteRow) => `quote:${quote.id}`;

  events.afterCommit("quote.requested", ({ quote }) => {
    sender.send(
      "QuoteRequest",
      async () => {
        const parts = await partsOf(quote);
        const author = parts.account(quote.accountId);
        const quotedAuthor = quote.quotedAccountId === null ? undefined : parts.account(quote.quotedAccountId);
        const status = parts.status(quote.statusId);
        if (!author || author.domain !== null || !isRemote(quotedAuthor) || !status) return;
        const c = ctx();
        const request = quoteRequestOf(c, parts, quote, await noteOf(c, urls, author, status, lookups));
        if (request) await c.sendActivity({ identifier: author.username }, recipientOf(quotedAuthor), request, { orderingKey: quote.activityUri! });
      },
      quoteKey(quote),
    );
  });

  /** Our answer to a remote account's request to quote a local post, quoting the request back. */
  const answer = async (kind: "Accept" | "Reject", quote: QuoteRow) => {
    if (quote.activityUri === null) return;
    const parts = await partsOf(quote);
    const quotedAuthor = quote.quotedAccountId === null ? undefined : parts.account(quote.quotedAccountId);
    const quoter = parts.account(quote.accountId);
    if (!quotedAuthor || quotedAuthor.domain !== null || !isRemote(quoter)) return;
    const c = ctx();
    const request = quoteRequestOf(c, parts, quote, null);
    if (!request) return;
    const actor = c.getActorUri(quotedAuthor.username);
    const id = new URL(`${actor.href}#${kind === "Accept" ? "accepts" : "rejects"}/quote_requests/${quote.id}`);
    const activity = kind === "Accept" ? new Accept({ id, actor, object: request, result: stampOf(c, parts, quote)?.id ?? null }) : new Reject({ id, actor, object: request });
    await c.sendActivity({ identifier: quotedAuthor.username }, recipientOf(quoter), activity, { orderingKey: quote.activityUri });
  };

  events.afterCommit("quote.accepted", ({ quote }) => {
    sender.send(
      "Accept of a quote",
      async () => {
        const author = await account(quote.accountId);
        if (author?.domain !== null) return answer("Accept", quote);
        // A local post whose quote a remote author's server accepted goes out again, with its stamp.
        const status = await lookups.status(quote.statusId);
        if (!isRemote(await account(quote.quotedAccountId)) || !status) return;
        await deliverNote(out, status, (sent, note) => updateOf(sent, note, `quote-${quote.id}-${quote.updatedAt}`));
      },
      // The quoting post's Update keeps its place among the post's other activities.
      statusKey(quote.statusId),
    );
  });

  events.afterCommit("quote.rejected", ({ quote }) => sender.send("Reject", () => answer("Reject", quote), quoteKey(quote)));

  // A local quoting post deleted: the quoted author's server, which counted it, hears of it even
  // when it follows nobody here (the status's own Delete goes to the followers; its quote row is
  // gone by then). The same Delete, by its id, so that a server told twice drops the second.
  events.afterCommit("quote.removed", ({ quote }) => {
    sender.send(
      "Delete of a quote",
      async () => {
        const author = await account(quote.accountId);
        const quotedAuthor = await account(quote.quotedAccountId);
        if (!author || author.domain !== null || !isRemote(quotedAuthor)) return;
        const c = ctx();
        const iri = c.getObjectUri(Note, { identifier: author.username, id: String(quote.statusId) });
        const del = new Delete({ id: new URL(`${iri.href}#delete`), actor: c.getActorUri(author.username), to: PUBLIC_COLLECTION, object: new Tombstone({ id: iri }) });
        await c.sendActivity({ identifier: author.username }, recipientOf(quotedAuthor), del, { orderingKey: iri.href });
      },
      statusKey(quote.statusId),
    );
  });

  // Who may quote a local post changed (PUT /api/v1/statuses/:id/interaction_policy): its Note goes out again.
  events.afterCommit("quote_policy.changed", ({ status }) => {
    sendNote(out, "Update of a quote policy", status, (sent, note) => updateOf(sent, note, `policy-${crypto.randomUUID()}`));
  });

  events.afterCommit("quote.revoked", ({ quote }) => {
    sender.send(
      "Delete of a stamp",
      async () => {
        const parts = await partsOf(quote);
        const quotedAuthor = quote.quotedAccountId === null ? undefined : parts.account(quote.quotedAccountId);
        if (!quotedAuthor || quotedAuthor.domain !== null) return;
        const c = ctx();
        const stamp = stampOf(c, parts, quote);
        if (!stamp) return;
        const quoter = parts.account(quote.accountId);
        const del = new Delete({ id: new URL(`${stamp.id!.href}#delete`), actor: c.getActorUri(quotedAuthor.username), to: PUBLIC_COLLECTION, object: stamp });
        const reach = [
          ...(await services.federationActors.remoteFollowers(quotedAuthor.id)),
          ...(quoter?.domain === null ? await services.federationActors.remoteFollowers(quoter.id) : []),
          ...(isRemote(quoter) ? [quoter] : []),
        ];
        const recipients = [...new Map(reach.map((a) => [a.id, a])).values()].map(recipientOf);
        if (recipients.length > 0) await c.sendActivity({ identifier: quotedAuthor.username }, recipients, del, { preferSharedInbox: true, orderingKey: stamp.id!.href });
      },
      quoteKey(quote),
    );
  });
}
