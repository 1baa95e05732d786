import { and, asc, eq, gt, isNotNull, isNull } from "drizzle-orm";
import { extname } from "node:path";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { log } from "../../log.ts";
import type { MediaStorage } from "../../media-files/storage.ts";
import type { AccountService } from "../accounts/accounts.ts";
import type { StatusMedia } from "../media/status-media.ts";
import type { PollService } from "../statuses/polls.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { ArchiveLookups, ArchiveRenderer } from "./ports.ts";
import { utf8 } from "./streams.ts";
import { tarGzStream } from "./tar.ts";
import { zipStream, type ArchiveEntry } from "./zip.ts";

export type ArchiveFormat = "zip" | "tar.gz";

/** Rows read at a time: the archive of 10,000 statuses is never in memory at once. */
const BATCH = 200;

/**
 * An account's archive in Mastodon's layout (BackupService): outbox.json (every status as its
 * Create, every boost as its Announce, in the ActivityPub shape federation sends, attachments
 * named by their paths in the archive), the media files at those paths, likes.json and
 * bookmarks.json (the IRIs of what it favourited and bookmarked), the avatar and header, and
 * actor.json pointing at them. Written as a stream, each file as it is read from the database.
 */
export class ArchiveExport {
  constructor(
    private db: DatabasePort,
    private clock: Clock,
    private storage: MediaStorage,
    private accounts: Pick<AccountService, "get">,
    private reader: Pick<StatusReader, "findRow">,
    private statusMedia: Pick<StatusMedia, "forStatuses">,
    private polls: Pick<PollService, "pollOf">,
    private renderer: ArchiveRenderer,
  ) {}

  /** The archive's file name, as Mastodon names it (archive-<time>-<random>.zip). */
  fileName(format: ArchiveFormat): string {
    const stamp = new Date(this.clock.now()).toISOString().replace(/\D/g, "").slice(0, 14);
    return `archive-${stamp}-${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex")}.${format}`;
  }

  /**
   * The archive of a local account, as chunks of a zip or a tar.gz. One at a time per account:
   * a large one reads the whole account, and a second while it runs is refused (429).
   */
  write(account: AccountRow, format: ArchiveFormat): AsyncGenerator<Uint8Array> {
    if (this.writing.has(account.id)) throw new ApiError(429, "An archive of this account is being written already; try again once it is done");
    this.writing.add(account.id);
    const entries = this.entries(account);
    const chunks = format === "zip" ? zipStream(entries) : tarGzStream(entries);
    const writing = this.writing;
    return (async function* () {
      try {
        yield* chunks;
      } finally {
        writing.delete(account.id);
      }
    })();
  }

  private writing = new Set<number>();

  private lookups(): ArchiveLookups {
    return {
      account: (id) => this.accounts.get(id),
      status: (id) => this.reader.findRow(id),
      media: async (statusId) => (await this.statusMedia.forStatuses([statusId])).get(statusId) ?? [],
      poll: (statusId) => this.polls.pollOf(statusId),
    };
  }

  private async *entries(account: AccountRow): AsyncGenerator<ArchiveEntry> {
    const date = new Date(this.clock.now());
    yield { name: "outbox.json", body: () => utf8(this.outbox(account)), date };
    for await (const path of this.mediaPaths(account.id)) {
      const file = await this.file(path);
      if (file) yield { name: path, ...file, date };
    }
    yield { name: "likes.json", body: () => utf8(this.collection("likes.json", this.db.tables.favourites, account.id)), date };
    yield { name: "bookmarks.json", body: () => utf8(this.collection("bookmarks.json", this.db.tables.bookmarks, account.id)), date };
    const actor = await this.renderer.actor(account);
    for (const [key, path, base] of [["icon", account.avatarFile, "avatar"], ["image", account.headerFile, "header"]] as const) {
      const file = path ? await this.file(path) : null;
      if (!path || !file) {
        delete actor[key];
        continue;
      }
      const name = `${base}${extname(path)}`;
      (actor[key] as Record<string, unknown>).url = name;
      yield { name, ...file, date };
    }
    Object.assign(actor, { outbox: "outbox.json", likes: "likes.json", bookmarks: "bookmarks.json" });
    yield { name: "actor.json", body: () => utf8([JSON.stringify(actor)]), date };
  }

  /** A stored file's size and bytes, streamed from the disk or the bucket; null (and a warning) when it is gone. */
  private async file(path: string): Promise<{ size: number; body: () => AsyncIterable<Uint8Array> } | null> {
    try {
      const file = await this.storage.open(path);
      if (!file) throw new Error("not in the media storage");
      return file;
    } catch (e) {
      log("warn", "archive: a file is missing", { path, error: String(e).split("\n")[0] });
      return null;
    }
  }

  /** The OrderedCollection of every status and boost, oldest first, with Mastodon's outbox.json id. */
  private async *outbox(account: AccountRow): AsyncGenerator<string> {
    const lookups = this.lookups();
    const mediaPrefix = this.storage.urlPrefix();
    let head: string | null = null;
    const { statuses } = this.db.tables;
    const total = (await this.db.get<{ n: number }>("SELECT count(*) AS n FROM statuses WHERE account_id = ?", [account.id]))?.n ?? 0;
    let after = 0;
    for (;;) {
      const rows: StatusRow[] = await this.db.orm.select().from(statuses).where(and(eq(statuses.accountId, account.id), gt(statuses.id, after))).orderBy(asc(statuses.id)).limit(BATCH);
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.id;
      for (const status of rows) {
        const item = await this.renderer.activity(account, status, lookups);
        const context = item["@context"];
        delete item["@context"];
        // Attachments are named by their path in the archive (Mastodon drops its /system/ prefix).
        const object = item.object as { attachment?: unknown } | undefined;
        const attachments = object && typeof object === "object" ? object.attachment : undefined;
        for (const a of Array.isArray(attachments) ? attachments : attachments ? [attachments] : []) {
          const at = a as { url?: unknown };
          if (typeof at.url === "string" && at.url.startsWith(mediaPrefix)) at.url = at.url.slice(mediaPrefix.length);
        }
        if (head === null) {
          head = "";
          yield `{"@context":${JSON.stringify(context ?? "https://www.w3.org/ns/activitystreams")},"id":"outbox.json","type":"OrderedCollection","totalItems":${total},"orderedItems":[`;
        } else {
          yield ",";
        }
        yield JSON.stringify(item);
      }
    }
    yield head === null ? `{"@context":"https://www.w3.org/ns/activitystreams","id":"outbox.json","type":"OrderedCollection","totalItems":0,"orderedItems":[]}` : "]}";
  }

  /** The paths of the account's media on its statuses, a batch of rows at a time. */
  private async *mediaPaths(accountId: number): AsyncGenerator<string> {
    const { mediaAttachments } = this.db.tables;
    let after = 0;
    for (;;) {
      const rows = await this.db.orm
        .select({ id: mediaAttachments.id, file: mediaAttachments.file })
        .from(mediaAttachments)
        .where(and(eq(mediaAttachments.accountId, accountId), isNotNull(mediaAttachments.statusId), isNull(mediaAttachments.remoteUrl), gt(mediaAttachments.id, after)))
        .orderBy(asc(mediaAttachments.id))
        .limit(BATCH);
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.id;
      for (const row of rows) if (row.file) yield row.file;
    }
  }

  /** likes.json or bookmarks.json: the IRIs of the statuses, as Mastodon lists them (no totalItems). */
  private async *collection(id: string, table: DatabasePort["tables"]["favourites"] | DatabasePort["tables"]["bookmarks"], accountId: number): AsyncGenerator<string> {
    const { statuses } = this.db.tables;
    yield `{"@context":"https://www.w3.org/ns/activitystreams","id":${JSON.stringify(id)},"type":"OrderedCollection","orderedItems":[`;
    let after = 0;
    let first = true;
    for (;;) {
      const rows = await this.db.orm
        .select({ id: table.id, status: statuses })
        .from(table)
        .innerJoin(statuses, eq(statuses.id, table.statusId))
        .where(and(eq(table.accountId, accountId), gt(table.id, after)))
        .orderBy(asc(table.id))
        .limit(BATCH);
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.id;
      for (const { status } of rows) {
        const author = await this.accounts.get(status.accountId);
        if (!author) continue;
        yield `${first ? "" : ","}${JSON.stringify(this.renderer.statusUri(author, status))}`;
        first = false;
      }
    }
    yield "]}";
  }
}
