import type { Context } from "@fedify/fedify";
import { Create, Endpoints, Image, Note, Person, PropertyValue, PUBLIC_COLLECTION, Service } from "@fedify/fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import type { AccountRow, StatusRow } from "../db/schema.ts";
import { accountUrl, serializeAccount, type Urls } from "../presenters/account.ts";
import { statusUrl } from "../presenters/status.ts";

const instant = (ms: number) => Temporal.Instant.fromEpochMilliseconds(ms);

/**
 * The actor document of a local account (Mastodon's ActivityPub::ActorSerializer is the model:
 * Person, or Service for bots; the RSA key as publicKey, both keys as assertionMethods).
 */
export async function actorOf(ctx: Context<void>, urls: Urls, account: AccountRow) {
  const name = account.username;
  const shown = serializeAccount(urls, account);
  const keys = await ctx.getActorKeyPairs(name);
  const values = {
    id: ctx.getActorUri(name),
    preferredUsername: name,
    name: account.displayName,
    summary: account.noteHtml,
    url: new URL(accountUrl(urls, name)),
    published: instant(account.createdAt),
    manuallyApprovesFollowers: account.locked,
    discoverable: account.discoverable,
    indexable: account.indexable,
    inbox: ctx.getInboxUri(name),
    endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
    outbox: ctx.getOutboxUri(name),
    followers: ctx.getFollowersUri(name),
    following: ctx.getFollowingUri(name),
    featured: ctx.getFeaturedUri(name),
    icon: account.avatarFile ? new Image({ url: new URL(shown.avatar) }) : null,
    image: account.headerFile ? new Image({ url: new URL(shown.header) }) : null,
    attachments: shown.fields.map((f) => new PropertyValue({ name: f.name, value: f.value })),
    publicKey: keys[0]?.cryptographicKey ?? null,
    assertionMethods: keys.map((k) => k.multikey),
  };
  return account.bot ? new Service(values) : new Person(values);
}

/**
 * A status as a Note, addressed as Mastodon addresses it: public has as:Public in `to` and
 * the followers in `cc`; unlisted the other way round; private the followers alone.
 * Not yet: mentions as tags, attachments, polls (Question), hashtags, edits' `updated`.
 */
export function noteOf(ctx: Context<void>, urls: Urls, author: AccountRow, status: StatusRow, inReplyTo: URL | null) {
  const followers = ctx.getFollowersUri(author.username);
  const isPublic = status.visibility === "public";
  const isPrivate = status.visibility === "private";
  return new Note({
    id: ctx.getObjectUri(Note, { identifier: author.username, id: String(status.id) }),
    attribution: ctx.getActorUri(author.username),
    content: status.contentHtml,
    summary: status.spoilerText === "" ? null : status.spoilerText,
    sensitive: status.sensitive,
    published: instant(status.createdAt),
    updated: status.editedAt === null ? null : instant(status.editedAt),
    url: new URL(statusUrl(urls, author.username, status.id)),
    replyTarget: inReplyTo,
    tos: [isPublic ? PUBLIC_COLLECTION : followers],
    ccs: isPrivate ? [] : [isPublic ? followers : PUBLIC_COLLECTION],
  });
}

/** The Create activity that published a status (the outbox items). */
export function createOf(ctx: Context<void>, note: Note, author: AccountRow, status: StatusRow) {
  return new Create({
    id: new URL(`${note.id!.href}/activity`),
    actor: ctx.getActorUri(author.username),
    published: instant(status.createdAt),
    tos: note.toIds,
    ccs: note.ccIds,
    object: note,
  });
}
