import type { AppContext } from "../context.ts";
import type { StatusRow } from "../db/schema.ts";
import { statusJson, strangerStatusJson } from "../presenters/status-json.ts";
import { mentionedIds } from "../models/mentions.ts";

/**
 * The JSON of one status for everyone a publication reaches, rendered as few times as
 * possible. A status that was just posted looks the same to nearly every signed-in reader
 * (not favourited, boosted, bookmarked or pinned by them yet), so that reader's copy is
 * rendered once and shared. Only the few whose copy really differs get their own render:
 * its author (poll totals, `voted`), readers who muted its thread, readers with filters.
 * Boosts differ per reader (the original may be favourited) and are rendered per reader,
 * and so do edits: readers may have favourited, boosted or bookmarked the status by then.
 */
export class StatusPayloads {
  private anonymousJson: string | null | undefined;
  private sharedJson: string | undefined;
  private own = new Map<number, string | null>();
  private muters: Set<number> | undefined;
  private shunned: Set<number> | undefined;

  constructor(
    private ctx: AppContext,
    readonly row: StatusRow,
    /** False for an edit: the shared copy of a just-posted status does not apply. */
    private readonly fresh = true,
  ) {}

  /** As an anonymous reader (or an app-only token) sees it; null if it cannot be rendered. */
  async anonymous(): Promise<string | null> {
    if (this.anonymousJson === undefined) this.anonymousJson = await statusJson(this.ctx.services, this.ctx.urls, this.row, null);
    return this.anonymousJson;
  }

  /** As `viewerId` sees it; null if they may not see it at all. */
  async forViewer(viewerId: number): Promise<string | null> {
    if (this.fresh && this.row.reblogOfId === null && !(await this.differsFor(viewerId))) return this.shared();
    let json = this.own.get(viewerId);
    if (json === undefined) {
      const visible = await this.ctx.services.reader.visible([this.row], viewerId);
      json = visible.length ? await statusJson(this.ctx.services, this.ctx.urls, visible[0]!, viewerId) : null;
      this.own.set(viewerId, json);
    }
    return json;
  }

  /**
   * Readers that public and hashtag streams skip: they block or mute the author or someone
   * mentioned, or the author blocks them (Mastodon's streaming-side filter).
   */
  async shunnedBy(viewerId: number): Promise<boolean> {
    this.shunned ??= await this.ctx.services.moderation.shunning(this.row.accountId, [this.row.accountId, ...mentionedIds(this.row)]);
    return this.shunned.has(viewerId);
  }

  private async differsFor(viewerId: number): Promise<boolean> {
    if (viewerId === this.row.accountId) return true;
    if ((await this.ctx.services.filters.matcherFor(viewerId)) !== null) return true;
    this.muters ??= await this.ctx.services.statusActions.threadMuters(this.row.conversationId);
    return this.muters.has(viewerId);
  }

  /** A signed-in reader with no relation to the new status yet. */
  private async shared(): Promise<string> {
    this.sharedJson ??= await strangerStatusJson(this.ctx.services, this.ctx.urls, this.row);
    return this.sharedJson;
  }
}
