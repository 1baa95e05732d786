import type { Context } from "@fedify/fedify";
import { Add, Announce, Like, PUBLIC_COLLECTION, Remove, type Activity } from "@fedify/fedify/vocab";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { StatusActionService } from "../statuses/actions.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { RemovalService } from "../statuses/removal.ts";
import type { FederationActors } from "./actors.ts";
import type { RemoteAccounts } from "./remote-accounts.ts";
import { isStatusObject, type RemoteNotes } from "./remote-notes.ts";

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
  ) {}

  async like(ctx: Context<void>, like: Like): Promise<void> {
    const pair = await this.localTarget(ctx, like);
    if (!pair) return;
    try {
      this.actions.favourite(pair.account.id, pair.status.id);
    } catch {
      // Not a status it may see, or it blocks the author: nothing to count.
    }
  }

  /** An Undo of a Like, by the Like's own actor (checked by the caller). */
  async unlike(ctx: Context<void>, like: Like): Promise<void> {
    const pair = await this.localTarget(ctx, like);
    if (!pair) return;
    try {
      this.actions.unfavourite(pair.account.id, pair.status.id);
    } catch {
      // The status is no longer visible to it: its favourite went with that.
    }
  }

  async announce(ctx: Context<void>, announce: Announce): Promise<void> {
    if (announce.id === null || announce.actorId === null || announce.objectId === null) return;
    // A server speaks for its own activities only; the IRI is shown as the boost's address (http(s) only).
    if (announce.id.origin !== announce.actorId.origin || httpUrlOrNull(announce.id) === null) return;
    if (this.remote.statusByUri(announce.id.href)) return;
    const account = await this.actorOf(ctx, announce);
    if (!account) return;
    let original = this.statusAt(ctx, announce.objectId);
    if (!original) {
      if (!this.actors.hasLocalFollowers(account.id)) return;
      const object = await announce.getObject({ ...ctx, suppressError: true });
      if (!isStatusObject(object)) return;
      original = await this.notes.store(ctx, object, { fetched: true });
      if (!original) return;
    }
    const to = announce.toIds.map((u) => u.href);
    const cc = announce.ccIds.map((u) => u.href);
    const visibility = to.includes(PUBLIC_COLLECTION.href) ? "public" : cc.includes(PUBLIC_COLLECTION.href) ? "unlisted" : "private";
    try {
      this.actions.reblog(account.id, original.id, visibility, { uri: announce.id.href, createdAt: announce.published?.epochMilliseconds ?? Date.now() });
    } catch {
      // Not boostable by it (private, direct, or it blocks the author): nothing is stored.
    }
  }

  /** An Undo of an Announce, by the Announce's own actor (checked by the caller). */
  async unannounce(_ctx: Context<void>, announce: Announce): Promise<void> {
    if (announce.actorId === null) return;
    const account = this.remote.byUri(announce.actorId.href);
    if (!account) return;
    const byUri = announce.id ? this.remote.statusByUri(announce.id.href) : undefined;
    const boost = byUri ? this.reader.findRow(byUri.id) : undefined;
    if (boost && boost.accountId === account.id && boost.reblogOfId !== null) this.removal.remove(boost);
  }

  /**
   * A remote account pins (Add) or unpins (Remove) one of its statuses. The target must be its
   * own featured collection, as its actor document names it, and the status its own; one not
   * stored yet is fetched from its server.
   */
  async feature(ctx: Context<void>, activity: Add | Remove): Promise<void> {
    if (activity.actorId === null || activity.objectId === null || activity.targetId === null) return;
    const account = this.remote.byUri(activity.actorId.href);
    if (!account || !this.remote.fetchActor) return;
    const actor = await this.remote.fetchActor(activity.actorId.href).catch(() => null);
    if (!actor || actor.featuredId?.href !== activity.targetId.href) return;
    let status = this.statusAt(ctx, activity.objectId);
    if (!status && activity instanceof Add) {
      const object = await activity.getObject({ ...ctx, suppressError: true });
      status = isStatusObject(object) ? await this.notes.store(ctx, object, { fetched: true }) : null;
    }
    if (!status || status.accountId !== account.id) return;
    try {
      if (activity instanceof Add) this.actions.pin(account.id, status.id, { remote: true });
      else this.actions.unpin(account.id, status.id);
    } catch {
      // Pinned already, or not pinnable (a boost, a private status): nothing changes.
    }
  }

  /** The remote actor and the local status a Like names. */
  private async localTarget(ctx: Context<void>, activity: Like): Promise<{ account: AccountRow; status: StatusRow } | null> {
    if (activity.actorId === null || activity.objectId === null) return null;
    const status = this.statusAt(ctx, activity.objectId);
    if (!status || status.uri !== null) return null;
    const account = await this.actorOf(ctx, activity);
    return account ? { account, status } : null;
  }

  /** The activity's actor as stored, fetched and stored when it is new. */
  private async actorOf(ctx: Context<void>, activity: Activity): Promise<AccountRow | null> {
    const stored = this.remote.byUri(activity.actorId!.href);
    if (stored) return stored;
    const actor = await activity.getActor({ ...ctx, suppressError: true });
    return actor && actor.id?.href === activity.actorId!.href ? this.remote.upsert(actor) : null;
  }

  /** A status stored here by its IRI: a local one (at our URIs) or a remote one. */
  private statusAt(ctx: Context<void>, iri: URL): StatusRow | null {
    const found = this.notes.statusAt(ctx, iri);
    return found ? (this.reader.findRow(found.id) ?? null) : null;
  }
}
