import type { GroupCommit } from "../../infra/group-commit.ts";
import type { ScheduledStatusRow, StatusRow } from "../../db/schema.ts";
import { notFound } from "../../errors.ts";
import { parseId } from "../../ids.ts";
import { IdempotencyStore, type Made } from "./idempotency.ts";
import type { IdempotencyGuard } from "./port-idempotency.ts";
import type { PostingService, StatusInput } from "./posting.ts";
import type { StatusReader } from "./reader.ts";
import type { ScheduledStatusService } from "./scheduled.ts";
import type { RemoteMentions } from "../remote/mentions.ts";

/** POST /api/v1/statuses as the route read it. */
export interface PostRequest {
  accountId: number;
  applicationId: number | null;
  fields: StatusInput;
  /** Present: the status is scheduled for then instead of published now. */
  scheduledAt?: string;
  /** The parameters as the client sent them: a scheduled status shows them back as its `params`. */
  sent: Readonly<Record<string, unknown>>;
  /** The Idempotency-Key header, as sent. */
  idempotencyKey?: string | null;
}

export type Posted = { kind: "status"; status: StatusRow } | { kind: "scheduled"; scheduled: ScheduledStatusRow };

/**
 * Mastodon's PostStatusService: the one way a status is posted. Picks scheduled or
 * immediate, honours the Idempotency-Key, and runs the whole post as one item of the group
 * commit (PostingService and ScheduledStatusService validate and emit the events inside it).
 */
export class StatusComposer {
  constructor(
    private writes: GroupCommit,
    private posting: PostingService,
    private scheduled: ScheduledStatusService,
    private reader: StatusReader,
    private keys: IdempotencyStore,
    private remoteMentions: RemoteMentions,
    /** Several processes on PostgreSQL: the guard they share (port-idempotency.ts), in place of `keys`' in-memory one. */
    private sharedKeys: IdempotencyGuard | null = null,
  ) {}

  /**
   * Posts (or schedules) a status. A repeat of a key within the hour answers what the first
   * request made, as it is now; if that is gone (deleted, or published from its schedule), 404.
   * As in Mastodon, the repeat is looked up as what it asks for: a key that scheduled a status
   * answers a repeat without scheduled_at with 404, and the other way round.
   */
  async post(request: PostRequest): Promise<Posted> {
    // Remote accounts it mentions are looked up first: formatting, in the write, cannot wait.
    await this.remoteMentions.resolve(request.fields.text);
    const made = await this.make(request);
    if (made.kind !== (request.scheduledAt ? "scheduled" : "status")) throw notFound();
    if (made.kind === "scheduled") return { kind: "scheduled", scheduled: await this.scheduled.find(request.accountId, made.id) };
    const status = await this.reader.findRow(made.id);
    if (!status || status.accountId !== request.accountId) throw notFound();
    return { kind: "status", status };
  }

  private make(request: PostRequest): Promise<Made> {
    const { accountId } = request;
    const write = async (): Promise<Made> =>
      request.scheduledAt
        ? {
            kind: "scheduled",
            id: (await this.scheduled.schedule(accountId, request.applicationId, request.fields, request.scheduledAt, scheduledParams(request))).id,
          }
        : { kind: "status", id: (await this.posting.publish(await this.posting.prepare(accountId, request.applicationId, request.fields))).id };
    const key = IdempotencyStore.normalize(request.idempotencyKey);
    if (key === null) return this.writes.run(write);
    // The post's own transaction nests in the guard's, which holds the key's lock and records it.
    if (this.sharedKeys) return this.sharedKeys.once(accountId, key, write);
    // The lookup and the record happen in the same transaction as the post itself.
    return this.keys.once(accountId, key, () => this.writes.run(async () => (await this.keys.recall(accountId, key)) ?? this.keys.remember(accountId, key, await write())));
  }
}

/**
 * The ScheduledStatus `params`: the client's own values (as sent, not cast), unset ones
 * null, in the order Mastodon answers a POST with.
 */
function scheduledParams(request: PostRequest): Record<string, unknown> {
  const sent = request.sent;
  const raw = (v: unknown) => (v === undefined || v instanceof File ? null : v);
  return {
    text: raw(sent.status),
    media_ids: raw(sent.media_ids),
    sensitive: raw(sent.sensitive),
    spoiler_text: raw(sent.spoiler_text),
    visibility: raw(sent.visibility),
    language: raw(sent.language),
    scheduled_at: null,
    poll: raw(sent.poll),
    idempotency: null,
    with_rate_limit: false,
    in_reply_to_id: parseId(request.fields.inReplyToId),
    application_id: request.applicationId,
  };
}
