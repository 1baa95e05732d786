/** An import as its report shows it (GET /api/v1/imports, the CLI's progress). */
export interface ImportView {
  id: number;
  type: string;
  overwrite: boolean;
  /** queued (an overwrite's removals under way), running, finished */
  state: string;
  createdAt: number;
  finishedAt: number | null;
  total: number;
  /** Entries worked off, whatever became of them. */
  processed: number;
  /** Entries that took: followed, blocked, muted, listed, bookmarked. */
  imported: number;
  /** Follows asked for and not answered yet (following and lists). */
  awaiting: number;
  failed: number;
  /** Failed entries by reason: unknown_account, server_down, refused, not_found, invalid. */
  failures: Record<string, number>;
  /** The first failed entries, with what they were and why they failed. */
  failedEntries: { line: number; entry: string; reason: string; detail: string }[];
}

/** What an account has to export (GoToSocial's accountExportStats, with two more lists). */
export interface ExportStats {
  followersCount: number;
  followingCount: number;
  statusesCount: number;
  listsCount: number;
  blocksCount: number;
  mutesCount: number;
  domainBlocksCount: number;
  bookmarksCount: number;
}
