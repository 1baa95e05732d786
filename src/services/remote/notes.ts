import type { AccountRow, StatusRow } from "../../db/schema.ts";
import type { GroupCommit } from "../../infra/group-commit.ts";
import type { MentionRef } from "../../models/mentions.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import { htmlToText } from "../../text/html-to-text.ts";
import { sanitizeRemoteHtml } from "../../text/sanitize.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { EditingService } from "../statuses/editing.ts";
import type { PollService } from "../statuses/polls.ts";
import type { PostingService } from "../statuses/posting.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { Visibility } from "../statuses/visibility.ts";
import type { FederationActors } from "./local-actors.ts";
import type { IriRef, RemoteNoteInput } from "./inputs.ts";
import type { RemoteAccounts } from "./accounts.ts";
import type { RemoteFetcher } from "./fetcher.ts";
import type { NoteQuotes, QuotedLookup } from "./note-quotes.ts";
import type { RecheckOutcome } from "./quote-checks.ts";
import { remoteQuoteApproval } from "./quote-stamps.ts";

/**
 * How deep a chain of quoted posts is fetched while one post is stored (Mastodon's
 * VerifyQuoteService::MAX_SYNCHRONOUS_DEPTH): a quote of a quote of a quote is shown by its IRI.
 */
const MAX_QUOTE_DEPTH = 2;
import type { RelayRow } from "../../db/schema.ts";
import type { DeliveredBy, Relays } from "./relays.ts";
import type { Tombstones } from "./tombstones.ts";

/** ActivityStreams' public collection, as addressing names it. */
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

/** What a Note says, as stored: its HTML sanitized, its text (for filters), its hashtags. */
export interface NoteContent {
  html: string;
  text: string;
  spoilerText: string;
  sensitive: boolean;
  tags: string[];
}

/**
 * Remote Notes into the statuses table: those delivered to an inbox, and those fetched by
 * their URL (search with resolve=true). The Note's IRI must be on its author's server: a
 * server speaks only for its own objects.
 */
export class RemoteNotes {
  constructor(
    private actors: FederationActors,
    private remote: RemoteAccounts,
    private posting: PostingService,
    private reader: StatusReader,
    private moderation: ModerationService,
    private editing: EditingService,
    private polls: PollService,
    private quotes: NoteQuotes,
    /** Fetches quoted posts not stored yet (null while federation is off). */
    private fetcher: RemoteFetcher | null,
    private relays: Relays,
    /** Statuses their authors deleted: never stored again. */
    private tombstones: Tombstones,
    /**
     * The group commit local posts go through: Notes delivered at once (a busy inbox) share a
     * commit, whose WAL frames (the statuses and feed pages they all touch) are written once.
     */
    private writes: GroupCommit,
  ) {}

  /**
   * Stores a Note; the stored status (an existing one when that IRI is known already), or null.
   * A delivered Note is kept only when it concerns someone here (Mastodon's
   * related_to_local_activity?): its author is followed from here, it mentions or addresses a
   * local account, or it replies to a local status; a fetched one always. Addressing is read
   * as Mastodon reads it: as:Public in `to` is public, in `cc` unlisted, the author's
   * followers collection private, and anything else (addressed to some accounts only)
   * direct. Mentions of local accounts that block the author are dropped, and with them what
   * only they concerned. A quote of a local post concerns its author; the post it quotes is
   * fetched when it is not stored (`depth`: how many quotes deep this post was reached).
   * `backfill`: fetched to fill a thread or a profile (RemoteStatusInput.backfill). A public
   * Note that concerns nobody is kept when it came through an accepted relay (Mastodon's
   * requested_through_relay?): `relayedBy` is that relay, or tells who signed its delivery
   * (asked only then), and the relay is credited with it.
   */
  async store(note: RemoteNoteInput, options: { fetched: boolean; depth?: number; backfill?: boolean; relayedBy?: RelayRow | DeliveredBy }): Promise<StatusRow | null> {
    // The IRI is shown as the status's address when it gives none (its `url`): http(s) only.
    if (new URL(note.uri).origin !== new URL(note.authorUri).origin || httpUrlOrNull(note.uri) === null) return null;
    // Deleted by its author: its Create sent again, or fetched back, is not believed.
    if (await this.tombstones.has(note.uri)) return null;
    const known = await this.remote.statusByUri(note.uri);
    if (known) return this.reader.findRow(known.id) ?? null;
    let author: AccountRow | null = (await this.remote.byUri(note.authorUri)) ?? null;
    if (!author) {
      const actor = await note.author();
      author = actor ? await this.remote.upsert(actor) : null;
    }
    if (!author || author.uri !== note.authorUri) return null;
    const { to, cc } = note;
    const tags = await note.tags();
    const mentions = await this.mentionsOf(tags.mentioned, author);
    const parent = note.inReplyTo ? await this.statusAt(note.inReplyTo) : null;
    // A Note named by a poll option, answering a poll here, is a vote (Mastodon's votes).
    if (note.name !== null && parent?.local) return this.vote(author, parent.id, note.name);
    const mentionsLocal = mentions.some((m) => m.acct === undefined);
    const quote = await note.quote();
    const quotesLocal = quote?.quoted?.ours === true && (await this.statusAt(quote.quoted))?.local === true;
    let relay: RelayRow | null = null;
    if (!options.fetched && !(await this.actors.hasLocalFollowers(author.id)) && !mentionsLocal && !parent?.local && !quotesLocal) {
      // Relays carry public statuses only; anything else through one concerns nobody here.
      const via = options.relayedBy;
      relay = !to.includes(PUBLIC) || via === undefined ? null : typeof via === "function" ? await this.relays.carrier(via, author.uri) : via;
      if (relay === null) return null;
    }
    const followers = author.followersUrl;
    let visibility: Visibility;
    if (to.includes(PUBLIC)) visibility = "public";
    else if (cc.includes(PUBLIC)) visibility = "unlisted";
    else if (followers !== null && (to.includes(followers) || cc.includes(followers))) visibility = "private";
    else if (mentionsLocal) visibility = "direct";
    else return null;
    // An address clients and our pages link to: one that is not http(s) is dropped (the IRI stands in).
    const url = httpUrlOrNull(note.url);
    // Resolved before the post is written, so that it is shown with its quote's state from the start.
    const quoting = quote && (await this.quotes.resolve(quote, { uri: note.uri, accountId: author.id }, this.quotedLookup(options.depth ?? 0)));
    const [media, emojis, poll] = [await note.attachments(), await note.emojis(), await note.poll()];
    const input = {
      accountId: author.id,
      uri: note.uri,
      url,
      ...this.contentOf(note, tags.hashtags),
      visibility,
      language: null,
      createdAt: note.publishedAt ?? Date.now(),
      inReplyToId: parent?.id ?? null,
      inReplyToUri: parent ? null : httpUrlOrNull(note.inReplyTo?.href),
      mentions,
      media,
      emojis,
      poll,
      quoteApproval: remoteQuoteApproval(note.quotePolicy, author),
      backfill: options.backfill,
    };
    const published = await this.writes.run(() => this.posting.publishRemote(input));
    if (published && quoting) await this.quotes.attach(published, quoting);
    if (published && relay) await this.relays.brought(relay.id);
    // null: the same Note arrived meanwhile (another delivery of it); that one stands.
    return published ?? this.reader.findRow((await this.remote.statusByUri(note.uri))?.id ?? 0) ?? null;
  }

  /**
   * An actor deleted an object: when it is one of its own server's and the actor is an account
   * stored here, no status will be stored under that IRI again (Mastodon's Delete#delete_note
   * keeps a Tombstone so). The caller removes the status, if one is stored.
   */
  async deleted(actorUri: string, objectUri: string): Promise<void> {
    const account = await this.remote.byUri(actorUri);
    if (account && httpUrlOrNull(objectUri) !== null && new URL(objectUri).origin === new URL(actorUri).origin) await this.tombstones.add(objectUri, account.id);
  }

  /** Where a quoted post is found: stored here, or fetched from its server while the chain is short enough. */
  private quotedLookup(depth: number): QuotedLookup {
    return {
      fetching: this.fetcher !== null,
      stored: async (ref) => {
        const found = await this.statusAt(ref);
        return found ? (this.reader.findRow(found.id) ?? null) : null;
      },
      fetch: async (ref) => {
        if (depth >= MAX_QUOTE_DEPTH || this.fetcher === null) return null;
        const found = await this.fetcher.object(ref.href);
        return found && "note" in found ? this.store(found.note, { fetched: true, depth: depth + 1 }) : null;
      },
    };
  }

  /**
   * The accounts a Note mentions: its Mention tags, and (as Mastodon's silent mentions) the
   * local actors it is addressed to. Local accounts that block the author are left out;
   * remote accounts only when already stored (nothing is fetched for them).
   */
  private async mentionsOf(mentioned: IriRef[], author: AccountRow): Promise<MentionRef[]> {
    const found = new Map<number, MentionRef>();
    for (const ref of mentioned) {
      if (ref.actor !== null) {
        const local = await this.actors.localAccount(ref.actor);
        if (local && local.username === ref.actor) found.set(local.id, { id: local.id, username: local.username });
        continue;
      }
      const remote = ref.ours ? undefined : await this.remote.byUri(ref.href);
      if (remote && remote.id !== author.id) found.set(remote.id, { id: remote.id, username: remote.username, acct: `${remote.username}@${remote.domain}`, url: remote.url ?? ref.href });
    }
    const locals = [...found.values()].filter((m) => m.acct === undefined).map((m) => m.id);
    const blocking = this.moderation.blocked(author.id, locals).blockedBy;
    return [...found.values()].filter((m) => !blocking.has(m.id));
  }

  /**
   * The author's Update of a Note stored here: its new content, with history (its mentions
   * stay those it arrived with), unless the Note stored was edited later than this one says.
   * The caller has checked that the Update's actor is the author.
   */
  async applyEdit(note: RemoteNoteInput, row: StatusRow): Promise<void> {
    // An Update older than the edit stored changes nothing (Mastodon's already_updated_more_recently?):
    // one signed by its author is believed from anyone who kept it, and relays deliver out of order.
    if (row.editedAt !== null && note.updatedAt !== null && row.editedAt > note.updatedAt) return;
    // A poll's counts change without an edit (Mastodon's Update of a Question).
    if (row.hasPoll) {
      const poll = await note.poll();
      if (poll) await this.polls.applyRemoteCounts(row.id, poll);
    }
    const tags = await note.tags();
    const edited = await this.editing.applyRemoteEdit(row, { ...this.contentOf(note, tags.hashtags), emojis: await note.emojis(), editedAt: note.updatedAt ?? Date.now() });
    const author = await this.remote.byUri(note.authorUri);
    if (author) await this.editing.applyRemoteQuotePolicy(edited, remoteQuoteApproval(note.quotePolicy, author));
    // An edit, as Mastodon tells one (handle_explicit_update!): an `updated` newer than the last.
    const explicit = note.updatedAt !== null && (row.editedAt === null || note.updatedAt > row.editedAt);
    await this.quotes.edited(edited, await note.quote(), this.quotedLookup(0), explicit);
  }

  /** A remote quote checked again (QuoteChecks): its quoted post looked for as a new post's is. */
  recheckQuote(quoteId: number): Promise<RecheckOutcome> {
    return this.quotes.recheck(quoteId, this.quotedLookup(0));
  }

  /** The Note's HTML as Mastodon keeps remote HTML (sanitized), its text, and its hashtags. */
  private contentOf(note: RemoteNoteInput, hashtags: string[]): NoteContent {
    const html = sanitizeRemoteHtml(note.content);
    const spoilerText = htmlToText(note.summary);
    return { html, text: htmlToText(html), spoilerText, sensitive: note.sensitive || spoilerText !== "", tags: hashtags };
  }

  /** A remote account's vote in a local poll, by the option's title; never stored as a status. */
  private async vote(author: AccountRow, statusId: number, title: string): Promise<null> {
    const poll = await this.polls.pollOf(statusId);
    const choice = poll ? (JSON.parse(poll.options) as string[]).indexOf(title) : -1;
    if (!poll || choice < 0) return null;
    try {
      await this.polls.vote(author.id, poll.id, [String(choice)]);
    } catch {
      // Ended, already voted, or not a poll it may see: Mastodon drops such a vote too.
    }
    return null;
  }

  /** A stored status by its IRI: a local one (served at our URIs) or a remote one kept here. */
  async statusAt(iri: IriRef): Promise<{ id: number; local: boolean } | null> {
    if (iri.status !== null) {
      const id = Number(iri.status.id);
      const row = Number.isSafeInteger(id) ? this.reader.findRow(id) : undefined;
      const author = row && (await this.actors.localAccount(iri.status.identifier));
      return row && author && author.id === row.accountId && row.uri === null ? { id: row.id, local: true } : null;
    }
    const remote = await this.remote.statusByUri(iri.href);
    return remote ? { id: remote.id, local: false } : null;
  }
}
