import type { StatusRow } from "../db/schema.ts";

export interface MentionRef {
  id: number;
  username: string;
}

export function mentionsOf(row: Pick<StatusRow, "mentions">): MentionRef[] {
  return JSON.parse(row.mentions) as MentionRef[];
}

export function mentionedIds(row: Pick<StatusRow, "mentions">): number[] {
  return mentionsOf(row).map((m) => m.id);
}
