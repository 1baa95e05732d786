import type { DatabasePort } from "../../db/port.ts";
import type { Relationship } from "../../models/views.ts";
import { hostOf } from "../../net/domains.ts";

/** What a relationship is made of, read in one statement (relationshipRows) or, synchronously, by the filters. */
export interface RelationshipFacts {
  /** The viewer's follows and follow requests of the targets, with their options. */
  outgoing: FollowFacts[];
  requested: FollowFacts[];
  followedBy: Set<number>;
  requestedBy: Set<number>;
  blocking: Set<number>;
  blockedBy: Set<number>;
  mutes: Map<number, { notifications: boolean }>;
  domainBlocking: Set<number>;
  endorsed: Set<number>;
}

export interface FollowFacts {
  targetAccountId: number;
  showReblogs: boolean;
  notify: boolean;
  languages: string | null;
}

/** Mastodon's Relationship for each of `targetIds` (in that order, duplicates kept). */
export function assembleRelationships(targetIds: number[], facts: RelationshipFacts): Relationship[] {
  return targetIds.map((id) => {
    const follow = facts.outgoing.find((f) => f.targetAccountId === id);
    const request = facts.requested.find((f) => f.targetAccountId === id);
    const source = follow ?? request;
    const mute = facts.mutes.get(id);
    return {
      id,
      following: !!follow,
      showingReblogs: source ? source.showReblogs : false,
      notifying: source ? source.notify : false,
      languages: source?.languages ? (JSON.parse(source.languages) as string[]) : null,
      followedBy: facts.followedBy.has(id),
      blocking: facts.blocking.has(id),
      blockedBy: facts.blockedBy.has(id),
      muting: !!mute,
      mutingNotifications: mute?.notifications ?? false,
      requested: !!request,
      requestedBy: facts.requestedBy.has(id),
      domainBlocking: facts.domainBlocking.has(id),
      endorsed: facts.endorsed.has(id),
    };
  });
}

const truthy = (v: unknown) => v === 1 || v === true;

/**
 * Everything a relationship needs, in one statement through the port: one round trip on
 * PostgreSQL, and no per-table builder. Each branch is an index lookup tagged by its kind `k`;
 * the domains the viewer blocks and the targets' domains come back for the `domain_blocking`
 * comparison, done here as the synchronous path's hostSql does it in SQL (not portable: instr).
 */
export async function relationshipFacts(port: DatabasePort, viewerId: number, ids: number[], now: number): Promise<RelationshipFacts> {
  const list = ids.map(() => "?").join(", ");
  const rows = await port.values(
    `SELECT 'f' AS k, target_account_id AS id, show_reblogs AS r, notify AS n, languages AS l FROM follows WHERE account_id = ? AND target_account_id IN (${list})
     UNION ALL SELECT 'q', target_account_id, show_reblogs, notify, languages FROM follow_requests WHERE account_id = ? AND target_account_id IN (${list})
     UNION ALL SELECT 'b', account_id, NULL, NULL, NULL FROM follows WHERE target_account_id = ? AND account_id IN (${list})
     UNION ALL SELECT 'p', account_id, NULL, NULL, NULL FROM follow_requests WHERE target_account_id = ? AND account_id IN (${list})
     UNION ALL SELECT 'e', target_account_id, NULL, NULL, NULL FROM account_pins WHERE account_id = ? AND target_account_id IN (${list})
     UNION ALL SELECT 'k', target_account_id, NULL, NULL, NULL FROM blocks WHERE account_id = ? AND target_account_id IN (${list})
     UNION ALL SELECT 'y', account_id, NULL, NULL, NULL FROM blocks WHERE target_account_id = ? AND account_id IN (${list})
     UNION ALL SELECT 'm', target_account_id, hide_notifications, NULL, NULL FROM mutes WHERE account_id = ? AND target_account_id IN (${list}) AND (expires_at IS NULL OR expires_at > ?)
     UNION ALL SELECT 'd', NULL, NULL, NULL, domain FROM account_domain_blocks WHERE account_id = ?
     UNION ALL SELECT 'a', id, NULL, NULL, domain FROM accounts WHERE id IN (${list}) AND domain IS NOT NULL`,
    [
      ...[viewerId, ...ids],
      ...[viewerId, ...ids],
      ...[viewerId, ...ids],
      ...[viewerId, ...ids],
      ...[viewerId, ...ids],
      ...[viewerId, ...ids],
      ...[viewerId, ...ids],
      ...[viewerId, ...ids, now],
      viewerId,
      ...ids,
    ],
  );
  const facts: RelationshipFacts = {
    outgoing: [],
    requested: [],
    followedBy: new Set(),
    requestedBy: new Set(),
    blocking: new Set(),
    blockedBy: new Set(),
    mutes: new Map(),
    domainBlocking: new Set(),
    endorsed: new Set(),
  };
  const blockedDomains = new Set<string>();
  const domains: [number, string][] = [];
  for (const [k, rawId, r, n, l] of rows) {
    const id = Number(rawId);
    if (k === "f" || k === "q") (k === "f" ? facts.outgoing : facts.requested).push({ targetAccountId: id, showReblogs: truthy(r), notify: truthy(n), languages: (l as string | null) ?? null });
    else if (k === "b") facts.followedBy.add(id);
    else if (k === "p") facts.requestedBy.add(id);
    else if (k === "e") facts.endorsed.add(id);
    else if (k === "k") facts.blocking.add(id);
    else if (k === "y") facts.blockedBy.add(id);
    else if (k === "m") facts.mutes.set(id, { notifications: truthy(r) });
    else if (k === "d") blockedDomains.add(l as string);
    else if (k === "a") domains.push([id, l as string]);
  }
  if (blockedDomains.size > 0) {
    for (const [id, domain] of domains) {
      const host = hostOf(domain);
      if (host !== null && blockedDomains.has(host)) facts.domainBlocking.add(id);
    }
  }
  return facts;
}
