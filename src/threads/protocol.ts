import type { Config } from "../config.ts";
import type { DomainEvent } from "../infra/events.ts";
import type { RenderCacheChange } from "../services/statuses/render-cache.ts";

/**
 * What the main thread and its serving threads say to each other over postMessage. A request
 * passed on carries what the main thread's edge needs to treat it as its own: the method, the
 * URL, the headers, the body and the client's address (X-Forwarded-For and the rate limits
 * are worked out from it); the answer comes back as it is. A body (either way) goes whole with
 * its head when small; a larger one follows chunk by chunk as the reading side pulls it
 * (BodyMessage, src/threads/body-stream.ts), so that neither thread holds it whole.
 */
export interface ThreadStart {
  type: "start";
  /** The main thread's configuration, with the port it listens on (the threads share it). */
  config: Config;
  /** The rate limits' counters, shared by every thread (src/infra/shared-counters.ts). */
  counters: SharedArrayBuffer | null;
  /** The tops of the thread fills under way, the main thread's (src/infra/shared-ids.ts). */
  fills: SharedArrayBuffer;
  /**
   * One Int32 per serving thread, `slot` this one's: 1 while it may have a stream open (set
   * before a stream connects, cleared once a second when it has none), so that the main thread
   * sends stream events only to the threads that have someone to tell.
   */
  listening: SharedArrayBuffer;
  slot: number;
  /**
   * One Int32: the number of the last render-cache changes the main thread posted (RenderChanges),
   * raised after each post and before the main thread answers the request that made them: a
   * thread that has not applied up to it awaits them before it reads.
   */
  renderSeq: SharedArrayBuffer;
  /**
   * Two Int32 per serving thread, at 2 * slot: the passes it has under way (requests awaiting
   * their answer, bodies being carried either way), and the reads awaiting render changes.
   * Kept for the tests (a dropped download leaves nothing behind; a read waits for a write).
   */
  gauges: SharedArrayBuffer;
}

/** To a serving thread: the main thread's render cache was invalidated so (once committed). */
export interface RenderChanges {
  type: "render";
  seq: number;
  changes: RenderCacheChange[];
}

export interface PassedRequest {
  type: "request";
  id: number;
  method: string;
  url: string;
  headers: [string, string][];
  /** The body's first bytes (all of it, unless `more`). */
  body: ArrayBuffer | null;
  /** Whether the rest of the body follows, pulled by the main thread. */
  more: boolean;
  peer: string | null;
  /**
   * The serving thread counted it against the rate limits already: a read it began and then
   * passed on (NEEDS_OWNER). The main thread's edge does not count it again, and the serving
   * thread puts its own count's headers on the answer.
   */
  counted: boolean;
}

export interface PassedResponse {
  type: "response";
  id: number;
  status: number;
  headers: [string, string][];
  body: ArrayBuffer | null;
  more: boolean;
}

/**
 * A body carried chunk by chunk under a request's id: the reading side asks for each chunk
 * (`pull`) or stops (`cancel`); the sending side answers a chunk (transferred), the end, or
 * that its source failed (`abort`). The serving thread sends request bodies, the main thread
 * answers' bodies.
 */
export type BodyMessage =
  | { type: "pull"; id: number }
  | { type: "cancel"; id: number }
  | { type: "chunk"; id: number; bytes: ArrayBuffer }
  | { type: "end"; id: number }
  | { type: "abort"; id: number };

/** To a serving thread: an event the main thread's write committed (its streams hear of it). */
export interface PassedEvent {
  type: "event";
  event: DomainEvent;
}

export type ToThread = ThreadStart | PassedResponse | PassedEvent | RenderChanges | BodyMessage | { type: "stop" };
export type FromThread = { type: "ready" } | { type: "stopped" } | { type: "failed"; error: string } | PassedRequest | BodyMessage;

/** A response's headers as pairs, each Set-Cookie on its own (Headers joins the others). */
export function headerPairs(headers: Headers): [string, string][] {
  const pairs: [string, string][] = [];
  headers.forEach((value, name) => {
    if (name !== "set-cookie") pairs.push([name, value]);
  });
  for (const cookie of headers.getSetCookie()) pairs.push(["set-cookie", cookie]);
  return pairs;
}
