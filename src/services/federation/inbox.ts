import type { InboxContext } from "@fedify/fedify";
import { Accept, Activity, Announce, Block, Create, Delete, Follow, isActor, Like, Reject, Undo, Update, type Actor } from "@fedify/fedify/vocab";
import type { AccountRow } from "../../db/schema.ts";
import { isStatusObject, type RemoteNotes } from "./remote-notes.ts";
import type { RemoteInteractions } from "./interactions.ts";
import type { GoneAccounts } from "./gone-accounts.ts";
import type { RemovalService } from "../statuses/removal.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { FederationActors } from "./actors.ts";
import type { RemoteAccounts } from "./remote-accounts.ts";

/**
 * What incoming activities do. Fedify has verified the HTTP signature before any of this runs,
 * and that the signing key belongs to the activity's actor.
 */
export class FederationInbox {
  constructor(
    private actors: FederationActors,
    private remote: RemoteAccounts,
    private follows: FollowService,
    private removal: RemovalService,
    private reader: StatusReader,
    private moderation: ModerationService,
    private notes: RemoteNotes,
    private interactions: RemoteInteractions,
    private gone: GoneAccounts,
  ) {}

  /**
   * Update of an actor (its own profile only) or of a Note (by its author only): anything
   * else, an Update of someone else's actor or status, changes nothing.
   */
  async update(ctx: InboxContext<void>, update: Update): Promise<void> {
    if (update.actorId === null) return;
    // An object of another origin than the actor's is no update of the actor's own.
    const object = await update.getObject({ ...ctx, crossOrigin: "ignore" });
    if (object === null || object.id === null) return;
    if (isActor(object)) {
      if (object.id.href === update.actorId.href && this.remote.byUri(object.id.href)) await this.remote.upsert(object);
      return;
    }
    if (!isStatusObject(object) || object.attributionId?.href !== update.actorId.href) return;
    const found = this.remote.statusByUri(object.id.href);
    if (!found || found.authorUri !== update.actorId.href) return;
    const row = this.reader.findRow(found.id);
    if (row) await this.notes.applyEdit(ctx, object, row);
  }

  /**
   * A remote status deleted by its author goes here too, and an actor deleting itself takes its
   * account here with it; a Delete from anyone else changes nothing.
   */
  async delete(_ctx: InboxContext<void>, del: Delete): Promise<void> {
    if (del.actorId === null || del.objectId === null) return;
    if (del.objectId.href === del.actorId.href) {
      const gone = this.remote.byUri(del.actorId.href);
      if (gone) this.gone.remove(gone.id);
      return;
    }
    const found = this.remote.statusByUri(del.objectId.href);
    if (!found || found.authorUri !== del.actorId.href) return;
    const row = this.reader.findRow(found.id);
    if (row) this.removal.remove(row);
  }

  /** A remote Note, stored when it concerns someone here (see RemoteNotes). */
  async create(ctx: InboxContext<void>, create: Create): Promise<void> {
    if (create.actorId === null) return;
    const note = await create.getObject(ctx);
    if (!isStatusObject(note) || note.id === null) return;
    // The actor must be the author.
    if (note.attributionId?.href !== create.actorId.href) return;
    // The Note as it arrived, for what Fedify's vocabulary leaves out (attachments' blurhash).
    const raw = ((await create.toJsonLd()) as { object?: unknown } | null)?.object;
    await this.notes.store(ctx, note, { fetched: false, raw });
  }

  /**
   * A remote actor follows a local account: a follow (and Accept at once) or, when locked, a
   * follow request; then the pair is returned, for the Follow's IRI to be kept: the answer to a
   * request quotes it, and so does the Reject sent when the account later blocks its follower
   * (GoToSocial finds the follow to end by that IRI).
   */
  async follow(
    ctx: InboxContext<void>,
    follow: Follow,
    answer: (kind: "Accept" | "Reject", target: AccountRow, followerId: number, actor: Actor) => Promise<void>,
  ): Promise<{ followerId: number; targetId: number } | void> {
    if (follow.id === null || follow.actorId === null || follow.objectId === null) return;
    const parsed = ctx.parseUri(follow.objectId);
    if (parsed?.type !== "actor") return;
    const target = this.actors.localAccount(parsed.identifier);
    if (!target || target.username !== parsed.identifier) return;
    const actor = await follow.getActor(ctx);
    if (!actor || actor.id?.href !== follow.actorId.href) return;
    const follower = await this.remote.upsert(actor);
    if (!follower) return;
    let relationship;
    try {
      relationship = this.follows.follow(follower.id, target.id, {});
    } catch {
      // Blocked either way: nothing is stored, and the follower is told with Reject (as Mastodon does).
      await answer("Reject", target, follower.id, actor);
      return;
    }
    const pair = { followerId: follower.id, targetId: target.id };
    if (!relationship.following) return relationship.requested ? pair : undefined;
    await answer("Accept", target, follower.id, actor);
    return pair;
  }

  /**
   * A remote account blocks a local one, as Mastodon's ActivityPub::Activity::Block: follows
   * both ways end and the block is kept (the local account sees `blocked_by`, cannot follow it).
   */
  async block(ctx: InboxContext<void>, block: Block): Promise<void> {
    const pair = this.blockPair(ctx, block);
    if (pair) this.moderation.block(pair.remoteId, pair.localId);
  }

  private blockPair(ctx: InboxContext<void>, block: Block): { remoteId: number; localId: number } | null {
    if (block.actorId === null || block.objectId === null) return null;
    const parsed = ctx.parseUri(block.objectId);
    if (parsed?.type !== "actor") return null;
    const target = this.actors.localAccount(parsed.identifier);
    const blocker = this.remote.byUri(block.actorId.href);
    return target && blocker ? { remoteId: blocker.id, localId: target.id } : null;
  }

  /** Undo of a Follow (the follow or the request goes), a Block, a Like or an Announce, by the actor who sent it. */
  async undo(ctx: InboxContext<void>, undo: Undo): Promise<void> {
    if (undo.actorId === null) return;
    const object = await undo.getObject(ctx);
    // Only the actor of the undone activity can take it back.
    if (!(object instanceof Activity) || object.actorId?.href !== undo.actorId.href) return;
    if (object instanceof Like) return this.interactions.unlike(ctx, object);
    if (object instanceof Announce) return this.interactions.unannounce(ctx, object);
    if (!(object instanceof Follow || object instanceof Block)) return;
    if (object instanceof Block) {
      const pair = this.blockPair(ctx, object);
      if (pair) this.moderation.unblock(pair.remoteId, pair.localId);
      return;
    }
    if (object.objectId === null) return;
    const follower = this.remote.byUri(undo.actorId.href);
    const parsed = ctx.parseUri(object.objectId);
    if (!follower || parsed?.type !== "actor") return;
    const target = this.actors.localAccount(parsed.identifier);
    if (!target) return;
    this.follows.removeFollow(follower.id, target.id);
    this.follows.removeFollowRequests(follower.id, target.id);
  }

  /** A remote account accepts a local account's Follow: the request becomes a follow. */
  async accept(ctx: InboxContext<void>, accept: Accept): Promise<void> {
    const pair = await this.answered(ctx, accept);
    if (!pair) return;
    try {
      this.follows.authorizeRequest(pair.remoteId, pair.localId);
    } catch {
      // No request waiting (answered twice, or withdrawn meanwhile): nothing to do.
    }
  }

  /** A remote account refuses (or removes) a local follower. */
  async reject(ctx: InboxContext<void>, reject: Reject): Promise<void> {
    const pair = await this.answered(ctx, reject);
    if (!pair) return;
    this.follows.removeFollowRequests(pair.localId, pair.remoteId);
    this.follows.removeFollow(pair.localId, pair.remoteId);
  }

  /**
   * The local follower and remote followee an Accept or Reject answers. The embedded Follow is
   * matched by its actor and object (some servers do not echo the Follow's id), and only the
   * followee may answer.
   */
  private async answered(ctx: InboxContext<void>, answer: Accept | Reject): Promise<{ localId: number; remoteId: number } | null> {
    if (answer.actorId === null) return null;
    // The embedded Follow is our own (another origin than the answer's), so Fedify would
    // refetch it by its IRI; its claims are safe to take as written: all they can do is settle
    // a request this server really sent to the very actor that answers.
    const follow = await answer.getObject({ ...ctx, crossOrigin: "trust" });
    if (!(follow instanceof Follow) || follow.actorId === null || follow.objectId?.href !== answer.actorId.href) return null;
    const parsed = ctx.parseUri(follow.actorId);
    if (parsed?.type !== "actor") return null;
    const local = this.actors.localAccount(parsed.identifier);
    const remote = this.remote.byUri(answer.actorId.href);
    return local && remote ? { localId: local.id, remoteId: remote.id } : null;
  }
}
