import type { Server } from "bun";
import type { AppContext } from "../context.ts";
import { log, redactPath } from "../log.ts";
import { clientIp, formatIp } from "../net/ip.ts";
import type { App } from "./app.ts";
import { MAX_FORM_BYTES } from "./input.ts";
import { setMeta } from "./request-meta.ts";

/** Media uploads: a 16 MB image and a thumbnail, with room for the multipart framing. */
export const MAX_MULTIPART_BYTES = 40 * 1024 * 1024;

const EXPOSED = "Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id";

/** Mastodon's rack-cors resources: which paths browsers may call from any origin. */
function corsMethods(path: string): string | null {
  if (path.startsWith("/api/")) return "POST, PUT, DELETE, GET, PATCH, OPTIONS";
  if (path === "/oauth/token" || path === "/oauth/revoke") return "POST";
  if (path.startsWith("/.well-known/") || path.startsWith("/nodeinfo/")) return "GET";
  return null;
}

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}

function jsonError(status: number, error: string): Response {
  return new Response(JSON.stringify({ error }), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}

/**
 * Everything that happens to every request before and after routing. Kept outside Elysia's
 * hooks so the log line sees the final status of every response, errors included.
 */
export function createEdge(ctx: AppContext, app: App) {
  const { config } = ctx;
  let counter = 0;
  const instanceTag = Math.random().toString(36).slice(2, 8);

  return async function edge(request: Request, server: Server<unknown>): Promise<Response> {
    const started = performance.now();
    const requestId = `${instanceTag}-${(++counter).toString(36)}`;
    const peer = server.requestIP(request)?.address;
    const ip = clientIp(peer, request.headers.get("x-forwarded-for"), config.trustedProxies);
    setMeta(request, { id: requestId, ip });
    const path = pathOf(request.url);
    const origin = request.headers.get("origin");
    const cors = origin !== null ? corsMethods(path) : null;

    let response: Response;
    if (request.method === "OPTIONS" && cors !== null && request.headers.get("access-control-request-method")) {
      response = new Response(null, {
        status: 200,
        headers: {
          "access-control-allow-origin": "*",
          "access-control-allow-methods": cors,
          "access-control-allow-headers": request.headers.get("access-control-request-headers") ?? "",
          "access-control-expose-headers": EXPOSED,
          "access-control-max-age": "7200",
        },
      });
    } else {
      response = tooLarge(request) ?? (await route(app, request));
    }

    const headers = response.headers;
    headers.set("x-request-id", requestId);
    if (cors !== null) {
      headers.set("access-control-allow-origin", "*");
      headers.set("access-control-expose-headers", EXPOSED);
    }
    if (path.startsWith("/api/")) {
      if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
      headers.set("vary", "Authorization, Origin");
    }
    if (config.logRequests) {
      log("info", "request", {
        method: request.method,
        path: redactPath(request.url),
        status: response.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        ip: ip ? formatIp(ip) : undefined,
        request_id: requestId,
      });
    }
    return response;
  };
}

/** Bodies past their cap are refused from the declared length, before any byte is read. */
function tooLarge(request: Request): Response | null {
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length === 0) return null;
  const multipart = (request.headers.get("content-type") ?? "").toLowerCase().startsWith("multipart/");
  if (length > (multipart ? MAX_MULTIPART_BYTES : MAX_FORM_BYTES)) return jsonError(413, "Request body is too large");
  return null;
}

async function route(app: App, request: Request): Promise<Response> {
  try {
    return await app.handle(request);
  } catch (e) {
    log("error", "request failed outside the router", { error: String(e) });
    return jsonError(500, "There was a problem processing your request");
  }
}
