import type { Relationship } from "../models/views.ts";

/** REST::RelationshipSerializer (4.3) key order. */
export function serializeRelationship(r: Relationship) {
  return {
    id: String(r.id),
    following: r.following,
    showing_reblogs: r.showingReblogs,
    notifying: r.notifying,
    languages: r.languages,
    followed_by: r.followedBy,
    blocking: r.blocking,
    blocked_by: r.blockedBy,
    muting: r.muting,
    muting_notifications: r.mutingNotifications,
    requested: r.requested,
    requested_by: r.requestedBy,
    domain_blocking: r.domainBlocking,
    endorsed: r.endorsed,
    note: "",
  };
}
