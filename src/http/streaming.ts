import type { Server } from "bun";
import type { AppContext } from "../context.ts";
import type { Authentication } from "../services/oauth/tokens.ts";
import { ChannelError, invalidToken, missingToken, needsUser, streamFromPath, unknownChannel } from "../streaming/channels.ts";
import type { Streaming } from "../streaming/index.ts";
import { getMeta } from "./request-meta.ts";

function errorResponse(e: ChannelError): Response {
  return new Response(JSON.stringify({ error: e.message }), { status: e.status, headers: { "content-type": "application/json; charset=utf-8" } });
}

/**
 * The token as Mastodon's streaming server reads it: the `Authorization` header, else a
 * non-empty `access_token`, else the WebSocket subprotocol (where browsers can put it). Null
 * when none was sent; an empty one is sent and refused. The edge authenticates it before routing.
 */
export function streamToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (header !== null) return header.replace(/^Bearer\s+/i, "").trim();
  const q = request.url.indexOf("?");
  const query = q >= 0 ? new URLSearchParams(request.url.slice(q + 1)).get("access_token") : null;
  return query || request.headers.get("sec-websocket-protocol")?.trim() || null;
}

/** The stream's authentication, as the edge found it. A token that was sent must be valid, even for public streams. */
function streamAuth(request: Request): Authentication | null {
  const meta = getMeta(request);
  if (meta.refusedToken) throw invalidToken();
  return meta.auth ?? null;
}

/** Public streams are open to all unless the instance is in whitelist mode. */
function checkWhitelist(ctx: AppContext, auth: Authentication | null) {
  if (ctx.config.whitelistMode && (!auth || auth.accountId === null)) throw missingToken();
}

/** Is this the streaming API (SSE paths, or a WebSocket upgrade under it)? Health is a plain route. */
export function isStreamingPath(path: string): boolean {
  return path.startsWith("/api/v1/streaming") && path !== "/api/v1/streaming/health";
}

/**
 * `GET /api/v1/streaming/<channel>` as server-sent events, or a WebSocket upgrade of
 * `/api/v1/streaming`. Returns undefined once a socket was upgraded (Bun answers it).
 */
export function handleStreaming(ctx: AppContext, streaming: Streaming, request: Request, server: Server<unknown>, path: string, requestId: string): Response | Promise<Response> | undefined {
  try {
    if (request.headers.get("upgrade")?.toLowerCase() === "websocket") return upgrade(ctx, streaming, request, server, requestId);
    const url = new URL(request.url);
    // The channel is checked before the token, as Mastodon does.
    const name = streamFromPath(path, url.searchParams.get("only_media"));
    if (name === null || request.method !== "GET") throw unknownChannel();
    const auth = streamAuth(request);
    checkWhitelist(ctx, auth);
    const response = streaming.openSse(auth, name, { tag: url.searchParams.get("tag") ?? undefined, list: url.searchParams.get("list") ?? undefined });
    // Heartbeats keep the response busy; Bun's idle timer must not cut it between them.
    server.timeout(request, 0);
    // A list's stream waits for its owner's read: refused as a synchronous refusal is.
    return response instanceof Promise ? response.catch((e) => (e instanceof ChannelError ? errorResponse(e) : Promise.reject(e))) : response;
  } catch (e) {
    if (e instanceof ChannelError) return errorResponse(e);
    throw e;
  }
}

function upgrade(ctx: AppContext, streaming: Streaming, request: Request, server: Server<unknown>, requestId: string): Response | undefined {
  const auth = streamAuth(request);
  checkWhitelist(ctx, auth);
  const url = new URL(request.url);
  const stream = url.searchParams.get("stream");
  // A socket opened for a user's stream without a user token has nothing to carry: refused now.
  if (stream !== null && needsUser(stream) && (!auth || auth.accountId === null)) throw missingToken();
  const initial = stream === null ? null : { name: stream, params: { tag: url.searchParams.get("tag") ?? undefined, list: url.searchParams.get("list") ?? undefined } };
  const data = streaming.socketData(auth, initial);
  if (server.upgrade(request, { data, headers: { "x-request-id": requestId } })) return undefined;
  return new Response(JSON.stringify({ error: "Bad WebSocket handshake" }), { status: 400, headers: { "content-type": "application/json; charset=utf-8" } });
}
