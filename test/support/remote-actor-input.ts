import type { RemoteActorInput } from "../../src/services/remote/inputs.ts";

/** A remote actor as the inbox hands it to RemoteAccounts (a Person named by its IRI's last segment), with what a test changes. */
export function remoteActorInput(uri: string, fields: Partial<RemoteActorInput> = {}): RemoteActorInput {
  return {
    uri,
    inboxUrl: `${uri}/inbox`,
    sharedInboxUrl: null,
    followersUrl: `${uri}/followers`,
    featuredUrl: null,
    outboxUrl: null,
    aliases: [],
    movedTo: null,
    username: uri.split("/").at(-1)!,
    displayName: "Zoe",
    url: uri,
    locked: false,
    bot: false,
    discoverable: true,
    indexable: true,
    publishedAt: null,
    keyIds: [`${uri}#main-key`],
    profile: async () => ({ noteHtml: "<p>hi</p>", fields: [], avatarRemoteUrl: null, headerRemoteUrl: null, emojis: [] }),
    ...fields,
  };
}
