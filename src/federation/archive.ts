import { createFederation, MemoryKvStore, type Context } from "@fedify/fedify";
import { Announce, Emoji, Note, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { and, eq, isNull } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { DatabasePort } from "../db/port.ts";
import type { Urls } from "../presenters/account.ts";
import type { ArchiveRenderer } from "../services/archive/ports.ts";
import { AccountKeys } from "./keys.ts";
import { actorOf, actorUriOf, createOf, instant, noteOf, noteUriOf } from "./vocab.ts";

/**
 * What an account's archive says in ActivityPub (its actor.json and outbox.json): the
 * documents federation serves, through the same vocab.ts, rendered to JSON-LD. It has a
 * Federation object of its own that only names things (the URI templates the server's
 * dispatchers serve, dispatchers.ts and index.ts; the export test checks they agree), so
 * that an archive is written with FEDERATION=off and from the CLI alike.
 */
export function createArchiveRenderer(deps: { config: Config; port: DatabasePort; clock: Clock; urls: Urls }): ArchiveRenderer {
  const publicUrl = new URL(deps.config.publicUrl);
  const keys = new AccountKeys(deps.port, deps.clock);
  const federation = createFederation<void>({ kv: new MemoryKvStore(), origin: { handleHost: publicUrl.host, webOrigin: publicUrl.origin } });
  const { accounts } = deps.port.tables;
  const localId = async (username: string) =>
    (await deps.port.orm.select({ id: accounts.id }).from(accounts).where(and(eq(accounts.username, username), isNull(accounts.domain))).limit(1))[0]?.id;
  federation
    .setActorDispatcher("/users/{identifier}", () => null)
    .setKeyPairsDispatcher(async (_ctx, identifier) => {
      const id = await localId(identifier);
      return id === undefined ? [] : keys.keyPairs(id);
    });
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox");
  federation.setOutboxDispatcher("/users/{identifier}/outbox", () => null);
  federation.setFollowersDispatcher("/users/{identifier}/followers", () => null);
  federation.setFollowingDispatcher("/users/{identifier}/following", () => null);
  federation.setFeaturedDispatcher("/users/{identifier}/featured", () => null);
  federation.setObjectDispatcher(Note, "/users/{identifier}/statuses/{id}", () => null);
  federation.setObjectDispatcher(Emoji, "/emojis/{shortcode}", () => null);
  const context = (): Context<void> => federation.createContext(publicUrl, undefined);
  const json = async (object: { toJsonLd(): Promise<unknown> }) => (await object.toJsonLd()) as Record<string, unknown>;

  return {
    actor: async (account) => json(await actorOf(context(), deps.urls, account)),
    async activity(author, status, lookups) {
      const c = context();
      // An archive's Notes name no quote: its stamps are the server's to serve, not the archive's.
      if (status.reblogOfId === null) return json(createOf(c, await noteOf(c, deps.urls, author, status, { ...lookups, quote: async () => undefined }), author, status));
      // A boost as Mastodon's outbox has it: the Announce of the original's IRI.
      const original = await lookups.status(status.reblogOfId);
      const originalAuthor = original && (await lookups.account(original.accountId));
      const followers = c.getFollowersUri(author.username);
      const authorUri = originalAuthor ? [actorUriOf(c, originalAuthor)] : [];
      const [tos, ccs] = status.visibility === "public" ? [[PUBLIC_COLLECTION], [followers, ...authorUri]] : status.visibility === "unlisted" ? [[followers], [PUBLIC_COLLECTION, ...authorUri]] : [[followers], authorUri];
      return json(
        new Announce({
          id: new URL(`${noteUriOf(c, author, status).href}/activity`),
          actor: c.getActorUri(author.username),
          object: original && originalAuthor ? noteUriOf(c, originalAuthor, original) : null,
          published: instant(status.createdAt),
          tos,
          ccs,
        }),
      );
    },
    statusUri: (author, status) => noteUriOf(context(), author, status).href,
  };
}
