import type { Context, Federation, RequestContext } from "@fedify/fedify";
import { Emoji, Note, QuoteAuthorization, Tombstone, type Question, type Recipient } from "@fedify/fedify/vocab";
import type { AccountRow, StatusRow } from "../db/schema.ts";
import type { Urls } from "../presenters/account.ts";
import { bareActorOf } from "./access.ts";
import type { InstanceActor } from "./instance-actor.ts";
import type { AccountKeys } from "./keys.ts";
import { recipientOf } from "./outbound/sender.ts";
import type { FederationServices } from "./port.ts";
import type { federationReaders } from "./readers.ts";
import { STAMP_PATH, stampOf } from "./quote-vocab.ts";
import { actorOf, createOf, emojiOf, instant, loadParts, noteOf, type NoteLookups } from "./vocab.ts";

const PAGE_SIZE = 20;

/** A paged collection's first page starts from the top; Fedify wants a string cursor for it. */
const FIRST = "";
const cursorOf = (cursor: string) => (cursor === FIRST ? null : cursor);

export interface Dispatch {
  federation: Federation<void>;
  services: Pick<FederationServices, "federationActors" | "customEmojis" | "reader" | "quotes">;
  urls: Urls;
  lookups: NoteLookups;
  instance: InstanceActor;
  keys: AccountKeys;
  /** Who reads, and what: secure mode (AUTHORIZED_FETCH or WHITELIST_MODE), blocks (readers.ts). */
  readers: ReturnType<typeof federationReaders>;
}

/**
 * What other servers read here: the actors of local accounts at the URIs the client API
 * already emits (/users/:name) and the instance actor, their keys, collections (outbox,
 * followers, following, featured), statuses with their replies and threads, and custom emojis.
 */
export function dispatch({ federation, services, urls, lookups, instance, keys, readers }: Dispatch): void {
  const actors = services.federationActors;
  const authorized = readers.authorized;
  /**
   * A reader the account blocks (or whose domain it blocks) finds its collections empty. (The
   * followers dispatcher is also asked outside any request, to deliver: no reader there.)
   */
  const hidden = async (ctx: Context<void>, account: AccountRow) =>
    "request" in ctx && (await readers.hides(account.id, await readers.readerOf(ctx as RequestContext<void>)));

  /** The account behind an identifier, exactly as its URIs spell it (one actor per account). */
  const actorAccount = async (identifier: string) => {
    const account = await actors.localAccount(identifier);
    return account && account.username === identifier ? account : undefined;
  };
  /** An account whose collections and statuses are served: none while staff suspend it (its actor alone says so). */
  const local = async (identifier: string) => {
    const account = await actorAccount(identifier);
    return account && account.suspendedAt === null ? account : undefined;
  };

  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (identifier === instance.identifier) return instance.actor(ctx);
      const account = await actorAccount(identifier);
      if (!account) return null;
      // Deleted by staff: gone for good (410, WebFinger too), as Mastodon answers for a deleted account.
      if (await actors.deletedLocally(account)) return new Tombstone({ id: ctx.getActorUri(identifier), deleted: instant(account.suspendedAt!) });
      // Secure mode: an unsigned fetch gets what checking a signature needs, not the profile;
      // so does a reader the account blocks. (Fedify also asks for the actor at an inbox POST.)
      const fetched = ctx.request.method === "GET" || ctx.request.method === "HEAD";
      if (fetched && (await readers.seesBareActor(ctx, account))) return bareActorOf(ctx, account);
      return actorOf(ctx, urls, account, account.movedToAccountId === null ? undefined : await lookups.account(account.movedToAccountId));
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) => {
      if (identifier === instance.identifier) return instance.keyPairs();
      // A suspended or deleted account still signs: its Update and Delete must verify.
      const account = await actorAccount(identifier);
      return account ? keys.keyPairs(account.id) : [];
    });

  federation
    .setOutboxDispatcher("/users/{identifier}/outbox", async (ctx, identifier, cursor) => {
      const account = await local(identifier);
      if (!account || cursor === null) return null;
      if (await hidden(ctx, account)) return { items: [] };
      const page = await actors.outbox(account.id, cursorOf(cursor), PAGE_SIZE);
      const items = [];
      // In turn: each Note reads what it points at first.
      for (const status of page.items) items.push(createOf(ctx, await noteOf(ctx, urls, account, status, lookups), account, status));
      return { items, nextCursor: page.next };
    })
    .setCounter(async (_ctx, identifier) => {
      const account = await local(identifier);
      return account ? actors.outboxCount(account.id) : null;
    })
    .setFirstCursor(() => FIRST)
    .authorize(authorized);

  federation
    .setFollowersDispatcher("/users/{identifier}/followers", async (ctx, identifier, cursor) => {
      const account = await local(identifier);
      if (!account) return null;
      // The whole collection is what delivery to "followers" asks for: only remote inboxes.
      if (cursor === null) return { items: (await actors.remoteFollowers(account.id)).map(recipientOf) };
      if (await hidden(ctx, account)) return { items: [] };
      const page = await actors.followers(account.id, cursorOf(cursor), PAGE_SIZE);
      const items: Recipient[] = page.items.map((f) => (f.domain === null ? { id: ctx.getActorUri(f.username), inboxId: null } : recipientOf(f)));
      return { items, nextCursor: page.next };
    })
    .setCounter(async (_ctx, identifier) => (await local(identifier))?.followersCount ?? null)
    .setFirstCursor(() => FIRST)
    .authorize(authorized);

  // Mastodon shows the count of followed accounts, not who they are.
  federation
    .setFollowingDispatcher("/users/{identifier}/following", async (_ctx, identifier) => ((await local(identifier)) ? { items: [] } : null))
    .setCounter(async (_ctx, identifier) => (await local(identifier))?.followingCount ?? null)
    .authorize(authorized);

  federation
    .setFeaturedDispatcher("/users/{identifier}/featured", async (ctx, identifier) => {
      const account = await local(identifier);
      if (!account) return null;
      if (await hidden(ctx, account)) return { items: [] };
      const items = [];
      for (const status of await actors.pinned(account.id)) items.push(await noteOf(ctx, urls, account, status, lookups));
      return { items };
    })
    .authorize(authorized);

  // This server's custom emojis, which Notes and actors name by these IRIs.
  federation.setObjectDispatcher(Emoji, "/emojis/{shortcode}", async (ctx, { shortcode }) => {
    const row = await services.customEmojis.find(shortcode);
    return row ? emojiOf(ctx, services.customEmojis.entity(row)) : null;
  });

  // Public and unlisted statuses for anyone (signed, in secure mode); a private or direct one
  // for a signed request by an account allowed to see it (a follower, a mentioned account), as
  // Mastodon's StatusPolicy decides with the signer as the viewer. A signer the author blocks,
  // or whose domain the author blocks, sees nothing.
  /** Whether this reader may see a local account's status (see the Note dispatcher below). */
  const shown = async (ctx: RequestContext<void>, account: AccountRow, status: StatusRow) => {
    const published = status.visibility === "public" || status.visibility === "unlisted";
    const reader = await readers.readerOf(ctx);
    if (await readers.hides(account.id, reader)) return false;
    if (!reader.viewer) return published;
    return (await services.reader.visible([status], reader.viewer.id)).length === 1;
  };

  const readable = async (ctx: RequestContext<void>, identifier: string, id: string) => {
    const account = await local(identifier);
    if (!account || !/^\d+$/.test(id)) return null;
    const status = await actors.ownStatus(account.id, Number(id));
    if (!status) return null;
    return (await shown(ctx, account, status)) ? { account, status } : null;
  };

  federation
    .setObjectDispatcher(Note, "/users/{identifier}/statuses/{id}", async (ctx, { identifier, id }) => {
      const found = await readable(ctx, identifier, id);
      return found && noteOf(ctx, urls, found.account, found.status, lookups);
    })
    .authorize((ctx) => authorized(ctx));

  // The stamps of accepted quotes of local posts (FEP-044f's QuoteAuthorization), where
  // Mastodon serves its own (QuoteAuthorizationsController): only while the quote stands, and
  // to whoever may see the quoted post. Other servers fetch one to believe a quote of it.
  federation
    .setObjectDispatcher(QuoteAuthorization, STAMP_PATH, async (ctx, { identifier, id }) => {
      const account = await local(identifier);
      const quote = account && /^\d+$/.test(id) ? await services.quotes.find(Number(id)) : undefined;
      if (!account || !quote || quote.state !== "accepted" || quote.quotedAccountId !== account.id || quote.quotedStatusId === null) return null;
      const parts = await loadParts(lookups, [quote.quotedStatusId, quote.statusId], [quote.quotedAccountId]);
      const quoted = parts.status(quote.quotedStatusId);
      if (!quoted || !(await shown(ctx, account, quoted))) return null;
      return stampOf(ctx, parts, quote);
    })
    .authorize((ctx) => authorized(ctx));

  /**
   * Statuses of a thread as collection items: this server's embedded as Notes (as Mastodon
   * embeds its own), others' by their IRI, for their servers to answer. (Fedify types a
   * collection's items as objects; an IRI is an item too, and it writes it as one.)
   */
  const threadItems = async (ctx: Context<void>, rows: StatusRow[]) => {
    const items: (Note | Question | URL)[] = [];
    for (const row of rows) {
      if (row.uri !== null) {
        items.push(new URL(row.uri));
        continue;
      }
      const author = await lookups.account(row.accountId);
      if (author) items.push(await noteOf(ctx, urls, author, row, lookups));
    }
    return items as unknown as Note[];
  };

  // A status's replies (Mastodon's replies collection, which other servers follow to fetch the
  // replies they miss): the public and unlisted ones known here, paged, for whoever may read the status.
  federation
    .setCollectionDispatcher("replies", Note, "/users/{identifier}/statuses/{id}/replies", async (ctx, { identifier, id }, cursor) => {
      const found = await readable(ctx, identifier, id);
      if (!found || cursor === null) return null;
      const page = await actors.replies(found.status.id, cursorOf(cursor), PAGE_SIZE);
      return { items: await threadItems(ctx, page.items), nextCursor: page.next };
    })
    .setFirstCursor(() => FIRST)
    .authorize((ctx) => authorized(ctx));

  // A thread begun here, as FEP-7888's context collection (Mastodon 4.5's /contexts/:id), below
  // its top's IRI: its public and unlisted statuses at any depth, oldest first, when its top may be read.
  federation
    .setCollectionDispatcher("context", Note, "/users/{identifier}/statuses/{id}/context", async (ctx, { identifier, id }, cursor) => {
      const found = await readable(ctx, identifier, id);
      if (!found || found.status.conversationId !== found.status.id || cursor === null) return null;
      const page = await actors.conversation(found.status.id, cursorOf(cursor), PAGE_SIZE);
      return { items: await threadItems(ctx, page.items), nextCursor: page.next };
    })
    .setFirstCursor(() => FIRST)
    .authorize((ctx) => authorized(ctx));
}
