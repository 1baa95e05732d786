import { asc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { MediaRow, PollRow, StatusEditRow, StatusRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { forbidden, notFound, unprocessable, validationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { normalizeLanguage } from "../../text/languages.ts";
import { countableLength } from "../../text/format.ts";
import type { EventBus } from "../../infra/events.ts";
import type { MediaService } from "../media/media.ts";
import type { StatusMedia } from "../media/status-media.ts";
import type { PostingService } from "./posting.ts";
import { pollErrors, type PollInput } from "./poll-input.ts";
import type { RenderCache } from "./render-cache.ts";
import type { NewStatuses } from "./new-status.ts";
import type { StatusReader } from "./reader.ts";
import { mentionRef } from "../../models/mentions.ts";
import { approvalJson, isQuotePolicy } from "../quotes/policy.ts";
import type { CustomEmoji } from "../../models/emojis.ts";

/** PUT /api/v1/statuses/:id: like Mastodon's, a whole new version (what is left out is gone). */
export interface EditInput {
  text?: string;
  spoilerText?: string;
  sensitive?: boolean;
  language?: string;
  mediaIds?: string[];
  mediaAttributes?: { id: string; description?: string; focus?: string }[];
  poll?: PollInput;
  /** Who may quote it from now on (quote_approval_policy); kept as it is when absent. */
  quotePolicy?: string;
}

const MAX_RAW_STATUS_LENGTH = 20 * LIMITS.statusCharacters;

/**
 * UpdateStatusService: edits the author's own status in one transaction, keeping every
 * version (the original is recorded on the first edit). An edit that changes nothing
 * records nothing. Then `status.updated`: accounts that boosted the status are told
 * (`update` notifications), newly mentioned ones get their mention, streams `status.update`.
 */
export class EditingService {
  /** What a local edit runs each time, prepared once (docs/architecture.md, the database port). */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private reader: StatusReader,
    private posting: PostingService,
    private events: EventBus,
    private cache: RenderCache,
    private media: { uploads: MediaService; statuses: StatusMedia },
    private rows: NewStatuses,
    /** The status a quote post quotes, if it is stored (QuoteService.quotedStatusOf). */
    private quotedStatusOf: (statusId: number) => Promise<StatusRow | null>,
  ) {
    const t = port.tables;
    const orm = port.orm;
    const statusId = sql.placeholder("statusId");
    const columns = (table: typeof t.statusEdits) => Object.fromEntries(Object.keys(getTableColumns(table)).map((k) => [k, sql.placeholder(k)]));
    this.q = {
      pollOf: orm.select().from(t.polls).where(eq(t.polls.statusId, statusId)).prepare(),
      edited: orm.select({ id: t.statusEdits.id }).from(t.statusEdits).where(eq(t.statusEdits.statusId, statusId)).limit(1).prepare(),
      record: orm.insert(t.statusEdits).values(columns(t.statusEdits) as never).prepare(),
      media: orm
        .select({ id: t.mediaAttachments.id, description: t.mediaAttachments.description })
        .from(t.mediaAttachments)
        .where(eq(t.mediaAttachments.statusId, statusId))
        .orderBy(asc(t.mediaAttachments.position))
        .prepare(),
      untag: orm.delete(t.statusTags).where(eq(t.statusTags.statusId, statusId)).prepare(),
      homeRecipients: orm.select({ id: t.homeFeed.accountId }).from(t.homeFeed).where(eq(t.homeFeed.statusId, statusId)).prepare(),
      listIds: orm.select({ id: t.listFeed.listId }).from(t.listFeed).where(eq(t.listFeed.statusId, statusId)).prepare(),
      quoteApproval: orm.update(t.statuses).set({ quoteApproval: sql.placeholder("quoteApproval") as unknown as string }).where(eq(t.statuses.id, statusId)).prepare(),
    };
  }

  async edit(accountId: number, statusId: number | null, input: EditInput): Promise<StatusRow> {
    const row = statusId === null ? undefined : await this.reader.findRow(statusId);
    if (!row || row.accountId !== accountId || row.reblogOfId !== null) throw notFound();

    // Mastodon's order: media, then the poll, then the text.
    const mediaIds = input.mediaIds ?? [];
    if (mediaIds.length > LIMITS.mediaAttachments || (mediaIds.length > 0 && input.poll)) throw unprocessable(`Cannot attach more than ${LIMITS.mediaAttachments} files`);
    const nextMedia = mediaIds.length > 0 ? await this.media.statuses.forEdit(accountId, row.id, mediaIds) : [];
    if (input.mediaAttributes?.length) this.media.uploads.checkAttributes(input.mediaAttributes);
    if (input.poll) {
      const errors = pollErrors(input.poll);
      if (errors.length > 0) throw validationFailed(...errors);
    }

    let text = (input.text ?? "").trim();
    let spoilerText = (input.spoilerText ?? "").trim();
    if (text === "" && spoilerText !== "") {
      text = spoilerText;
      spoilerText = "";
    }
    const sensitive = input.sensitive === true || spoilerText !== "";
    if (input.quotePolicy !== undefined && input.quotePolicy !== "" && !isQuotePolicy(input.quotePolicy)) throw unprocessable("Record invalid");
    const quoteApproval = input.quotePolicy ? approvalJson(input.quotePolicy as never, row.visibility) : row.quoteApproval;
    // An unknown or missing language keeps the status's own, as Mastodon's locale cascade does.
    const language = (input.language ? normalizeLanguage(input.language) : null) ?? row.language;
    const errors: string[] = [];
    if (text === "" && nextMedia.length === 0) errors.push("Text can't be blank");
    if (spoilerText.length + text.length > MAX_RAW_STATUS_LENGTH || countableLength(spoilerText + text) > LIMITS.statusCharacters) {
      errors.push(`Text character limit of ${LIMITS.statusCharacters} exceeded`);
    }
    if (errors.length > 0) throw validationFailed(...errors);

    const before = await this.snapshot(row);
    const [poll] = await this.q.pollOf.execute({ statusId: row.id });
    // A poll in an edit always moves its deadline, so it always counts as a change.
    const pollChanged = input.poll !== undefined || poll !== undefined;
    const mediaChanged = JSON.stringify(nextMedia.map((m) => m.id)) !== before.mediaIds || (input.mediaAttributes?.length ?? 0) > 0;
    const changed = text !== row.text || spoilerText !== row.spoilerText || sensitive !== row.sensitive || language !== row.language || pollChanged || mediaChanged;
    // Only who may quote it changed: no new version, as PUT .../interaction_policy.
    if (!changed && quoteApproval !== row.quoteApproval) return this.writeQuoteApproval(row, quoteApproval as string);
    if (!changed) return row;

    const now = this.clock.now();
    const formatted = await this.posting.format(accountId, text);
    const { mentioned, tagNames } = formatted;
    // A quote post keeps its fallback link to what it quotes (the quote itself cannot change).
    const quoted = await this.quotedStatusOf(row.id);
    const html = quoted ? await this.posting.quoteFallback(quoted, text, formatted.html) : formatted.html;
    const updated: StatusRow = {
      ...row,
      text,
      contentHtml: html,
      spoilerText,
      sensitive,
      language,
      mentions: JSON.stringify(mentioned.map(mentionRef)),
      tags: JSON.stringify(tagNames),
      emojis: JSON.stringify(await this.posting.localEmojis([spoilerText, text, ...(input.poll?.options ?? [])])),
      hasMedia: nextMedia.length > 0,
      hasPoll: input.poll !== undefined,
      quoteApproval,
      editedAt: now,
    };
    let newPoll: { id: number; expiresAt: number } | null = null;

    await this.port.transaction(async () => {
      const [edited] = await this.q.edited.execute({ statusId: row.id });
      if (!edited) await this.insertVersion(row.id, { ...before, createdAt: row.createdAt });
      await this.media.statuses.reattach(row.id, nextMedia, input.mediaAttributes ?? []);
      newPoll = await this.replacePoll(row, poll, input.poll, now);
      const { statuses } = this.port.tables;
      await this.port.orm
        .update(statuses)
        .set({ text, contentHtml: html, spoilerText, sensitive, language, mentions: updated.mentions, tags: updated.tags, emojis: updated.emojis, hasMedia: updated.hasMedia, hasPoll: updated.hasPoll, quoteApproval, editedAt: now })
        .where(eq(statuses.id, row.id));
      // No mention row goes: one the new text no longer makes stays as a silent mention (the
      // row's list no longer names it), as Mastodon's ProcessMentionsService keeps it, since
      // withdrawing access from someone already notified would confuse; so does the quoted
      // author's of a private quote (Quote#ensure_quoted_access).
      await this.q.untag.execute({ statusId: row.id });
      await this.posting.insertMentionsAndTags(row.id, mentioned, tagNames, now);
      await this.insertVersion(row.id, { ...(await this.snapshot(updated)), createdAt: now });
    });

    this.cache.invalidateStatus(row.id);
    if (newPoll) await this.events.emit({ type: "poll.opened", pollId: (newPoll as { id: number }).id, statusId: row.id, expiresAt: (newPoll as { expiresAt: number }).expiresAt });
    const homeRecipients = (await this.q.homeRecipients.execute({ statusId: row.id })).map((r) => r.id);
    const listIds = (await this.q.listIds.execute({ statusId: row.id })).map((r) => r.id);
    await this.events.emit({ type: "status.updated", status: updated, previous: row, homeRecipients, listIds });
    return updated;
  }

  /**
   * Who may quote the author's own status, changed without an edit (PUT .../interaction_policy,
   * or an edit that changes nothing else): no new version; `quote_policy.changed` tells the world.
   */
  async changeQuotePolicy(accountId: number, statusId: number | null, policy: string | undefined): Promise<StatusRow> {
    const row = await this.reader.visibleRow(statusId, accountId);
    if (row.accountId !== accountId) throw forbidden();
    if (policy === undefined || policy === "") return row;
    if (!isQuotePolicy(policy)) throw unprocessable("Record invalid");
    const approval = approvalJson(policy, row.visibility);
    return approval === row.quoteApproval ? row : this.writeQuoteApproval(row, approval);
  }

  /**
   * A remote status's quote policy as its server's latest Update states it (interactionPolicy.canQuote,
   * as statuses.quote_approval keeps it; null when it states none), as Mastodon's
   * ProcessStatusUpdateService takes it with every Update.
   */
  async applyRemoteQuotePolicy(row: StatusRow, quoteApproval: string | null): Promise<StatusRow> {
    return quoteApproval === row.quoteApproval ? row : this.writeQuoteApproval(row, quoteApproval);
  }

  /** A new quote policy, no new version; `quote_policy.changed` tells the world. */
  private async writeQuoteApproval(row: StatusRow, quoteApproval: string | null): Promise<StatusRow> {
    const updated = { ...row, quoteApproval };
    await this.port.transaction(async () => {
      await this.q.quoteApproval.execute({ quoteApproval, statusId: row.id });
      await this.events.emit({ type: "quote_policy.changed", status: updated });
    });
    this.cache.invalidateStatus(row.id);
    return updated;
  }

  /**
   * An edit of a remote status, as its server sent it (Update): the same history, feeds and
   * events as a local edit. Its HTML is the remote server's, sanitized by the caller.
   * Its mentions stay those it arrived with. Not yet: media and polls of remote statuses.
   */
  async applyRemoteEdit(row: StatusRow, input: { html: string; text: string; spoilerText: string; sensitive: boolean; tags: string[]; emojis: CustomEmoji[]; editedAt: number }): Promise<StatusRow> {
    const sensitive = input.sensitive || input.spoilerText !== "";
    const emojis = JSON.stringify(input.emojis);
    if (input.html === row.contentHtml && input.spoilerText === row.spoilerText && sensitive === row.sensitive && emojis === row.emojis) return row;
    const now = Math.min(input.editedAt, this.clock.now());
    const updated: StatusRow = { ...row, text: input.text, contentHtml: input.html, spoilerText: input.spoilerText, sensitive, tags: JSON.stringify(input.tags), emojis, editedAt: now };
    const before = await this.snapshot(row);
    await this.port.transaction(async () => {
      const [edited] = await this.q.edited.execute({ statusId: row.id });
      if (!edited) await this.insertVersion(row.id, { ...before, createdAt: row.createdAt });
      await this.port.run("UPDATE statuses SET text = ?, content_html = ?, spoiler_text = ?, sensitive = ?, tags = ?, emojis = ?, edited_at = ? WHERE id = ?", [
        updated.text,
        updated.contentHtml,
        updated.spoilerText,
        sensitive,
        updated.tags,
        emojis,
        now,
        row.id,
      ]);
      await this.q.untag.execute({ statusId: row.id });
      await this.posting.insertMentionsAndTags(row.id, [], input.tags, now);
      await this.insertVersion(row.id, { ...(await this.snapshot(updated)), createdAt: now });
    });
    this.cache.invalidateStatus(row.id);
    const homeRecipients = (await this.q.homeRecipients.execute({ statusId: row.id })).map((r) => r.id);
    const listIds = (await this.q.listIds.execute({ statusId: row.id })).map((r) => r.id);
    await this.events.emit({ type: "status.updated", status: updated, previous: row, homeRecipients, listIds });
    return updated;
  }

  /** Every version, oldest first; one that was never edited has just its own. */
  async history(row: StatusRow): Promise<(Omit<StatusEditRow, "id" | "statusId"> & { media: MediaRow[] })[]> {
    const { statusEdits, mediaAttachments } = this.port.tables;
    const edits = await this.port.orm.select().from(statusEdits).where(eq(statusEdits.statusId, row.id)).orderBy(asc(statusEdits.id));
    const versions = edits.length > 0 ? edits : [{ ...(await this.snapshot(row)), createdAt: row.editedAt ?? row.createdAt }];
    const allIds = [...new Set(versions.flatMap((v) => JSON.parse(v.mediaIds) as number[]))];
    const media = new Map((allIds.length ? await this.port.orm.select().from(mediaAttachments).where(inArray(mediaAttachments.id, allIds)) : []).map((m) => [m.id, m]));
    return versions.map((v) => {
      const descriptions = JSON.parse(v.mediaDescriptions) as (string | null)[];
      const list = (JSON.parse(v.mediaIds) as number[]).flatMap((id, i) => {
        const m = media.get(id);
        return m ? [{ ...m, description: descriptions[i] ?? null }] : [];
      });
      return { ...v, media: list };
    });
  }

  /** The status as it is now, as a version (the first of its history). */
  private async snapshot(row: StatusRow) {
    const media = row.hasMedia ? await this.q.media.execute({ statusId: row.id }) : [];
    const poll = row.hasPoll ? (await this.q.pollOf.execute({ statusId: row.id }))[0] : undefined;
    return version(row, media, poll);
  }

  private async insertVersion(statusId: number, version: Omit<StatusEditRow, "id" | "statusId">) {
    await this.q.record.execute({ ...version, id: this.ids.next(), statusId });
  }

  /** Mastodon resets the votes when the options or `multiple` change. */
  private async replacePoll(row: StatusRow, poll: PollRow | undefined, input: PollInput | undefined, now: number) {
    const { polls, pollVotes } = this.port.tables;
    const orm = this.port.orm;
    if (!input) {
      if (poll) await orm.delete(polls).where(eq(polls.id, poll.id));
      return null;
    }
    // The deadline counts from the edit, as Mastodon sets expires_in again.
    const expiresAt = now + (input.expiresIn as number) * 1000;
    const values = { options: JSON.stringify(input.options), multiple: !!input.multiple, hideTotals: !!input.hideTotals, expiresAt, endedAt: null };
    if (!poll) {
      const id = this.ids.next();
      await this.rows.insertPoll({ id, statusId: row.id, accountId: row.accountId, options: input.options, multiple: !!input.multiple, hideTotals: !!input.hideTotals, expiresAt, createdAt: now });
      return { id, expiresAt };
    }
    const reset = JSON.stringify(input.options) !== poll.options || !!input.multiple !== poll.multiple;
    if (reset) await orm.delete(pollVotes).where(eq(pollVotes.pollId, poll.id));
    await orm
      .update(polls)
      .set({ ...values, ...(reset ? { tallies: JSON.stringify(input.options.map(() => 0)), votesCount: 0, votersCount: 0 } : {}) })
      .where(eq(polls.id, poll.id));
    return { id: poll.id, expiresAt };
  }
}

/** A version of a status as status_edits keeps it, from its row, media and poll. */
function version(row: StatusRow, media: { id: number; description: string | null }[], poll: { options: string } | undefined) {
  return {
    accountId: row.accountId,
    text: row.text,
    contentHtml: row.contentHtml,
    spoilerText: row.spoilerText,
    sensitive: row.sensitive,
    mediaIds: JSON.stringify(media.map((m) => m.id)),
    mediaDescriptions: JSON.stringify(media.map((m) => m.description)),
    pollOptions: poll?.options ?? null,
  };
}
