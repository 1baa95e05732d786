import { Accept, Follow } from "@fedify/fedify/vocab";
import { answerFollow, followKey } from "../outbound/relationships.ts";
import { actorInput } from "./actor.ts";
import type { Inbound, Listener } from "./index.ts";
import { localActorOf } from "./refs.ts";

/**
 * A remote actor follows a local account: a follow, accepted at once, or, when the account is
 * locked, a follow request; refused with Reject when either blocks the other. The Follow's IRI
 * is kept: the answer to a request quotes it, and so does the Reject sent when the account
 * later blocks its follower (GoToSocial finds the follow to end by that IRI).
 */
export const onFollow =
  ({ services, kv, loader, instanceIdentifier }: Inbound): Listener<Follow> =>
  async (ctx, follow) => {
    if (follow.id === null || follow.actorId === null || follow.objectId === null) return;
    const identifier = localActorOf(ctx, follow.objectId);
    if (identifier === instanceIdentifier) return followedBack(ctx, follow, services, identifier);
    const target = identifier === null ? null : await services.federationInbox.followTarget(identifier);
    if (!target) return;
    const actor = await follow.getActor(ctx);
    if (!actor || actor.id?.href !== follow.actorId.href) return;
    const input = actorInput(actor, loader);
    const outcome = input && (await services.federationInbox.follow(input, target));
    if (!outcome) return;
    if (outcome.answer) await answerFollow(ctx, outcome.answer, target, outcome.followerId, actor, follow);
    if (outcome.kept) await kv.set(followKey(outcome.followerId, target.id), follow.id.href);
  };

/**
 * A LitePub relay the instance actor follows follows it back (activityrelay and Pleroma's
 * relays do, to hear from it): accepted. The instance actor is followed by no one else.
 */
async function followedBack(ctx: Parameters<Listener<Follow>>[0], follow: Follow, services: Inbound["services"], identifier: string): Promise<void> {
  if (!(await services.relays.isRelayActor(follow.actorId!.href))) return;
  const relay = await follow.getActor(ctx);
  if (!relay || relay.id?.href !== follow.actorId!.href) return;
  const actor = ctx.getActorUri(identifier);
  // The Follow quoted by its IRIs, as Mastodon quotes one (not with the relay's actor read into it).
  const quoted = new Follow({ id: follow.id, actor: follow.actorId, object: follow.objectId });
  const accept = new Accept({ id: new URL(`${actor.href}#accepts/relays/${crypto.randomUUID()}`), actor, object: quoted });
  await ctx.sendActivity({ identifier }, relay, accept);
}
