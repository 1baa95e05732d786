import type { Config } from "../config.ts";
import type { DomainEvent } from "../infra/events.ts";
import type { RenderCacheChange } from "../services/statuses/render-cache.ts";

/**
 * What the main thread and its serving threads say to each other over postMessage. A request
 * passed on carries what the main thread's edge needs to treat it as its own: the method, the
 * URL, the headers, the body's bytes and the client's address (X-Forwarded-For and the rate
 * limits are worked out from it); the answer comes back as it is.
 */
export interface ThreadStart {
  type: "start";
  /** The main thread's configuration, with the port it listens on (the threads share it). */
  config: Config;
  /** The rate limits' counters, shared by every thread (src/infra/shared-counters.ts). */
  counters: SharedArrayBuffer | null;
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
  body: ArrayBuffer | null;
  peer: string | null;
}

export interface PassedResponse {
  type: "response";
  id: number;
  status: number;
  headers: [string, string][];
  body: ArrayBuffer | null;
}

/** To a serving thread: an event the main thread's write committed (its streams hear of it). */
export interface PassedEvent {
  type: "event";
  event: DomainEvent;
}

export type ToThread = ThreadStart | PassedResponse | PassedEvent | RenderChanges | { type: "stop" };
export type FromThread = { type: "ready" } | { type: "stopped" } | { type: "failed"; error: string } | PassedRequest;

/** A response's headers as pairs, each Set-Cookie on its own (Headers joins the others). */
export function headerPairs(headers: Headers): [string, string][] {
  const pairs: [string, string][] = [];
  headers.forEach((value, name) => {
    if (name !== "set-cookie") pairs.push([name, value]);
  });
  for (const cookie of headers.getSetCookie()) pairs.push(["set-cookie", cookie]);
  return pairs;
}
