import type { AccountRow } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { RemovalService } from "../statuses/removal.ts";
import type { FederationActors } from "./local-actors.ts";
import type { GoneAccounts } from "./gone-accounts.ts";
import type { RemoteActorInput, RemoteNoteInput } from "./inputs.ts";
import type { RemoteAccounts } from "./accounts.ts";
import type { RemoteNotes } from "./notes.ts";
import type { DeliveredBy } from "./relays.ts";

/** What a remote Follow came to: the follower stored, and what it is answered (Accept, Reject, or nothing yet). */
export interface FollowOutcome {
  followerId: number;
  answer: "Accept" | "Reject" | null;
  /** A follow or a request stands: the Follow's IRI is kept, for the answer or a later Reject to quote. */
  kept: boolean;
}

/**
 * What incoming activities do to statuses, accounts and relationships. Fedify has verified the
 * HTTP signature before any of this runs, and that the signing key belongs to the activity's
 * actor (`actorUri` below); src/federation/inbound/ reads the activities.
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
    private gone: GoneAccounts,
  ) {}

  /** Update of an actor: its own profile only, and only of an account stored here. */
  async updateActor(actorUri: string, actor: RemoteActorInput): Promise<void> {
    if (actor.uri === actorUri && (await this.remote.byUri(actor.uri))) await this.remote.upsert(actor);
  }

  /** Update of a Note by its author: anything else, an Update of someone else's status, changes nothing. */
  async updateNote(actorUri: string, note: RemoteNoteInput): Promise<void> {
    if (note.authorUri !== actorUri) return;
    const found = await this.remote.statusByUri(note.uri);
    if (!found || found.authorUri !== actorUri) return;
    const row = await this.reader.findRow(found.id);
    if (row) await this.notes.applyEdit(note, row);
  }

  /**
   * A remote status deleted by its author goes here too, and is not taken again (not yet
   * arrived, it is kept out: RemoteNotes.deleted); an actor deleting itself takes its account
   * here with it; a Delete from anyone else changes nothing.
   */
  async delete(actorUri: string, objectUri: string): Promise<void> {
    if (objectUri === actorUri) {
      const gone = await this.remote.byUri(actorUri);
      if (gone) await this.gone.remove(gone.id);
      return;
    }
    const found = await this.remote.statusByUri(objectUri);
    if (found && found.authorUri !== actorUri) return;
    await this.notes.deleted(actorUri, objectUri);
    const row = found && (await this.reader.findRow(found.id));
    if (row) await this.removal.remove(row);
  }

  /**
   * A remote Note, by its author, stored when it concerns someone here (see RemoteNotes), or
   * when an accepted relay carried it (`deliveredBy`: who signed the delivery, asked only then).
   */
  async create(actorUri: string, note: RemoteNoteInput, deliveredBy?: DeliveredBy): Promise<void> {
    if (note.authorUri !== actorUri) return;
    await this.notes.store(note, { fetched: false, relayedBy: deliveredBy });
  }

  /** The local account a Follow (or a Block) names, exactly as its IRI spells it. */
  async followTarget(identifier: string): Promise<AccountRow | null> {
    const target = await this.actors.localAccount(identifier);
    return target && target.username === identifier ? target : null;
  }

  /**
   * A remote actor follows a local account: a follow (answered with Accept at once) or, when
   * locked, a follow request; refused with Reject when either blocks the other, nothing stored.
   */
  async follow(actor: RemoteActorInput, target: AccountRow): Promise<FollowOutcome | null> {
    const follower = await this.remote.upsert(actor);
    if (!follower) return null;
    let relationship;
    try {
      relationship = await this.follows.follow(follower.id, target.id, {});
    } catch (error) {
      // A refusal (blocked either way, 403; the account unavailable, 404): nothing is stored,
      // and the follower is told with Reject, as Mastodon's Follow does for a blocking or
      // unavailable target. A failure of the database is no refusal: thrown, so that Fedify
      // tries the Follow again rather than Reject a follow another task may have stored.
      if (!(error instanceof ApiError)) throw error;
      return { followerId: follower.id, answer: "Reject", kept: false };
    }
    if (relationship.following) return { followerId: follower.id, answer: "Accept", kept: true };
    return { followerId: follower.id, answer: null, kept: relationship.requested };
  }

  /**
   * A remote account blocks a local one, as Mastodon's ActivityPub::Activity::Block: follows
   * both ways end and the block is kept (the local account sees `blocked_by`, cannot follow it).
   */
  async block(actorUri: string, targetIdentifier: string): Promise<void> {
    const pair = await this.blockPair(actorUri, targetIdentifier);
    if (pair) await this.moderation.block(pair.remoteId, pair.localId);
  }

  /** Undo of a Block, by the actor who sent it. */
  async unblock(actorUri: string, targetIdentifier: string): Promise<void> {
    const pair = await this.blockPair(actorUri, targetIdentifier);
    if (pair) await this.moderation.unblock(pair.remoteId, pair.localId);
  }

  private async blockPair(actorUri: string, targetIdentifier: string): Promise<{ remoteId: number; localId: number } | null> {
    const target = await this.actors.localAccount(targetIdentifier);
    const blocker = await this.remote.byUri(actorUri);
    return target && blocker ? { remoteId: blocker.id, localId: target.id } : null;
  }

  /** Undo of a Follow, by the actor who sent it: the follow or the request goes. */
  async unfollow(actorUri: string, targetIdentifier: string): Promise<void> {
    const follower = await this.remote.byUri(actorUri);
    if (!follower) return;
    const target = await this.actors.localAccount(targetIdentifier);
    if (!target) return;
    await this.follows.removeFollow(follower.id, target.id);
    await this.follows.removeFollowRequests(follower.id, target.id);
  }

  /** A remote account accepts a local account's Follow: the request becomes a follow. */
  async accepted(actorUri: string, followerIdentifier: string): Promise<void> {
    const pair = await this.answered(actorUri, followerIdentifier);
    if (!pair) return;
    try {
      await this.follows.authorizeRequest(pair.remoteId, pair.localId);
    } catch {
      // No request waiting (answered twice, or withdrawn meanwhile): nothing to do.
    }
  }

  /** A remote account refuses (or removes) a local follower. */
  async rejected(actorUri: string, followerIdentifier: string): Promise<void> {
    const pair = await this.answered(actorUri, followerIdentifier);
    if (!pair) return;
    await this.follows.removeFollowRequests(pair.localId, pair.remoteId);
    await this.follows.removeFollow(pair.localId, pair.remoteId);
  }

  /** The local follower and the remote followee (the answer's actor) an Accept or Reject concerns. */
  private async answered(actorUri: string, followerIdentifier: string): Promise<{ localId: number; remoteId: number } | null> {
    const local = await this.actors.localAccount(followerIdentifier);
    const remote = await this.remote.byUri(actorUri);
    return local && remote ? { localId: local.id, remoteId: remote.id } : null;
  }
}
