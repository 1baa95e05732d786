import type { ExportStats, ImportView } from "../models/imports.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * An import's progress and report (GET /api/v1/imports/:id): counts named as Mastodon's
 * BulkImport names them (total_items, processed_items, imported_items), and what failed, why.
 */
export function serializeImport(view: ImportView) {
  return {
    id: String(view.id),
    type: view.type,
    mode: view.overwrite ? "overwrite" : "merge",
    state: view.state,
    created_at: iso(view.createdAt),
    finished_at: iso(view.finishedAt),
    total_items: view.total,
    processed_items: view.processed,
    imported_items: view.imported,
    awaiting_items: view.awaiting,
    failed_items: view.failed,
    failures: view.failures,
    failed_entries: view.failedEntries,
  };
}

/** GoToSocial's accountExportStats (media_storage is a string there, not computed yet), with two more lists. */
export function serializeExportStats(stats: ExportStats) {
  return {
    media_storage: "",
    followers_count: stats.followersCount,
    following_count: stats.followingCount,
    statuses_count: stats.statusesCount,
    lists_count: stats.listsCount,
    blocks_count: stats.blocksCount,
    mutes_count: stats.mutesCount,
    domain_blocks_count: stats.domainBlocksCount,
    bookmarks_count: stats.bookmarksCount,
  };
}
