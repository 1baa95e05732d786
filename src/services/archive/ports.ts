import type { AccountRow, MediaRow, PollRow, StatusRow } from "../../db/schema.ts";

/** The rows a status's ActivityPub form points at (its parent, mentions, media, poll), read through the port. */
export interface ArchiveLookups {
  account(id: number): Promise<AccountRow | undefined>;
  status(id: number): Promise<StatusRow | undefined>;
  media(statusId: number): Promise<MediaRow[]>;
  poll(statusId: number): Promise<PollRow | undefined>;
}

/**
 * Statuses and the actor in the ActivityPub shape federation sends them, as plain JSON-LD
 * (src/federation/archive.ts renders them through Fedify, which services do not import).
 */
export interface ArchiveRenderer {
  /** The actor document of a local account. */
  actor(account: AccountRow): Promise<Record<string, unknown>>;
  /** A status as its Create (a Note or Question), or a boost as its Announce. */
  activity(author: AccountRow, status: StatusRow, lookups: ArchiveLookups): Promise<Record<string, unknown>>;
  /** A status's IRI, local or remote. */
  statusUri(author: AccountRow, status: StatusRow): string;
}
