import { grants } from "../auth/scopes.ts";
import { parseId } from "../ids.ts";
import type { Authentication } from "../services/oauth/tokens.ts";
import { normalizeTag } from "../text/format.ts";

/** Every stream a client may ask for, by its WebSocket `stream` name. */
export const STREAM_NAMES = [
  "user",
  "user:notification",
  "public",
  "public:media",
  "public:local",
  "public:local:media",
  "public:remote",
  "public:remote:media",
  "hashtag",
  "hashtag:local",
  "list",
  "direct",
] as const;
export type StreamName = (typeof STREAM_NAMES)[number];

const KNOWN = new Set<string>(STREAM_NAMES);

/** SSE paths and the stream each one opens (Mastodon's channelNameFromPath; exact match). */
const SSE_PATHS: Record<string, StreamName> = {
  "/api/v1/streaming/user": "user",
  "/api/v1/streaming/user/notification": "user:notification",
  "/api/v1/streaming/public": "public",
  "/api/v1/streaming/public/local": "public:local",
  "/api/v1/streaming/public/remote": "public:remote",
  "/api/v1/streaming/hashtag": "hashtag",
  "/api/v1/streaming/hashtag/local": "hashtag:local",
  "/api/v1/streaming/list": "list",
  "/api/v1/streaming/direct": "direct",
};

// Node's isTruthy in Mastodon's streaming server: these (and "") are false.
const FALSY = new Set(["", "0", "f", "F", "false", "FALSE", "off", "OFF"]);

/** The stream an SSE path asks for; `only_media` turns the public ones into their media variant. */
export function streamFromPath(path: string, onlyMedia: string | null): StreamName | null {
  const name = SSE_PATHS[path];
  if (!name) return null;
  if (onlyMedia !== null && !FALSY.has(onlyMedia) && name.startsWith("public")) return `${name}:media` as StreamName;
  return name;
}

/**
 * A refused stream. SSE answers with `status` and `{error: message}`; a WebSocket
 * subscription answers with an error frame in the words of Mastodon's streaming server,
 * which differ for a few cases (`socket`).
 */
export class ChannelError extends Error {
  readonly socket: { status: number; error: string };

  constructor(
    public status: number,
    message: string,
    socket?: { status: number; error: string },
  ) {
    super(message);
    this.socket = socket ?? { status, error: message };
  }
}

export const unknownChannel = () => new ChannelError(400, "Unknown channel requested", { status: 400, error: "Unknown stream type" });
export const missingToken = () => new ChannelError(401, "Missing access token");
export const invalidToken = () => new ChannelError(401, "Invalid access token");
const missingScopes = () => new ChannelError(401, "Access token does not have the required scopes");
const userRequired = () => new ChannelError(401, "This method requires an authenticated user");
const missingTag = () => new ChannelError(404, "Not found", { status: 400, error: "Missing tag name parameter" });
const missingList = () => new ChannelError(404, "Not found", { status: 400, error: "Missing list name parameter" });
export const notYourList = () => new ChannelError(404, "Not found", { status: 401, error: "Not authorized to stream this list" });

/** One subscription: the topics it listens to and the name WebSocket frames carry. */
export interface Channel {
  /** Identifies the subscription on its connection (a second identical subscribe is ignored). */
  key: string;
  topics: string[];
  /** `stream` of outgoing WebSocket frames: the name, and the tag or list exactly as sent. */
  stream: unknown[];
  /** A list's stream: the list, whose owner the caller checks (a read through the database port). */
  listId?: number;
}

export interface ChannelParams {
  tag?: unknown;
  list?: unknown;
}

/** Streams that only make sense for a signed-in user. */
export function needsUser(name: string): boolean {
  return name === "user" || name === "user:notification" || name === "list" || name === "direct";
}

function anyScope(auth: Authentication, scopes: string[]) {
  return scopes.some((s) => grants(auth.scopes, s));
}

/**
 * Resolves a stream request into topics, or refuses it. Public streams are open to anyone
 * (the caller checks whitelist mode), but a token that is sent must be allowed to read
 * statuses; the others need a user token with `read` or `read:statuses`
 * (`read:notifications` for notifications); a list must be the caller's.
 */
export function resolveChannel(
  name: unknown,
  params: ChannelParams,
  auth: Authentication | null,
): Channel {
  if (typeof name !== "string" || !KNOWN.has(name)) throw unknownChannel();
  const stream = name as StreamName;
  let accountId = 0;
  if (needsUser(stream)) {
    if (!auth) throw missingToken();
    if (auth.accountId === null) throw userRequired();
    const scopes = stream === "user:notification" ? ["read:notifications"] : ["read:statuses"];
    if (!anyScope(auth, scopes)) throw missingScopes();
    accountId = auth.accountId;
  } else if (auth && !anyScope(auth, ["read:statuses"])) {
    // Signed-in readers' copies carry their filters and flags: not for a token that may not read.
    throw missingScopes();
  }
  switch (stream) {
    case "user": {
      const topics = [`user:${accountId}`];
      // Notifications ride along only when the token may read them (as Mastodon decides).
      if (anyScope(auth!, ["read:notifications"])) topics.push(`notifications:${accountId}`);
      return { key: "user", topics, stream: ["user"] };
    }
    case "user:notification":
      return { key: stream, topics: [`notifications:${accountId}`], stream: [stream] };
    case "direct":
      return { key: stream, topics: [`direct:${accountId}`], stream: [stream] };
    case "hashtag":
    case "hashtag:local": {
      const raw = params.tag;
      const tag = typeof raw === "string" || typeof raw === "number" ? normalizeTag(String(raw)) : "";
      if (tag === "") throw missingTag();
      const topic = stream === "hashtag" ? `hashtag:${tag}` : `hashtag:${tag}:local`;
      return { key: topic, topics: [topic], stream: [stream, raw] };
    }
    case "list": {
      const raw = params.list;
      if (raw === undefined || raw === null || raw === "") throw missingList();
      const id = typeof raw === "string" || typeof raw === "number" ? parseId(String(raw)) : null;
      if (id === null) throw notYourList();
      return { key: `list:${id}`, topics: [`list:${id}`], stream: [stream, raw], listId: id };
    }
    default:
      // public, public:local, public:remote and their :media variants are topics of their own.
      return { key: stream, topics: [stream], stream: [stream] };
  }
}
