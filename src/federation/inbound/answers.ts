import type { InboxContext } from "@fedify/fedify";
import { Follow, type Accept, type Reject } from "@fedify/fedify/vocab";
import { localActorOf } from "./refs.ts";

/**
 * The local follower an Accept or Reject answers for: its embedded Follow is matched by its
 * actor and object (some servers do not echo the Follow's id), and only the followee, the
 * answer's actor, may answer.
 */
export async function answeredFollower(ctx: InboxContext<void>, answer: Accept | Reject): Promise<string | null> {
  if (answer.actorId === null) return null;
  // The embedded Follow is our own (another origin than the answer's), so Fedify would
  // refetch it by its IRI; its claims are safe to take as written: all they can do is settle
  // a request this server really sent to the very actor that answers.
  const follow = await answer.getObject({ ...ctx, crossOrigin: "trust" });
  if (!(follow instanceof Follow) || follow.actorId === null || follow.objectId?.href !== answer.actorId.href) return null;
  return localActorOf(ctx, follow.actorId);
}
