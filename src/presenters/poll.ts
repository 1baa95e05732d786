import type { PollView } from "../models/views.ts";

/** REST::PollSerializer (4.3). `voted` and `own_votes` only for a signed-in viewer. */
export function serializePoll(view: PollView, viewerId: number | null) {
  const p = view.row;
  const titles = JSON.parse(p.options) as string[];
  const tallies = JSON.parse(p.tallies) as number[];
  // Totals hidden from everyone but the author until the poll ends.
  const hide = p.hideTotals && !view.expired && viewerId !== p.accountId;
  const base = {
    id: String(p.id),
    expires_at: new Date(p.expiresAt).toISOString(),
    expired: view.expired,
    multiple: p.multiple,
    votes_count: p.votesCount,
    voters_count: p.votersCount,
    options: titles.map((title, i) => ({ title, votes_count: hide ? null : (tallies[i] ?? 0) })),
    emojis: [] as unknown[],
  };
  if (view.ownVotes === null) return base;
  return { ...base, voted: viewerId === p.accountId || view.ownVotes.length > 0, own_votes: view.ownVotes };
}
