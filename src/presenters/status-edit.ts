import type { AccountRow, MediaRow, StatusEditRow } from "../db/schema.ts";
import { serializeAccount, type Urls } from "./account.ts";
import { serializeAttachment } from "./media.ts";

/** REST::StatusEditSerializer (4.3): `poll` only when that version had one. */
export function serializeStatusEdit(urls: Urls, account: AccountRow, edit: Pick<StatusEditRow, "contentHtml" | "spoilerText" | "sensitive" | "createdAt" | "pollOptions"> & { media: MediaRow[] }) {
  const out: Record<string, unknown> = {
    content: edit.contentHtml,
    spoiler_text: edit.spoilerText,
    sensitive: edit.sensitive,
    created_at: new Date(edit.createdAt).toISOString(),
  };
  if (edit.pollOptions !== null) out.poll = { options: (JSON.parse(edit.pollOptions) as string[]).map((title) => ({ title })) };
  out.account = serializeAccount(urls, account);
  out.media_attachments = edit.media.map((m) => serializeAttachment(urls, m));
  out.emojis = [];
  return out;
}
