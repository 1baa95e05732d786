import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/connection.ts";
import type { IdGenerator } from "../ids.ts";
import type { MediaStorage } from "../media/storage.ts";
import { AccountService } from "./accounts/accounts.ts";
import { FollowService } from "./accounts/follows.ts";
import { MarkerService } from "./accounts/markers.ts";
import { ProfileImageService } from "./accounts/profile-images.ts";
import { EventBus } from "./events.ts";
import type { InstanceKeys } from "./instance.ts";
import { ApplicationService } from "./oauth/applications.ts";
import { GrantService } from "./oauth/grants.ts";
import { TokenService } from "./oauth/tokens.ts";
import { WebSessionService } from "./oauth/web-sessions.ts";
import { TicketSigner } from "../auth/tickets.ts";

export interface ServiceDeps {
  config: Config;
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  storage: MediaStorage;
  keys: InstanceKeys;
}

export function createServices(deps: ServiceDeps) {
  const { db, clock, ids, config, storage } = deps;
  const events = new EventBus();
  const tokens = new TokenService(db, ids, clock);
  const applications = new ApplicationService(db, ids, clock);
  const profileImages = new ProfileImageService(storage);
  const accounts = new AccountService(db, ids, clock, config.publicUrl, profileImages);
  const grants = new GrantService(db, ids, clock, applications, tokens, accounts);
  const follows = new FollowService(db, ids, clock, events);
  const markers = new MarkerService(db, clock);
  const webSessions = new WebSessionService(db, ids, clock);
  const tickets = new TicketSigner(deps.keys.secret, clock);
  return { events, tokens, applications, accounts, grants, follows, markers, webSessions, tickets };
}

export type Services = ReturnType<typeof createServices>;
