import type { Context, KvStore } from "@fedify/fedify";
import type { Urls } from "../../presenters/account.ts";
import type { EventBus } from "../../infra/events.ts";
import type { FederationServices } from "../port.ts";
import type { NoteLookups } from "../vocab.ts";
import { interactions } from "./interactions.ts";
import { moves } from "./moves.ts";
import { profiles } from "./profiles.ts";
import { quotes } from "./quotes.ts";
import { relationships } from "./relationships.ts";
import { relaySubscriptions } from "./relays.ts";
import { reports } from "./reports.ts";
import type { Sender } from "./sender.ts";
import { statuses } from "./statuses.ts";

/** What building and sending activities needs: the services it reads, and Fedify's side. */
export interface Outbound {
  services: Pick<FederationServices, "accounts" | "federationActors" | "follows" | "reports" | "reader" | "relays">;
  urls: Urls;
  /** A context to build and send with (outside any request). */
  context: () => Context<void>;
  lookups: NoteLookups;
  sender: Sender;
  /** Where the IRIs of Follows and Blocks are kept for their Undo (and answers) to quote. */
  kv: KvStore;
  /** The instance actor, which sends what no account should sign (Flag). */
  instanceIdentifier: string;
}

/**
 * What this server tells others once a write committed, by the event it follows: statuses
 * (Create, Update, Delete, votes), relationships (Follow, Accept, Reject, Block, Undo),
 * profiles (Update of the actor), moves (Move), favourites, boosts and pins (Like, Announce, Add, Remove,
 * Undo), forwarded reports (Flag), quotes (QuoteRequest, its Accept or Reject, a stamp's Delete), subscriptions to relays (Follow, Undo). Deliveries go through Fedify's queue (retries, restarts).
 */
export function subscribe(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  relationships(events, out);
  statuses(events, out);
  profiles(events, out);
  moves(events, out);
  interactions(events, out);
  reports(events, out);
  quotes(events, out);
  relaySubscriptions(events, out);
}
