import { availableParallelism } from "node:os";
import { basename } from "node:path";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { AccountRow } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { ID_EPOCH, idAt, idFloorForTime } from "../../ids.ts";
import { LIMITS } from "../../limits.ts";
import { log } from "../../log.ts";
import { VIDEO_SIZE_LIMIT } from "../../media-files/video.ts";
import { htmlToText } from "../../text/html-to-text.ts";
import { sanitizeRemoteHtml } from "../../text/sanitize.ts";
import type { MediaService } from "../media/media.ts";
import type { PostingService } from "../statuses/posting.ts";
import { openArchive, type ArchiveFiles } from "./files.ts";
import { readOutboxItem, type ArchivedMedia, type ArchivedPost } from "./notes.ts";
import { ArchiveFormatError, collect } from "./streams.ts";

export interface ImportOptions {
  /** Replies to other people's posts, kept as posts of their own (the reply link dropped); skipped otherwise. */
  withReplies?: boolean;
  /** Told as the import goes (the CLI draws its progress bar from it). */
  progress?: (p: ImportProgress) => void;
}

export interface ImportProgress {
  phase: "media" | "posts";
  done: number;
  total: number;
}

export interface ImportSummary {
  imported: number;
  /** Posts an earlier import brought in (or that were deleted since): left as they are. */
  alreadyImported: number;
  skipped: { boosts: number; private: number; direct: number; replies: number; unreadable: number };
  /** Imported replies linked to their imported parent. */
  threads: number;
  polls: number;
  media: { imported: number; missing: number; failed: number };
}

/** Attachments processed at a time: one per core, at most four (each holds its file in memory). */
const MEDIA_AT_ONCE = Math.min(4, Math.max(1, availableParallelism()));
/** Posts written per transaction: one commit for many, and readers never wait long. */
const BATCH = 500;
/** The largest outbox.json read (a 10,000-post one is some 30 MB). */
const MAX_OUTBOX_BYTES = 512 * 1024 * 1024;
const MAX_ACTOR_BYTES = 1024 * 1024;

/**
 * Ids of posts written before 2020, the epoch of Rookery's ids (src/ids.ts), which has no
 * room below it: they are spread in date order over the ids of 2020's first minute, from
 * 2000 on. Their created_at is their true date; only their order among ids is kept.
 */
const EARLY_FROM = Date.UTC(2000, 0, 1);
const EARLY_IDS = idFloorForTime(ID_EPOCH + 60_000);

/**
 * Brings the public and unlisted posts of an account's archive from another server (Mastodon's
 * layout: outbox.json, media_attachments/...) in as the account's own, dated as they were
 * written, with their media (processed as uploads are), polls (ended) and the threads whose
 * both ends are in the archive. They are counted and shown on the profile, in the outbox and
 * in tag timelines by their dates, but reach no home feed, notify nobody and are not sent to
 * other servers (`status.imported`). Each keeps its address in the archive (status_origins),
 * so importing the same archive again adds nothing.
 *
 * Not imported: boosts (other people's posts), private and direct posts (written for the
 * followers and the people of that time and server: shown here, they would reach an audience
 * they were not written for; their conversations stay behind), and replies to other people's
 * posts, unless asked for (`withReplies`: then kept as posts of their own).
 */
export class ArchiveImport {
  constructor(
    private db: DatabasePort,
    private clock: Clock,
    private posting: Pick<PostingService, "publishImported">,
    private media: Pick<MediaService, "upload">,
  ) {}

  private origin(accountId: number, uri: string) {
    return this.db.get<{ status_id: number | null }>("SELECT status_id FROM status_origins WHERE account_id = ? AND uri = ?", [accountId, uri]);
  }

  private async taken(id: number): Promise<boolean> {
    return (await this.db.get("SELECT 1 AS one FROM statuses WHERE id = ?", [id])) !== undefined;
  }

  async importArchive(account: AccountRow, path: string, options: ImportOptions = {}): Promise<ImportSummary> {
    if (account.domain !== null) throw new Error("only local accounts import archives");
    const archive = await openArchive(path);
    try {
      return await this.run(account, archive, options);
    } finally {
      await archive.close();
    }
  }

  private async run(account: AccountRow, archive: ArchiveFiles, options: ImportOptions): Promise<ImportSummary> {
    const summary: ImportSummary = { imported: 0, alreadyImported: 0, skipped: { boosts: 0, private: 0, direct: 0, replies: 0, unreadable: 0 }, threads: 0, polls: 0, media: { imported: 0, missing: 0, failed: 0 } };
    const json = new Map<string, unknown>();
    await archive.scan(
      (name) => name === "outbox.json" || name === "actor.json",
      async (name, _size, body) => {
        const bytes = await collect(body, name === "outbox.json" ? MAX_OUTBOX_BYTES : MAX_ACTOR_BYTES, name);
        try {
          json.set(name, JSON.parse(new TextDecoder().decode(bytes)));
        } catch {
          throw new ArchiveFormatError(`${name} is not JSON`);
        }
      },
    );
    const outbox = json.get("outbox.json") as { orderedItems?: unknown } | undefined;
    if (!outbox || typeof outbox !== "object") throw new ArchiveFormatError("outbox.json is missing: not an account archive in Mastodon's layout");
    if (!Array.isArray(outbox.orderedItems)) throw new ArchiveFormatError("outbox.json has no orderedItems");
    const actor = (json.get("actor.json") ?? {}) as { id?: unknown; followers?: unknown };
    const actorId = typeof actor.id === "string" ? actor.id : null;
    const followers = typeof actor.followers === "string" ? actor.followers : null;

    const posts: ArchivedPost[] = [];
    for (const item of outbox.orderedItems) {
      const read = readOutboxItem(item, followers);
      if (read.kind === "boost") summary.skipped.boosts++;
      else if (read.kind === "unreadable") summary.skipped.unreadable++;
      else posts.push(read.post);
    }
    const own = new Set(posts.map((p) => p.uri));
    const ownUri = (uri: string) => own.has(uri) || (actorId !== null && uri.startsWith(`${actorId}/`));
    const wanted: ArchivedPost[] = [];
    for (const post of posts) {
      if (post.visibility === "private" || post.visibility === "direct") summary.skipped[post.visibility]++;
      else if (await this.origin(account.id, post.uri)) summary.alreadyImported++;
      else if (post.inReplyTo !== null && !ownUri(post.inReplyTo) && !options.withReplies) summary.skipped.replies++;
      else wanted.push(post);
    }
    // Oldest first: a parent is written before its replies, and ids follow the dates.
    wanted.sort((a, b) => a.published - b.published);

    const uploads = await this.uploadMedia(account, archive, wanted, summary, options);
    await this.writePosts(account, wanted, uploads, summary, options);
    return summary;
  }

  /** The attachments the posts to import name, processed as uploads are; path -> upload id. */
  private async uploadMedia(account: AccountRow, archive: ArchiveFiles, posts: ArchivedPost[], summary: ImportSummary, options: ImportOptions): Promise<Map<string, number>> {
    const needed = new Map<string, ArchivedMedia>();
    for (const post of posts) for (const m of post.media) if (!needed.has(m.path)) needed.set(m.path, m);
    const uploads = new Map<string, number>();
    let done = 0;
    if (needed.size > 0) options.progress?.({ phase: "media", done, total: needed.size });
    const seen = new Set<string>();
    // The archive is read in order, one file at a time; the processing (sharp, ffmpeg) of a few
    // runs at once, one per core, while the next file is read.
    const running = new Set<Promise<void>>();
    const processOne = async (name: string, bytes: Uint8Array) => {
      const m = needed.get(name)!;
      try {
        const file = new File([bytes as Uint8Array<ArrayBuffer>], basename(name), { type: m.mediaType ?? "application/octet-stream" });
        const description = m.description === null ? undefined : [...m.description].slice(0, LIMITS.descriptionLimit).join("");
        const row = await this.media.upload(account.id, { file, description, focus: m.focus ?? undefined }, { background: false });
        uploads.set(name, row.id);
        summary.media.imported++;
      } catch (e) {
        summary.media.failed++;
        log("warn", "archive import: an attachment was not taken", { path: name, error: e instanceof ApiError ? e.message : String(e).split("\n")[0] });
      }
      options.progress?.({ phase: "media", done: ++done, total: needed.size });
    };
    await archive.scan(
      (name) => needed.has(name) && !seen.has(name),
      async (name, size, body) => {
        seen.add(name);
        if (size > VIDEO_SIZE_LIMIT) {
          summary.media.failed++;
          log("warn", "archive import: an attachment was not taken", { path: name, error: "File is too large" });
          options.progress?.({ phase: "media", done: ++done, total: needed.size });
          return;
        }
        const bytes = await collect(body, VIDEO_SIZE_LIMIT, name);
        const job: Promise<void> = processOne(name, bytes).finally(() => running.delete(job));
        running.add(job);
        if (running.size >= MEDIA_AT_ONCE) await Promise.race(running);
      },
    );
    await Promise.all(running);
    summary.media.missing = needed.size - seen.size;
    return uploads;
  }

  private async writePosts(account: AccountRow, posts: ArchivedPost[], uploads: Map<string, number>, summary: ImportSummary, options: ImportOptions) {
    const now = this.clock.now();
    const written = new Map<string, number>();
    const parentOf = async (uri: string | null) => (uri === null ? null : (written.get(uri) ?? (await this.origin(account.id, uri))?.status_id ?? null));
    options.progress?.({ phase: "posts", done: 0, total: posts.length });
    for (let start = 0; start < posts.length; start += BATCH) {
      // Inside, only the port is awaited.
      await this.db.transaction(async () => {
        for (const post of posts.slice(start, start + BATCH)) {
          const html = sanitizeRemoteHtml(post.html);
          const createdAt = Math.min(post.published, now);
          const parent = await parentOf(post.inReplyTo);
          const poll = post.poll && { ...post.poll, expiresAt: Math.min(post.poll.expiresAt, now), closedAt: Math.min(post.poll.closedAt ?? now, now) };
          const row = await this.posting.publishImported({
            id: await this.freeId(createdAt),
            accountId: account.id,
            html,
            text: htmlToText(html),
            spoilerText: htmlToText(post.summary),
            sensitive: post.sensitive,
            visibility: post.visibility as "public" | "unlisted",
            language: post.language,
            createdAt,
            inReplyToId: parent,
            tags: post.tags,
            mediaIds: post.media.flatMap((m) => uploads.get(m.path) ?? []),
            poll,
          });
          await this.db.orm.insert(this.db.tables.statusOrigins).values({ accountId: account.id, uri: post.uri, statusId: row.id, importedAt: now });
          written.set(post.uri, row.id);
          summary.imported++;
          if (parent !== null) summary.threads++;
          if (poll) summary.polls++;
        }
      });
      options.progress?.({ phase: "posts", done: Math.min(start + BATCH, posts.length), total: posts.length });
    }
  }

  /** An id of `ms` no status has (see EARLY_FROM for the years before Rookery's epoch). */
  private async freeId(ms: number): Promise<number> {
    if (ms >= ID_EPOCH) {
      for (;;) {
        const id = idAt(ms);
        if (!(await this.taken(id))) return id;
      }
    }
    let id = 1 + Math.floor(((Math.max(ms, EARLY_FROM) - EARLY_FROM) / (ID_EPOCH - EARLY_FROM)) * EARLY_IDS);
    while (await this.taken(id)) id++;
    return id;
  }
}
