import type { StatusRow } from "../db/schema.ts";

/** A mentioned account as a status row keeps it: remote ones with their handle and profile page. */
export interface MentionRef {
  id: number;
  username: string;
  /** Remote accounts only: `user@domain`. */
  acct?: string;
  /** Remote accounts only: their profile page on their own server. */
  url?: string;
}

/** What a status row keeps of a mention its formatter resolved. */
export function mentionRef(target: { id: number; username: string; acct?: string; url: string }): MentionRef {
  return target.acct === undefined ? { id: target.id, username: target.username } : { id: target.id, username: target.username, acct: target.acct, url: target.url };
}

export function mentionsOf(row: Pick<StatusRow, "mentions">): MentionRef[] {
  return JSON.parse(row.mentions) as MentionRef[];
}

export function mentionedIds(row: Pick<StatusRow, "mentions">): number[] {
  return mentionsOf(row).map((m) => m.id);
}
