import type { AccountRow, StatusRow } from "../../db/schema.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { StatusActionService } from "../statuses/actions.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { RemovalService } from "../statuses/removal.ts";
import type { FederationActors } from "./local-actors.ts";
import type { RemoteFetcher } from "./fetcher.ts";
import type { ActorSource, IriRef, RemoteNoteInput } from "./inputs.ts";
import type { RemoteAccounts } from "./accounts.ts";
import type { RemoteNotes } from "./notes.ts";
import type { Relays } from "./relays.ts";

/** ActivityStreams' public collection, as addressing names it. */
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

/** An Announce as the inbox reads it. */
export interface AnnounceInput {
  /** The Announce's own IRI: the boost's address. */
  uri: string;
  actor: ActorSource;
  object: IriRef;
  /** The announced status, fetched from its server, when it is not stored here. */
  fetchObject(): Promise<RemoteNoteInput | null>;
  to: string[];
  cc: string[];
  publishedAt: number | null;
}

/** An Add or Remove of a status to or from an actor's featured collection. */
export interface FeatureInput {
  actorUri: string;
  object: IriRef;
  /** The collection it names. */
  target: string;
  /** The status, fetched from its server, when it is not stored here (for an Add). */
  fetchObject(): Promise<RemoteNoteInput | null>;
}

/**
 * Favourites and boosts by remote accounts (Like, Announce, and their Undo), through the
 * same status actions as a local account's: counters, notifications, home feeds. A Like is
 * counted only on a local status (a remote status's count is its own server's); a boost of a
 * remote status is kept when someone here follows the booster, the status fetched from its
 * own server if it is not stored yet.
 */
export class RemoteInteractions {
  constructor(
    private actors: FederationActors,
    private remote: RemoteAccounts,
    private actions: StatusActionService,
    private removal: RemovalService,
    private reader: StatusReader,
    private notes: RemoteNotes,
    /** Fetches actors from their servers (null while federation is off). */
    private fetcher: RemoteFetcher | null,
    private relays: Relays,
  ) {}

  async like(actor: ActorSource, object: IriRef): Promise<void> {
    const pair = await this.localTarget(actor, object);
    if (!pair) return;
    try {
      await this.actions.favourite(pair.account.id, pair.status.id);
    } catch {
      // Not a status it may see, or it blocks the author: nothing to count.
    }
  }

  /** An Undo of a Like, by the Like's own actor (checked by the caller). */
  async unlike(actor: ActorSource, object: IriRef): Promise<void> {
    const pair = await this.localTarget(actor, object);
    if (!pair) return;
    try {
      await this.actions.unfavourite(pair.account.id, pair.status.id);
    } catch {
      // The status is no longer visible to it: its favourite went with that.
    }
  }

  async announce(announce: AnnounceInput): Promise<void> {
    // A server speaks for its own activities only; the IRI is shown as the boost's address (http(s) only).
    if (new URL(announce.uri).origin !== new URL(announce.actor.uri).origin || httpUrlOrNull(announce.uri) === null) return;
    if (await this.remote.statusByUri(announce.uri)) return;
    // A LitePub relay announces what it carries: the status is fetched from its own server and
    // kept as relayed; the relay is no account here and boosts nothing (Mastodon's Announce
    // returns once requested_through_relay?).
    const relay = await this.relays.byActor(announce.actor.uri);
    if (relay) {
      if (await this.statusAt(announce.object)) return;
      const object = await announce.fetchObject();
      if (object) await this.notes.store(object, { fetched: false, relayedBy: relay });
      return;
    }
    const account = await this.actorOf(announce.actor);
    if (!account) return;
    let original = await this.statusAt(announce.object);
    if (!original) {
      if (!(await this.actors.hasLocalFollowers(account.id))) return;
      const object = await announce.fetchObject();
      if (!object) return;
      original = await this.notes.store(object, { fetched: true });
      if (!original) return;
    }
    const { to, cc } = announce;
    const visibility = to.includes(PUBLIC) ? "public" : cc.includes(PUBLIC) ? "unlisted" : "private";
    try {
      await this.actions.reblog(account.id, original.id, visibility, { uri: announce.uri, createdAt: announce.publishedAt ?? Date.now() });
    } catch {
      // Not boostable by it (private, direct, or it blocks the author): nothing is stored.
    }
  }

  /** An Undo of an Announce (its IRI, when it has one), by the Announce's own actor (checked by the caller). */
  async unannounce(actorUri: string, announceUri: string | null): Promise<void> {
    const account = await this.remote.byUri(actorUri);
    if (!account) return;
    const byUri = announceUri !== null ? await this.remote.statusByUri(announceUri) : undefined;
    const boost = byUri ? await this.reader.findRow(byUri.id) : undefined;
    if (boost && boost.accountId === account.id && boost.reblogOfId !== null) await this.removal.remove(boost);
  }

  /**
   * A remote account pins (Add) or unpins (Remove) one of its statuses. The target must be its
   * own featured collection, as its actor document names it, and the status its own; one not
   * stored yet is fetched from its server.
   */
  async feature(kind: "Add" | "Remove", activity: FeatureInput): Promise<void> {
    const account = await this.remote.byUri(activity.actorUri);
    if (!account || !this.fetcher) return;
    const actor = await this.fetcher.actor(activity.actorUri).catch(() => null);
    if (!actor || actor.featuredUrl !== activity.target) return;
    let status = await this.statusAt(activity.object);
    if (!status && kind === "Add") {
      const object = await activity.fetchObject();
      status = object ? await this.notes.store(object, { fetched: true }) : null;
    }
    if (!status || status.accountId !== account.id) return;
    try {
      if (kind === "Add") await this.actions.pin(account.id, status.id, { remote: true });
      else await this.actions.unpin(account.id, status.id);
    } catch {
      // Pinned already, or not pinnable (a boost, a private status): nothing changes.
    }
  }

  /** The remote actor and the local status a Like names. */
  private async localTarget(actor: ActorSource, object: IriRef): Promise<{ account: AccountRow; status: StatusRow } | null> {
    const status = await this.statusAt(object);
    if (!status || status.uri !== null) return null;
    const account = await this.actorOf(actor);
    return account ? { account, status } : null;
  }

  /** The activity's actor as stored, fetched and stored when it is new. */
  private async actorOf(actor: ActorSource): Promise<AccountRow | null> {
    const stored = await this.remote.byUri(actor.uri);
    if (stored) return stored;
    const fetched = await actor.load();
    return fetched ? this.remote.upsert(fetched) : null;
  }

  /** A status stored here by its IRI: a local one (at our URIs) or a remote one. */
  private async statusAt(iri: IriRef): Promise<StatusRow | null> {
    const found = await this.notes.statusAt(iri);
    return found ? ((await this.reader.findRow(found.id)) ?? null) : null;
  }
}
