import { log } from "../log.ts";
import type { Channel } from "./channels.ts";

/** One channel a connection listens to. */
export interface Subscription {
  conn: StreamConnection;
  channel: Channel;
  /** `stream` of WebSocket frames, JSON-encoded once. */
  streamJson: string;
}

/**
 * Frames built during one publication, shared by every connection that receives the same
 * payload: a status going to 10,000 sockets is escaped and encoded once, not 10,000 times.
 */
export class FrameCache {
  /** payload -> stream name -> frame. Keyed by the payload string itself, whose hash the engine keeps. */
  private ws = new Map<string, Map<string, string>>();
  private sse = new Map<string, Uint8Array>();
  private static encoder = new TextEncoder();
  private static NO_PAYLOAD = "\u0000none";

  constructor(readonly event: string) {}

  wsFrame(streamJson: string, payload: string | undefined): string {
    const key = payload ?? FrameCache.NO_PAYLOAD;
    let byStream = this.ws.get(key);
    if (!byStream) this.ws.set(key, (byStream = new Map()));
    let frame = byStream.get(streamJson);
    if (frame === undefined) {
      // Mastodon's key order; without a payload the key is absent (as JSON.stringify drops undefined).
      frame = JSON.stringify({ stream: JSON.parse(streamJson), event: this.event, payload });
      byStream.set(streamJson, frame);
    }
    return frame;
  }

  sseFrame(payload: string | undefined): Uint8Array {
    const key = payload ?? FrameCache.NO_PAYLOAD;
    let frame = this.sse.get(key);
    if (frame === undefined) {
      // A missing payload prints as Node printed it in Mastodon's streaming server.
      frame = FrameCache.encoder.encode(`event: ${this.event}\ndata: ${payload ?? "undefined"}\n\n`);
      this.sse.set(key, frame);
    }
    return frame;
  }
}

/** A client connection (SSE response or WebSocket) holding one or more subscriptions. */
export abstract class StreamConnection {
  readonly subscriptions = new Map<string, Subscription>();
  closed = false;

  constructor(
    /** Null for anonymous connections (public streams only). */
    readonly accountId: number | null,
    readonly tokenId: number | null,
  ) {}

  /** Sends one event of a subscription; must never throw or block. */
  abstract send(sub: Subscription, frames: FrameCache, payload: string | undefined): void;
  /** Ends the connection from the server side; the transport calls hub.disconnect(). */
  abstract close(): void;
}

/**
 * What streams there are right now and who listens: topic -> subscriptions. Fan-out asks
 * `has(topic)` before rendering anything, so nobody listening costs nothing.
 */
export class StreamHub {
  private topics = new Map<string, Set<Subscription>>();
  private byToken = new Map<number, Set<StreamConnection>>();
  private all = new Set<StreamConnection>();

  get connectionCount() {
    return this.all.size;
  }

  get topicCount() {
    return this.topics.size;
  }

  connect(conn: StreamConnection) {
    this.all.add(conn);
    if (conn.tokenId !== null) {
      let set = this.byToken.get(conn.tokenId);
      if (!set) this.byToken.set(conn.tokenId, (set = new Set()));
      set.add(conn);
    }
  }

  /** Forgets a connection and every subscription it had; safe to call twice. */
  disconnect(conn: StreamConnection) {
    conn.closed = true;
    for (const sub of conn.subscriptions.values()) this.detach(sub);
    conn.subscriptions.clear();
    this.all.delete(conn);
    if (conn.tokenId !== null) {
      const set = this.byToken.get(conn.tokenId);
      set?.delete(conn);
      if (set && set.size === 0) this.byToken.delete(conn.tokenId);
    }
  }

  /** Adds a subscription unless the connection already has the same channel. */
  subscribe(conn: StreamConnection, channel: Channel): boolean {
    if (conn.closed || conn.subscriptions.has(channel.key)) return false;
    const sub: Subscription = { conn, channel, streamJson: JSON.stringify(channel.stream) };
    conn.subscriptions.set(channel.key, sub);
    for (const topic of channel.topics) {
      let set = this.topics.get(topic);
      if (!set) this.topics.set(topic, (set = new Set()));
      set.add(sub);
    }
    return true;
  }

  unsubscribe(conn: StreamConnection, key: string) {
    const sub = conn.subscriptions.get(key);
    if (!sub) return;
    conn.subscriptions.delete(key);
    this.detach(sub);
  }

  private detach(sub: Subscription) {
    for (const topic of sub.channel.topics) {
      const set = this.topics.get(topic);
      if (!set) continue;
      set.delete(sub);
      if (set.size === 0) this.topics.delete(topic);
    }
  }

  has(topic: string): boolean {
    return this.topics.has(topic);
  }

  /** The signed-in accounts listening to a topic (for per-viewer work done once per account). */
  listeners(topic: string): Iterable<Subscription> {
    return this.topics.get(topic) ?? [];
  }

  /**
   * Sends an event to every subscription of a topic. `payload` is one string for all, or a
   * function giving each subscription its own (null: this one must not receive it).
   */
  publish(topic: string, event: string, payload: string | undefined | ((sub: Subscription) => string | null | undefined), frames = new FrameCache(event)) {
    const set = this.topics.get(topic);
    if (!set) return;
    // A copy: a send may close a slow connection, which edits the set.
    for (const sub of [...set]) {
      try {
        const body = typeof payload === "function" ? payload(sub) : payload;
        if (body === null) continue;
        sub.conn.send(sub, frames, body);
      } catch (e) {
        // One reader's failure (a render that throws) costs that reader the event, nobody else.
        log("error", "stream send failed", { event: frames.event, error: String(e).split("\n")[0] });
      }
    }
  }

  /** Closes every connection made with a token (it was revoked). */
  closeToken(tokenId: number) {
    for (const conn of [...(this.byToken.get(tokenId) ?? [])]) conn.close();
  }

  connections(): Iterable<StreamConnection> {
    return this.all;
  }
}
