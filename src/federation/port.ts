import type { AccountService } from "../services/accounts/accounts.ts";
import type { FollowService } from "../services/accounts/follows.ts";
import type { CustomEmojiService } from "../services/custom-emojis.ts";
import type { EventBus } from "../infra/events.ts";
import type { FederationActors } from "../services/remote/local-actors.ts";
import type { FederationInbox } from "../services/remote/inbox.ts";
import type { GoneAccounts } from "../services/remote/gone-accounts.ts";
import type { RemoteInteractions } from "../services/remote/interactions.ts";
import type { AccountMoves } from "../services/remote/moves.ts";
import type { RemoteQuotes } from "../services/remote/quotes.ts";
import type { QuoteService } from "../services/quotes/quotes.ts";
import type { RemoteAccounts } from "../services/remote/accounts.ts";
import type { Relays } from "../services/remote/relays.ts";
import type { StatusMedia } from "../services/media/status-media.ts";
import type { ReportService } from "../services/reports.ts";
import type { PollService } from "../services/statuses/polls.ts";
import type { StatusReader } from "../services/statuses/reader.ts";
import type { TimerWheel } from "../infra/timer-wheel.ts";

/**
 * What federation asks of the services, and nothing more: the reads behind actor documents,
 * collections and outgoing activities, the rules incoming activities are handed to, and the
 * events outgoing ones follow. createServices' result is one; federation sees no other part.
 */
export interface FederationServices {
  events: Pick<EventBus, "afterCommit">;
  wheel: Pick<TimerWheel, "handle" | "schedule">;
  accounts: Pick<AccountService, "get" | "getMany">;
  reader: Pick<StatusReader, "findRow" | "visible">;
  statusMedia: Pick<StatusMedia, "forStatuses">;
  polls: Pick<PollService, "pollOf">;
  customEmojis: Pick<CustomEmojiService, "find" | "entity">;
  follows: Pick<FollowService, "relationship" | "removeFollow">;
  reports: Pick<ReportService, "find">;
  federationActors: Pick<FederationActors, "localAccount" | "ownStatus" | "outbox" | "outboxCount" | "followers" | "remoteFollowers" | "localFollowed" | "hidesFrom" | "pinned" | "replies" | "conversation" | "deletedLocally">;
  federationInbox: FederationInbox;
  remoteAccounts: Pick<RemoteAccounts, "byUri" | "upsert" | "idle" | "stop">;
  remoteInteractions: Pick<RemoteInteractions, "like" | "unlike" | "announce" | "unannounce" | "feature">;
  goneAccounts: Pick<GoneAccounts, "remove">;
  accountMoves: Pick<AccountMoves, "move">;
  quotes: Pick<QuoteService, "forStatus" | "find">;
  remoteQuotes: Pick<RemoteQuotes, "request" | "accepted" | "rejected" | "revoked">;
  relays: Pick<Relays, "answered" | "isRelayActor" | "accepted">;
}
