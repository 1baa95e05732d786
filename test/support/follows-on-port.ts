import { EventBus } from "../../src/infra/events.ts";
import { AccountDomainBlocks } from "../../src/services/accounts/domain-blocks.ts";
import { FollowerMoves } from "../../src/services/accounts/follower-moves.ts";
import { FollowService } from "../../src/services/accounts/follows.ts";
import { ModerationService } from "../../src/services/accounts/moderation.ts";
import type { PortArm } from "./port-arms.ts";

/** The follows family's services on a port arm, with an event bus of their own. */
export function followsOnPort(arm: PortArm) {
  const { port, t } = arm;
  const events = new EventBus(port);
  const follows = new FollowService(port, t.ids, t.clock, events);
  const domainBlocks = new AccountDomainBlocks(port, t.ids, t.clock, follows, events);
  const moderation = new ModerationService(port, t.ids, t.clock, follows, events, domainBlocks);
  const moves = new FollowerMoves(port, t.clock, follows, moderation);
  return { follows, domainBlocks, moderation, moves, events };
}
