import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { StatusRow, UserRow } from "../../db/schema.ts";
import { idAt, parseId, type IdGenerator } from "../../ids.ts";
import { ApiError, unprocessable, validationFailed } from "../../errors.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { LIMITS } from "../../limits.ts";
import { normalizeLanguage } from "../../text/languages.ts";
import { countableLength, formatText, normalizeTag } from "../../text/format.ts";
import type { AccountService } from "../accounts/accounts.ts";
import { movedAccountRefusal } from "../accounts/moving.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { EventBus } from "../../infra/events.ts";
import type { Counters } from "./counters.ts";
import type { StatusReader } from "./reader.ts";
import { VISIBILITIES, type Visibility } from "./visibility.ts";
import { mentionRef } from "../../models/mentions.ts";
import type { CustomEmoji } from "../../models/emojis.ts";
import type { ImportedStatusInput, RemoteStatusInput } from "./remote-input.ts";
import { newStatusRow, type NewPollFields, type NewStatuses } from "./new-status.ts";
import { pollErrors } from "./poll-input.ts";
import type { MediaAttacher, PreparedStatus, QuoteAttacher, StatusInput } from "./posting-input.ts";
import { approvalJson, isQuotePolicy } from "../quotes/policy.ts";
import { QUOTED_NOT_MENTIONED } from "../quotes/quotes.ts";

export type { MediaAttacher, PreparedStatus, QuoteAttacher, StatusInput } from "./posting-input.ts";

export const REPLY_NOT_FOUND = "The post you are trying to reply to does not appear to exist.";

/** 500 graphemes can take many UTF-16 units (emoji sequences, combining marks), but not more than this. */
const MAX_RAW_STATUS_LENGTH = 20 * LIMITS.statusCharacters;
/** Draws of a remote status's id before its insert gives up (each meets a taken one 1 in 20 at worst). */
const MAX_ID_DRAWS = 5;

/**
 * PostStatusService: prepares (validates) and publishes statuses. Publishing is one
 * transaction: the row, its mentions, tags, poll and media, then the `status.created` event,
 * whose consequences (counters, home feeds, notifications, lists...) are written within it
 * (src/services/consequences.ts).
 */
export class PostingService {
  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private config: Config,
    private accounts: AccountService,
    private moderation: ModerationService,
    private reader: StatusReader,
    private events: EventBus,
    private counters: Counters,
    private media: MediaAttacher,
    private rows: NewStatuses,
    private quotes: QuoteAttacher,
    /** This server's custom emojis used in some texts (CustomEmojiService.inTexts), kept on a local status when it is written (and edited). */
    readonly localEmojis: (texts: string[]) => Promise<CustomEmoji[]>,
  ) {}

  /** The remote path's statements: raw, portable, cached by the driver (a builder's execute costs more CPU on this path than the statement). */
  private readonly sql = {
    threadTopWaitsFor: `
        WITH RECURSIVE up(id, depth) AS (
          SELECT id, 0 FROM statuses WHERE id = ?
          UNION ALL
          SELECT s.in_reply_to_id, up.depth + 1 FROM up JOIN statuses s ON s.id = up.id WHERE s.in_reply_to_id IS NOT NULL AND up.depth < 256
        )
        SELECT 1 AS one FROM up JOIN statuses s ON s.id = up.id WHERE s.in_reply_to_uri = ? LIMIT 1`,
    orphansOf: "SELECT id, visibility FROM statuses WHERE in_reply_to_uri = ? AND in_reply_to_id IS NULL",
    adopt: "UPDATE statuses SET in_reply_to_id = ?, in_reply_to_account_id = ?, in_reply_to_uri = NULL WHERE id = ?",
    // Asked for every remote status.
    idByUri: "SELECT id FROM statuses WHERE uri = ?",
    idTaken: "SELECT id FROM statuses WHERE id = ?",
    remoteMedia:
      "INSERT INTO media_attachments (id, account_id, status_id, position, type, processing, meta, description, blurhash, created_at, remote_url) VALUES (?, ?, ?, ?, ?, 'complete', ?, ?, ?, ?, ?)",
    backfilled: "INSERT INTO backfilled_statuses (status_id) VALUES (?)",
  };

  /** Validates a new status in Mastodon's order. Throws the error Mastodon would answer with. */
  async prepare(accountId: number, applicationId: number | null, input: StatusInput): Promise<PreparedStatus> {
    // A local account that moved away posts no more (Mastodon: it is no longer functional).
    const [author, userRow] = await Promise.all([this.accounts.get(accountId), this.accounts.getUser(accountId)]);
    if (author?.movedToAccountId != null) throw movedAccountRefusal();
    const user = userRow as UserRow;
    let inReplyTo: StatusRow | null = null;
    if (input.inReplyToId !== undefined && input.inReplyToId !== "") {
      try {
        inReplyTo = await this.reader.visibleRow(parseId(input.inReplyToId), accountId);
      } catch {
        throw new ApiError(404, REPLY_NOT_FOUND);
      }
      // Replying to a boost replies to what it boosted.
      if (inReplyTo.reblogOfId !== null) inReplyTo = await this.reader.visibleRow(inReplyTo.reblogOfId, accountId);
    }
    const quoted = input.quotedStatusId !== undefined && input.quotedStatusId !== "" ? await this.quotes.quotable(input.quotedStatusId, accountId) : null;
    // An unknown policy is refused as Mastodon's InteractionPoliciesConcern refuses it (a bare RecordInvalid).
    const quotePolicy = input.quotePolicy === undefined || input.quotePolicy === "" ? user.defaultQuotePolicy : input.quotePolicy;
    if (!isQuotePolicy(quotePolicy)) throw unprocessable("Record invalid");

    let mediaIds: number[] = [];
    if (input.mediaIds && input.mediaIds.length > 0) {
      if (input.mediaIds.length > LIMITS.mediaAttachments || input.poll) throw unprocessable(`Cannot attach more than ${LIMITS.mediaAttachments} files`);
      mediaIds = await this.media.resolve(accountId, input.mediaIds);
    }

    let text = (input.text ?? "").trim();
    let spoilerText = (input.spoilerText ?? "").trim();
    const sensitive = (input.sensitive ?? user.defaultSensitive) || spoilerText !== "";
    if (text === "" && spoilerText !== "") {
      text = spoilerText;
      spoilerText = "";
    }
    let visibility = input.visibility ?? user.defaultPrivacy;
    // A private post is quoted only privately (Mastodon's PostStatusService narrows a public or unlisted quote).
    if (quoted?.visibility === "private" && (visibility === "public" || visibility === "unlisted")) visibility = "private";

    const errors: string[] = [];
    if (!(VISIBILITIES as readonly string[]).includes(visibility)) errors.push("Visibility is not included in the list");
    let language: string | null = null;
    if (input.language !== undefined && input.language.trim() !== "") {
      language = normalizeLanguage(input.language);
      if (language === null) errors.push("Language is not included in the list");
    } else {
      language = normalizeLanguage(user.defaultLanguage ?? "") ?? normalizeLanguage(user.locale ?? "") ?? "en";
    }
    if (text === "" && mediaIds.length === 0) errors.push("Text can't be blank");
    // The raw cap comes first: counting graphemes of a megabyte is work nobody asked for.
    const raw = spoilerText.length + text.length;
    if (raw > MAX_RAW_STATUS_LENGTH || countableLength(spoilerText + text) > LIMITS.statusCharacters) {
      errors.push(`Text character limit of ${LIMITS.statusCharacters} exceeded`);
    }
    if (input.poll) errors.push(...pollErrors(input.poll));
    if (errors.length > 0) throw validationFailed(...errors);
    // A private mention quotes only someone it mentions (or its author's own post).
    if (quoted && visibility === "direct" && quoted.accountId !== accountId && !(await this.format(accountId, text)).mentioned.some((m) => m.id === quoted.accountId)) {
      throw validationFailed(QUOTED_NOT_MENTIONED);
    }

    return {
      accountId,
      applicationId,
      text,
      spoilerText,
      sensitive,
      visibility: visibility as Visibility,
      language,
      inReplyToId: inReplyTo?.id ?? null,
      mediaIds,
      poll: input.poll
        ? { options: input.poll.options, expiresIn: input.poll.expiresIn as number, multiple: !!input.poll.multiple, hideTotals: !!input.poll.hideTotals }
        : null,
      quotedStatusId: quoted?.id ?? null,
      quoteApproval: approvalJson(quotePolicy, visibility),
    };
  }

  /** Writes a prepared status (now: a scheduled one is dated when it is published, as in Mastodon). */
  async publish(prepared: PreparedStatus): Promise<StatusRow> {
    const now = this.clock.now();
    const id = this.ids.next();
    const parent = prepared.inReplyToId !== null ? ((await this.reader.findRow(prepared.inReplyToId)) ?? null) : null;
    // Checked by prepare(), which a scheduled post goes through again when its time comes.
    const quoted = prepared.quotedStatusId !== null ? ((await this.reader.findRow(prepared.quotedStatusId)) ?? null) : null;
    const formatted = await this.format(prepared.accountId, prepared.text);
    const { mentioned, tagNames } = formatted;
    const html = quoted ? await this.quoteFallback(quoted, prepared.text, formatted.html) : formatted.html;

    const row = newStatusRow({
      id,
      accountId: prepared.accountId,
      applicationId: prepared.applicationId,
      text: prepared.text,
      contentHtml: html,
      spoilerText: prepared.spoilerText,
      sensitive: prepared.sensitive,
      visibility: prepared.visibility,
      language: prepared.language,
      parent,
      mentions: JSON.stringify(mentioned.map(mentionRef)),
      tags: JSON.stringify(tagNames),
      emojis: JSON.stringify(await this.localEmojis([prepared.spoilerText, prepared.text, ...(prepared.poll?.options ?? [])])),
      hasMedia: prepared.mediaIds.length > 0,
      hasPoll: prepared.poll !== null,
      createdAt: now,
      quoteApproval: prepared.quoteApproval,
    });
    const poll = prepared.poll && { options: prepared.poll.options, multiple: prepared.poll.multiple, hideTotals: prepared.poll.hideTotals, expiresAt: now + prepared.poll.expiresIn * 1000 };
    await this.insert(row, mentioned, tagNames, poll, async () => {
      if (prepared.mediaIds.length > 0) await this.media.attach(id, prepared.mediaIds);
      if (quoted) await this.quotes.attach(row, quoted);
    });
    return row;
  }

  /** A quote post's HTML with Mastodon's fallback paragraph linking what it quotes (for edits too). */
  async quoteFallback(quoted: StatusRow, text: string, html: string): Promise<string> {
    const author = await this.accounts.get(quoted.accountId);
    return this.quotes.fallbackHtml(quoted, author?.username ?? "", text, html);
  }

  /**
   * A status received from a remote server, into the same tables, counters, feeds,
   * notifications and events as a local one; null when that IRI is already stored. Its
   * mentions (local accounts, and remote ones already stored) come from the activity's tags,
   * checked by the inbox; the reply, when its parent is stored here, joins that thread.
   * Its HTML is the remote server's, sanitized as Mastodon sanitizes it.
   * Not yet: media, polls, custom emojis.
   */
  async publishRemote(input: RemoteStatusInput): Promise<StatusRow | null> {
    if (await this.port.get(this.sql.idByUri, [input.uri])) return null;
    const tagNames = input.tags;
    // Dated as its server says, but never in the future (it would pin itself to the top of timelines).
    const now = this.clock.now();
    const createdAt = Math.min(input.createdAt, now);
    // Its id tells that date too (Mastodon's Snowflake.id_at), so it sorts where it was written.
    const id = createdAt < now ? await this.freeIdAt(createdAt) : this.ids.next();
    let parent = input.inReplyToId !== null ? ((await this.reader.findRow(input.inReplyToId)) ?? null) : null;
    // A thread that loops (its top waits for this very status as its parent) is cut here.
    if (parent && (await this.port.get(this.sql.threadTopWaitsFor, [parent.id, input.uri]))) parent = null;
    let row = newStatusRow({
      id,
      accountId: input.accountId,
      text: input.text,
      contentHtml: input.html,
      spoilerText: input.spoilerText,
      sensitive: input.sensitive || input.spoilerText !== "",
      visibility: input.visibility,
      language: input.language,
      parent,
      // A parent not stored here yet: kept to fetch the thread, and to link it when it comes.
      inReplyToUri: parent ? null : input.inReplyToUri,
      mentions: JSON.stringify(input.mentions),
      tags: JSON.stringify(tagNames),
      emojis: JSON.stringify(input.emojis),
      hasMedia: input.media.length > 0,
      hasPoll: input.poll !== null,
      createdAt,
      uri: input.uri,
      url: input.url,
      quoteApproval: input.quoteApproval ?? null,
    });
    const poll = pollAsCounted(input.poll);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.insertRemote(row, input, tagNames, poll);
        return row;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // The same Note stored meanwhile by another task (its delivery while a search fetched it,
        // on PostgreSQL where nothing serialises them): that one stands, as the check above says.
        if (await this.port.get(this.sql.idByUri, [input.uri])) return null;
        // Its id, drawn at random within its millisecond, taken meanwhile by another status of
        // that millisecond stored at once (a thread's replies fetched four at a time, all dated
        // alike: 200 draws of 4,096 meet about five times): drawn again.
        if (createdAt >= now || attempt === MAX_ID_DRAWS) throw error;
        row = { ...row, id: await this.freeIdAt(createdAt) };
      }
    }
  }

  private insertRemote(row: StatusRow, input: RemoteStatusInput, tagNames: string[], poll: ReturnType<typeof pollAsCounted>): Promise<void> {
    const id = row.id;
    const createdAt = row.createdAt;
    return this.insert(row, input.mentions, tagNames, poll, async () => {
      let position = 0;
      for (const m of input.media) {
        await this.port.run(this.sql.remoteMedia, [this.ids.next(), input.accountId, id, position++, m.type, JSON.stringify(m.meta), m.description, m.blurhash, createdAt, m.url]);
      }
      // Replies that arrived before it (a thread fetched upwards) now answer it.
      for (const [childId, visibility] of (await this.port.values(this.sql.orphansOf, [input.uri])) as [number, string][]) {
        await this.port.run(this.sql.adopt, [id, input.accountId, childId]);
        await this.counters.replyLinked(id, childId, visibility);
      }
      if (input.backfill) await this.port.run(this.sql.backfilled, [id]);
    }, input.backfill ? "backfill" : "status.created");
  }

  /**
   * A post of the account's own, from its archive of another server (ArchiveImport): dated and
   * given its id as it was written, its HTML sanitized by the caller, its media processed here
   * already, its poll ended. `status.imported`, not `status.created`: it is counted, and goes to
   * no feed, no notification and no other server (it is no new post).
   */
  async publishImported(input: ImportedStatusInput): Promise<StatusRow> {
    const parent = input.inReplyToId !== null ? ((await this.reader.findRow(input.inReplyToId)) ?? null) : null;
    const row = newStatusRow({
      id: input.id,
      accountId: input.accountId,
      text: input.text,
      contentHtml: input.html,
      spoilerText: input.spoilerText,
      sensitive: input.sensitive || input.spoilerText !== "",
      visibility: input.visibility,
      language: input.language,
      parent,
      tags: JSON.stringify(input.tags),
      hasMedia: input.mediaIds.length > 0,
      hasPoll: input.poll !== null,
      createdAt: input.createdAt,
    });
    const poll = pollAsCounted(input.poll);
    await this.insert(row, [], input.tags, poll, () => this.media.attach(row.id, input.mediaIds), "status.imported");
    return row;
  }

  /**
   * The one way a new status is written, local or remote, in one transaction: its row, mentions,
   * tags and poll (its end told to the wheel while open), what the path adds (media, replies
   * waiting for it), then `status.created`, whose consequences are written within it.
   */
  private insert(
    row: StatusRow,
    mentioned: { id: number }[],
    tagNames: string[],
    poll: Omit<NewPollFields, "id" | "statusId" | "accountId" | "createdAt"> | null,
    more: () => void | Promise<void>,
    /** "backfill": status.created marked as fetched to fill a thread or a profile (RemoteStatusInput.backfill). */
    event: "status.created" | "status.imported" | "backfill" = "status.created",
  ): Promise<void> {
    return this.port.transaction(async () => {
      await this.rows.insert(row);
      await this.insertMentionsAndTags(row.id, mentioned, tagNames, row.createdAt);
      if (poll) {
        const added = await this.rows.insertPoll({ ...poll, id: this.ids.next(), statusId: row.id, accountId: row.accountId, createdAt: row.createdAt });
        if (added.endedAt === null) await this.events.emit({ type: "poll.opened", pollId: added.id, statusId: row.id, expiresAt: added.expiresAt });
      }
      await more();
      if (event === "status.imported") await this.events.emit({ type: event, status: row });
      else await this.events.emit({ type: "status.created", status: row, original: null, homeRecipients: [], ...(event === "backfill" ? { backfill: true } : {}) });
    });
  }

  /** `writeMentionsAndTags` through the port (portable: no json_each, no OR IGNORE). */
  async insertMentionsAndTags(statusId: number, mentioned: { id: number }[], tagNames: string[], now: number): Promise<void> {
    // Raw statements (cached by the driver): cheaper on the post's path than builders' execute.
    // DO NOTHING: an edit may name someone the status already mentioned silently.
    for (const m of mentioned) await this.port.run("INSERT INTO mentions (status_id, account_id) VALUES (?, ?) ON CONFLICT DO NOTHING", [statusId, m.id]);
    for (const name of tagNames) {
      await this.port.run("INSERT INTO tags (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [this.ids.next(), name, now]);
      await this.port.run("INSERT INTO status_tags (status_id, tag_id) SELECT ?, id FROM tags WHERE name = ? ON CONFLICT DO NOTHING", [statusId, name]);
    }
  }

  /** An id of the time `ms` that no status has (its random low bits rarely meet another's). */
  private async freeIdAt(ms: number): Promise<number> {
    for (;;) {
      const id = idAt(ms);
      if (!(await this.port.get(this.sql.idTaken, [id]))) return id;
    }
  }

  /** The author's text as HTML, the local accounts it mentions (less those the author blocks) and its tags. */
  async format(authorId: number, text: string) {
    const formatted = formatText(text, {
      tagBaseUrl: `${this.config.publicUrl}/tags/`,
      resolveMention: await this.accounts.mentionsIn([text], this.config.domain),
    });
    // Mentions of accounts the author blocks are dropped, as Mastodon's ProcessMentionsService does.
    const { blocking } = await this.moderation.blocked(authorId, formatted.mentions.map((m) => m.id));
    const mentioned = formatted.mentions.filter((m) => !blocking.has(m.id));
    const tagNames = [...new Set(formatted.tags.map(normalizeTag).filter((t) => t !== ""))];
    return { html: formatted.html, mentioned, tagNames };
  }
}

/** A poll as its server counted it (a remote one, or one of an archive): votes, and voters; a single-choice poll's voters are its votes. */
function pollAsCounted(p: { options: string[]; tallies: number[]; multiple: boolean; votersCount: number | null; expiresAt: number; closedAt: number | null } | null) {
  return p && { options: p.options, tallies: p.tallies, multiple: p.multiple, votersCount: p.votersCount ?? (p.multiple ? 0 : p.tallies.reduce((a, b) => a + b, 0)), expiresAt: p.expiresAt, endedAt: p.closedAt };
}
