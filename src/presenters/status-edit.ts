import type { MediaRow, StatusEditRow } from "../db/schema.ts";
import type { AccountView } from "../models/views.ts";
import { serializeAccount, type Urls } from "./account.ts";
import { serializeAttachment } from "./media.ts";

interface Emoji {
  shortcode: string;
}

/**
 * REST::StatusEditSerializer (4.3): `poll` only when that version had one. Versions keep no
 * emojis of their own: those of the status (`statusEmojis`, its `emojis` column) that the
 * version's text or content warning names are shown with it.
 */
export function serializeStatusEdit(
  urls: Urls,
  account: AccountView,
  edit: Pick<StatusEditRow, "contentHtml" | "spoilerText" | "sensitive" | "createdAt" | "pollOptions"> & { media: MediaRow[] },
  statusEmojis: Emoji[] = [],
) {
  const out: Record<string, unknown> = {
    content: edit.contentHtml,
    spoiler_text: edit.spoilerText,
    sensitive: edit.sensitive,
    created_at: new Date(edit.createdAt).toISOString(),
  };
  if (edit.pollOptions !== null) out.poll = { options: (JSON.parse(edit.pollOptions) as string[]).map((title) => ({ title })) };
  out.account = serializeAccount(urls, account);
  out.media_attachments = edit.media.map((m) => serializeAttachment(urls, m));
  const text = `${edit.spoilerText} ${edit.contentHtml} ${edit.pollOptions ?? ""}`;
  out.emojis = statusEmojis.filter((e) => text.includes(`:${e.shortcode}:`));
  return out;
}
