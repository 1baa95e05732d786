import { EventBus } from "../../src/infra/events.ts";
import { StatusMedia } from "../../src/services/media/status-media.ts";
import { QuoteService } from "../../src/services/quotes/quotes.ts";
import { StatusActionService } from "../../src/services/statuses/actions.ts";
import { EditingService } from "../../src/services/statuses/editing.ts";
import { IdempotencyStore } from "../../src/services/statuses/idempotency.ts";
import { NewStatuses } from "../../src/services/statuses/new-status.ts";
import { PollService } from "../../src/services/statuses/polls.ts";
import { PostingService } from "../../src/services/statuses/posting.ts";
import { RemovalService } from "../../src/services/statuses/removal.ts";
import { ScheduledStatusService } from "../../src/services/statuses/scheduled.ts";
import type { AccountRow } from "../../src/db/schema.ts";
import type { RemoteStatusInput } from "../../src/services/statuses/remote-input.ts";
import type { PortArm } from "./port-arms.ts";

/**
 * The statuses family's services built on an arm's port (issue 31), with their own event bus
 * over it; the collaborators not yet converted come from the arm's SQLite services.
 */
export function statusesOnPort(arm: PortArm) {
  const { t, port } = arm;
  const s = t.services;
  const events = new EventBus(port);
  const rows = new NewStatuses(port);
  // Removal's collaborators on the port: what a status's removal writes lands in the arm's database.
  const statusMedia = new StatusMedia(port, t.clock);
  const quotes = new QuoteService(port, t.ids, t.clock, events, s.quotes.policy, s.reader, s.renderCache, t.config.publicUrl);
  const posting = new PostingService(port, t.ids, t.clock, t.config, s.accounts, s.moderation, s.reader, events, s.counters, s.statusMedia, rows, s.quotes, s.posting.localEmojis);
  return {
    events,
    posting,
    actions: new StatusActionService(port, t.ids, t.clock, s.reader, s.moderation, s.removal, events, rows),
    scheduled: new ScheduledStatusService(port, t.ids, t.clock, posting, s.wheel),
    keys: new IdempotencyStore(port, t.clock),
    editing: new EditingService(port, t.ids, t.clock, s.reader, posting, events, s.renderCache, { uploads: s.media, statuses: s.statusMedia }, rows, async () => null),
    polls: new PollService(port, t.ids, t.clock, s.reader, s.moderation, s.wheel, events),
    quotes,
    removal: new RemovalService(port, events, s.renderCache, statusMedia, quotes),
  };
}

/** A Note as the inbox hands it to publishRemote, written now by the arm's clock, with what a test changes. */
export function remoteNote(arm: PortArm, author: AccountRow, n: number, more: Partial<RemoteStatusInput> = {}): RemoteStatusInput {
  return {
    accountId: author.id,
    uri: `https://${author.domain}/users/${author.username}/statuses/${n}`,
    url: null,
    html: `<p>note ${n}</p>`,
    text: `note ${n}`,
    spoilerText: "",
    sensitive: false,
    tags: [],
    visibility: "public",
    language: null,
    createdAt: arm.t.clock.now(),
    inReplyToId: null,
    inReplyToUri: null,
    mentions: [],
    media: [],
    emojis: [],
    poll: null,
    ...more,
  };
}
