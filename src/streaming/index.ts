import type { AppContext } from "../context.ts";
import type { Authentication } from "../services/oauth/tokens.ts";
import { notYourList, resolveChannel, type Channel, type ChannelParams } from "./channels.ts";
import { StreamFanout } from "./fanout.ts";
import { StreamHub } from "./hub.ts";
import { SseConnection } from "./sse.ts";
import { websocketHandlers, WsConnection, type WsCallbacks, type WsData } from "./websocket.ts";

export const HEARTBEAT_MS = 15_000;
export const PING_MS = 30_000;

/**
 * The streaming side of the server: one hub of live connections, fed only by the fan-out
 * from domain events, served over SSE responses and WebSockets. Keep-alives run on the
 * timer wheel (so tests move them with the clock), one pass over all connections per beat.
 */
export class Streaming {
  readonly hub = new StreamHub();
  readonly fanout: StreamFanout;
  readonly websocket: WsCallbacks;

  constructor(private ctx: AppContext) {
    const { services, clock } = ctx;
    this.fanout = new StreamFanout(ctx, this.hub);
    this.websocket = websocketHandlers(this.hub, (conn, name, params, leaving) => this.resolve(conn.auth, name, params, leaving));
    services.wheel.handle("streaming", (beat) => {
      if (beat === "heartbeat") {
        for (const conn of this.hub.connections()) if (conn instanceof SseConnection) conn.heartbeat();
        services.wheel.schedule("streaming", "heartbeat", clock.now() + HEARTBEAT_MS);
      } else {
        for (const conn of [...this.hub.connections()]) if (conn instanceof WsConnection) conn.ping();
        services.wheel.schedule("streaming", "ping", clock.now() + PING_MS);
      }
    });
    services.wheel.schedule("streaming", "heartbeat", clock.now() + HEARTBEAT_MS);
    services.wheel.schedule("streaming", "ping", clock.now() + PING_MS);
  }

  /**
   * The channel asked for, once allowed: a list's stream only to the list's owner, read through
   * the database port (the one channel that waits). `leaving`: for an unsubscribe, where a list
   * deleted since must still resolve to its key.
   */
  resolve(auth: Authentication | null, name: unknown, params: ChannelParams, leaving = false): Channel | Promise<Channel> {
    const channel = resolveChannel(name, params, auth);
    if (channel.listId === undefined || leaving) return channel;
    return this.ctx.services.lists.owns(auth!.accountId!, channel.listId).then((owns) => {
      if (!owns) throw notYourList();
      return channel;
    });
  }

  /** An SSE response subscribed to one channel (already resolved and allowed). */
  openSse(auth: Authentication | null, name: string, params: ChannelParams): Response | Promise<Response> {
    const channel = this.resolve(auth, name, params);
    return channel instanceof Promise ? channel.then((c) => this.sse(auth, c)) : this.sse(auth, channel);
  }

  private sse(auth: Authentication | null, channel: Channel): Response {
    const conn = new SseConnection(this.hub, auth?.accountId ?? null, auth?.tokenId ?? null);
    this.hub.connect(conn);
    this.hub.subscribe(conn, channel);
    return conn.response;
  }

  /** Ends every stream (the server is stopping; open responses would hold it up). */
  closeAll() {
    for (const conn of [...this.hub.connections()]) conn.close();
  }

  /** The data a WebSocket starts with: its connection and the stream named in its URL. */
  socketData(auth: Authentication | null, initial: WsData["initial"]): WsData {
    return { conn: new WsConnection(this.hub, auth), initial };
  }
}
