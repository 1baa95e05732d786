import type { InboxContext, InboxListenerSetters, KvStore } from "@fedify/fedify";
import { Accept, Add, Announce, Block, Create, Delete, Follow, Like, Move, QuoteRequest, Reject, Remove, Undo, Update, type Activity } from "@fedify/fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab-runtime";
import type { DeliveredBy } from "../../services/remote/relays.ts";
import type { FederationServices } from "../port.ts";
import { onAccept } from "./accept.ts";
import { onAnnounce } from "./announce.ts";
import { onBlock } from "./block.ts";
import { onCreate } from "./create.ts";
import { onDelete } from "./delete.ts";
import { onFeatured } from "./featured.ts";
import { onFollow } from "./follow.ts";
import { onLike } from "./like.ts";
import { onMove } from "./move.ts";
import { onQuoteRequest } from "./quote-request.ts";
import { onReject } from "./reject.ts";
import { onUndo } from "./undo.ts";
import { onUpdate } from "./update.ts";

/** What the inbox listeners need: the rules they hand activities to, and Fedify's side. */
export interface Inbound {
  services: Pick<FederationServices, "federationInbox" | "remoteInteractions" | "accountMoves" | "remoteQuotes" | "relays" | "remoteAccounts">;
  /** Where a remote Follow's IRI is kept, for the answer to it (and a later Reject) to quote. */
  kv: KvStore;
  /** Reads what an actor document only links to (its images), signed by the instance actor. */
  loader: DocumentLoader;
  /** The instance actor's identifier (a LitePub relay follows it back). */
  instanceIdentifier: string;
  /** Who signed the delivery being handled (delivered-by.ts), checked when asked. */
  deliveredBy: () => DeliveredBy;
}

/** A listener for one activity type. */
export type Listener<T extends Activity> = (ctx: InboxContext<void>, activity: T) => Promise<void>;

/**
 * One listener per activity type (one file each): each reads its activity with Fedify, checks
 * what only the activity can tell (who sends it, whose object it names), and hands plain
 * inputs to the services, where the rules are. Fedify has verified the signature, and that
 * the key is the actor's, before any of them runs.
 */
export function listen(inbox: InboxListenerSetters<void>, deps: Inbound): InboxListenerSetters<void> {
  /**
   * An account staff suspended here is not heard, except taking things back or changing its
   * profile (Mastodon's ProcessCollectionService: Delete, Reject, Undo and Update are allowed
   * while suspended).
   */
  const heard = <T extends Activity>(listener: Listener<T>): Listener<T> => async (ctx, activity) => {
    const actor = activity.actorId ? await deps.services.remoteAccounts.byUri(activity.actorId.href) : undefined;
    if (actor?.suspendedAt != null) return;
    await listener(ctx, activity);
  };
  return inbox
    .on(Follow, heard(onFollow(deps)))
    .on(Create, heard(onCreate(deps)))
    .on(Update, onUpdate(deps))
    .on(Delete, onDelete(deps))
    .on(Accept, heard(onAccept(deps)))
    .on(Reject, onReject(deps))
    .on(Block, heard(onBlock(deps)))
    .on(Like, heard(onLike(deps)))
    .on(Announce, heard(onAnnounce(deps)))
    .on(Add, heard(onFeatured(deps, "Add")))
    .on(Remove, heard(onFeatured(deps, "Remove")))
    .on(Move, heard(onMove(deps)))
    .on(QuoteRequest, heard(onQuoteRequest(deps)))
    .on(Undo, onUndo(deps));
}
