import type { ServerWebSocket, WebSocketHandler } from "bun";
import type { Authentication } from "../services/oauth/tokens.ts";
import { ChannelError, type Channel, type ChannelParams } from "./channels.ts";
import { StreamConnection, type FrameCache, type StreamHub, type Subscription } from "./hub.ts";

/** Bytes a socket may have waiting to be sent before it is closed as too slow. */
export const MAX_WS_BUFFER = 512 * 1024;
/** Subscriptions one socket may hold (every stream there is, with room for tags and lists). */
export const MAX_SUBSCRIPTIONS = 64;
const BINARY_REFUSED = "The mastodon streaming server does not support binary messages";

/**
 * Resolves a subscribe request for this connection's token (throws ChannelError).
 * `leaving`: only the subscription's key is wanted (to unsubscribe), not permission.
 */
export type ChannelResolver = (conn: WsConnection, name: unknown, params: ChannelParams, leaving?: boolean) => Channel | Promise<Channel>;

export interface WsData {
  conn: WsConnection;
  /** A `?stream=` asked for in the upgrade URL, subscribed once the socket is open. */
  initial: { name: string; params: ChannelParams } | null;
}

/** A WebSocket: many subscriptions multiplexed, frames `{"stream","event","payload"}`. */
export class WsConnection extends StreamConnection {
  socket: ServerWebSocket<WsData> | null = null;
  /** Cleared by each ping, set by the pong; a socket still false at the next ping is dead. */
  alive = true;
  /** A subscription still waiting for its read (a list's owner): later messages follow it, in order. */
  waiting: Promise<void> | null = null;

  constructor(
    private hub: StreamHub,
    /** The token the socket was opened with; each subscription is checked against it. */
    readonly auth: Authentication | null,
  ) {
    super(auth?.accountId ?? null, auth?.tokenId ?? null);
  }

  send(sub: Subscription, frames: FrameCache, payload: string | undefined) {
    const ws = this.socket;
    if (this.closed || !ws) return;
    // Bun closes sockets past backpressureLimit itself; this catches them a step earlier.
    if (ws.getBufferedAmount() > MAX_WS_BUFFER) {
      this.terminate();
      return;
    }
    ws.send(frames.wsFrame(sub.streamJson, payload));
  }

  sendJson(body: unknown) {
    if (!this.closed) this.socket?.send(JSON.stringify(body));
  }

  close() {
    this.hub.disconnect(this);
    this.socket?.close();
  }

  terminate() {
    this.hub.disconnect(this);
    this.socket?.terminate();
  }

  /** The 30-second keep-alive: ping, or cut off a socket that missed the last pong. */
  ping() {
    if (!this.alive) {
      this.terminate();
      return;
    }
    this.alive = false;
    this.socket?.ping();
  }
}

function errorFrame(e: unknown) {
  if (e instanceof ChannelError) return { error: e.socket.error, status: e.socket.status };
  return { error: "An unexpected error occurred", status: 500 };
}

function paramsOf(message: Record<string, unknown>): ChannelParams {
  return { tag: message.tag, list: message.list };
}

/** Bun's socket settings: fixed, given when the server starts listening. */
export const WS_OPTIONS = {
  maxPayloadLength: 64 * 1024,
  backpressureLimit: 2 * MAX_WS_BUFFER,
  closeOnBackpressureLimit: true,
  // Liveness is our own 30-second ping; Bun's idle timer would add a second one.
  idleTimeout: 0,
  sendPings: false,
  perMessageDeflate: false,
} satisfies Partial<WebSocketHandler<WsData>>;

export type WsCallbacks = Required<Pick<WebSocketHandler<WsData>, "open" | "message" | "pong" | "close">>;

/** Bun's WebSocket callbacks for the streaming socket. */
export function websocketHandlers(hub: StreamHub, resolve: ChannelResolver): WsCallbacks {
  const admit = (conn: WsConnection, channel: Channel) => {
    if (conn.subscriptions.size >= MAX_SUBSCRIPTIONS && !conn.subscriptions.has(channel.key)) {
      conn.sendJson({ error: "Too many subscriptions", status: 400 });
      return;
    }
    hub.subscribe(conn, channel);
  };
  const subscribe = (conn: WsConnection, name: unknown, params: ChannelParams): Promise<void> | void => {
    try {
      const channel = resolve(conn, name, params);
      if (channel instanceof Promise) return channel.then((c) => admit(conn, c), (e: unknown) => conn.sendJson(errorFrame(e)));
      admit(conn, channel);
    } catch (e) {
      conn.sendJson(errorFrame(e));
    }
  };
  /** A message's work after what still waits on the same socket: a subscribe then an unsubscribe keep their order. */
  const inTurn = (conn: WsConnection, work: () => Promise<void> | void) => {
    const next = conn.waiting ? conn.waiting.then(work) : work();
    if (!next) return;
    const tracked: Promise<void> = next.then(() => {
      if (conn.waiting === tracked) conn.waiting = null;
    });
    conn.waiting = tracked;
  };

  return {
    open(ws) {
      const { conn, initial } = ws.data;
      conn.socket = ws;
      hub.connect(conn);
      if (initial) inTurn(conn, () => subscribe(conn, initial.name, initial.params));
    },
    message(ws, message) {
      const conn = ws.data.conn;
      if (typeof message !== "string") {
        ws.close(1003, BINARY_REFUSED);
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(message);
      } catch {
        conn.sendJson({ error: "Invalid JSON", status: 400 });
        return;
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        conn.sendJson({ error: "Invalid message", status: 400 });
        return;
      }
      const msg = parsed as Record<string, unknown>;
      // masto.js sends the stream as a string; some clients send ["hashtag", "tag"].
      const name = Array.isArray(msg.stream) ? msg.stream[0] : msg.stream;
      if (msg.type === "subscribe") inTurn(conn, () => subscribe(conn, name, paramsOf(msg)));
      else if (msg.type === "unsubscribe") {
        inTurn(conn, () => {
          try {
            // Leaving reads nothing: the channel resolves at once.
            hub.unsubscribe(conn, (resolve(conn, name, paramsOf(msg), true) as Channel).key);
          } catch {
            // Mastodon's words, without a status.
            conn.sendJson({ error: "Error unsubscribing from channel" });
          }
        });
      } else inTurn(conn, () => conn.sendJson({ error: "Unknown message type", status: 400 }));
    },
    pong(ws) {
      ws.data.conn.alive = true;
    },
    close(ws) {
      hub.disconnect(ws.data.conn);
    },
  };
}
