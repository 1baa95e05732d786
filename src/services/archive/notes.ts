import { httpUrlOrNull } from "../../net/http-url.ts";
import { normalizeTag } from "../../text/format.ts";
import { normalizeLanguage } from "../../text/languages.ts";
import type { RemotePoll } from "../statuses/remote-input.ts";

// An archive's outbox.json read as plain JSON: what each item is, and what a post says. The
// archive is the account's own, but it is a file from elsewhere: every field is checked for
// its type, and nothing in it is trusted to be well-formed.

/** ActivityStreams' public collection, as the archives of Mastodon (and Fedify's compact form) spell it. */
const PUBLIC = new Set(["https://www.w3.org/ns/activitystreams#Public", "as:Public", "Public"]);

export type Visibility = "public" | "unlisted" | "private" | "direct";

/** An attachment of an archived post: the file at `path` in the archive. */
export interface ArchivedMedia {
  path: string;
  description: string | null;
  /** Mastodon's focalPoint, as the API's `focus` parameter ("x,y"). */
  focus: string | null;
  mediaType: string | null;
}

/** A post of the archive's outbox, as read. */
export interface ArchivedPost {
  uri: string;
  published: number;
  visibility: Visibility;
  html: string;
  summary: string;
  sensitive: boolean;
  language: string | null;
  inReplyTo: string | null;
  tags: string[];
  media: ArchivedMedia[];
  poll: RemotePoll | null;
}

export type OutboxItem = { kind: "post"; post: ArchivedPost } | { kind: "boost" } | { kind: "unreadable" };

const str = (value: unknown): string | null => (typeof value === "string" ? value : null);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]);
/** An IRI given as a string or as an object with an id (or href). */
const iri = (value: unknown): string | null => str(value) ?? (value && typeof value === "object" ? (str((value as { id?: unknown }).id) ?? str((value as { href?: unknown }).href)) : null);
const iris = (value: unknown): string[] => list(value).flatMap((v) => iri(v) ?? []);
const time = (value: unknown): number | null => {
  const ms = typeof value === "string" ? Date.parse(value) : NaN;
  return Number.isFinite(ms) ? ms : null;
};

/**
 * The path in the archive an attachment's `url` names: Mastodon writes it relative
 * ("media_attachments/files/..."); an absolute URL stands for its path, less /system/.
 */
export function archivePath(url: string): string | null {
  let path = url;
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    const http = httpUrlOrNull(url);
    if (!http) return null;
    path = decodeURIComponent(new URL(http).pathname).replace(/^\/system\//, "");
  }
  path = path.replace(/^(\.?\/)+/, "");
  return path === "" || path.split("/").includes("..") ? null : path;
}

/** What an outbox item is; `followers` is the actor's followers collection (private posts are addressed to it). */
export function readOutboxItem(item: unknown, followers: string | null): OutboxItem {
  if (!item || typeof item !== "object") return { kind: "unreadable" };
  const activity = item as Record<string, unknown>;
  if (activity.type === "Announce") return { kind: "boost" };
  if (activity.type !== "Create" || !activity.object || typeof activity.object !== "object") return { kind: "unreadable" };
  const note = activity.object as Record<string, unknown>;
  if (note.type !== "Note" && note.type !== "Question" && note.type !== "Article" && note.type !== "Page") return { kind: "unreadable" };
  const uri = str(note.id);
  const published = time(note.published) ?? time(activity.published);
  if (!uri || published === null) return { kind: "unreadable" };
  const to = iris(note.to ?? activity.to);
  const cc = iris(note.cc ?? activity.cc);
  let visibility: Visibility;
  if (to.some((a) => PUBLIC.has(a))) visibility = "public";
  else if (cc.some((a) => PUBLIC.has(a))) visibility = "unlisted";
  else if (followers !== null && (to.includes(followers) || cc.includes(followers))) visibility = "private";
  else if (to.some((a) => a.endsWith("/followers"))) visibility = "private";
  else visibility = "direct";
  const contentMap = note.contentMap && typeof note.contentMap === "object" ? Object.entries(note.contentMap as Record<string, unknown>) : [];
  const content = str(note.content) ?? contentMap.map(([, v]) => str(v)).find((v) => v !== null) ?? "";
  const language = contentMap.length > 0 ? normalizeLanguage(contentMap[0]![0]) : null;
  const tags = [
    ...new Set(
      list(note.tag)
        .filter((t): t is Record<string, unknown> => !!t && typeof t === "object" && (t as { type?: unknown }).type === "Hashtag")
        .map((t) => normalizeTag((str(t.name) ?? "").replace(/^#/, "")))
        .filter((t) => t !== ""),
    ),
  ];
  const media = list(note.attachment).flatMap((a): ArchivedMedia[] => {
    if (!a || typeof a !== "object") return [];
    const at = a as Record<string, unknown>;
    const url = iri(list(at.url)[0]);
    const path = url ? archivePath(url) : null;
    if (!path) return [];
    const focal = Array.isArray(at.focalPoint) && at.focalPoint.length === 2 && at.focalPoint.every((n) => typeof n === "number" && Math.abs(n) <= 1) ? (at.focalPoint as number[]) : null;
    return [{ path, description: str(at.name), focus: focal ? `${focal[0]},${focal[1]}` : null, mediaType: str(at.mediaType) }];
  });
  return {
    kind: "post",
    post: {
      uri,
      published,
      visibility,
      html: content,
      summary: str(note.summary) ?? "",
      sensitive: note.sensitive === true,
      language,
      inReplyTo: iri(note.inReplyTo),
      tags,
      media,
      poll: note.type === "Question" ? pollOf(note, published) : null,
    },
  };
}

/** A Question's options and counts, as an ended poll (it ended at its end time, or when it closed). */
function pollOf(note: Record<string, unknown>, published: number): RemotePoll | null {
  const multiple = Array.isArray(note.anyOf);
  const options = list(multiple ? note.anyOf : note.oneOf).filter((o): o is Record<string, unknown> => !!o && typeof o === "object" && typeof (o as { name?: unknown }).name === "string");
  if (options.length < 2) return null;
  const count = (o: Record<string, unknown>) => {
    const n = (o.replies as { totalItems?: unknown } | undefined)?.totalItems;
    return typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : 0;
  };
  const endTime = time(note.endTime);
  const closed = time(note.closed);
  const expiresAt = endTime ?? closed ?? published;
  const voters = note.votersCount;
  return {
    options: options.map((o) => o.name as string),
    tallies: options.map(count),
    multiple,
    expiresAt,
    votersCount: typeof voters === "number" && Number.isSafeInteger(voters) && voters >= 0 ? voters : null,
    closedAt: closed ?? expiresAt,
  };
}
