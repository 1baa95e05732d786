import { cookie, SESSION_COOKIE } from "./oauth-forms.ts";
import { RequestsInFlight } from "./in-flight.ts";
import type { Server } from "bun";
import type { AppContext } from "../context.ts";
import { log, redactPath } from "../log.ts";
import { clientIp, formatIp, parseIp, type Ip } from "../net/ip.ts";
import { INBOX_BUCKET, type Verdict } from "../infra/rate-limits.ts";
import { isThenable } from "../db/port.ts";
import type { App } from "./app.ts";
import { ApiError } from "../errors.ts";
import { bearerToken, peekAccountId, requireToken } from "./auth.ts";
import { readLimited } from "./input.ts";
import { inboxBodyRefusal } from "./inbox-body.ts";
import { bodyLimit, MAX_FORM_BYTES, MAX_UPLOAD_BYTES, pathOf } from "./body-limits.ts";
import { INBOX_PATH, routePath } from "../net/paths.ts";
import { getMeta, newMeta, setMeta } from "./request-meta.ts";
import { removeUploads } from "./multipart-body.ts";
import { refusedSigner, unauthorizedFetch } from "./federation-gate.ts";
import { routedFrom } from "../federation/signed-at.ts";
import { handleStreaming, isStreamingPath, streamToken } from "./streaming.ts";
import type { Streaming } from "../streaming/index.ts";
import type { WsData } from "../streaming/websocket.ts";
import type { FederationHandler } from "../federation/index.ts";

/**
 * The paths Fedify serves (actors, their collections and statuses, the inboxes, the custom
 * emojis' Emoji documents); every other request, the hot API paths above all, goes straight
 * to Elysia. WebFinger, host-meta and nodeinfo stay in src/http/instance.ts, whose links name
 * the same actor URIs.
 */
function isFederationPath(path: string): boolean {
  return path.startsWith("/users/") || path === "/inbox" || path.startsWith("/emojis/");
}

const ACTIVITY_TYPES = /application\/(activity\+json|ld\+json)/i;
const PROFILE_PAGE = /^\/@([A-Za-z0-9_]+)(?:\/(\d{1,19}))?$/;

/**
 * Content negotiation on the pages Rookery names as `url` (Mastodon's): a federating server
 * asking `/@alice` or `/@alice/123` for ActivityPub gets the actor or the Note, as it would
 * at `/users/alice` and `/users/alice/statuses/123`. Others get the web page.
 */
function activityPathOf(path: string, request: Request): string | null {
  const page = PROFILE_PAGE.exec(path);
  if (!page || request.method !== "GET" || !ACTIVITY_TYPES.test(request.headers.get("accept") ?? "")) return null;
  return page[2] ? `/users/${page[1]}/statuses/${page[2]}` : `/users/${page[1]}`;
}

export { MAX_UPLOAD_BYTES };
/** Bun's own limit sits above every cap here, so that our JSON 413 (with CORS) answers first. */
export const SERVER_BODY_LIMIT = 2 * MAX_UPLOAD_BYTES;

const EXPOSED = "Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id";

/** Mastodon's rack-cors resources: which paths browsers may call from any origin. */
function corsMethods(path: string): string | null {
  if (path.startsWith("/api/")) return "POST, PUT, DELETE, GET, PATCH, OPTIONS";
  if (path === "/oauth/token" || path === "/oauth/revoke") return "POST";
  if (path.startsWith("/.well-known/") || path.startsWith("/nodeinfo/")) return "GET";
  return null;
}

function jsonError(status: number, error: string): Response {
  return new Response(JSON.stringify({ error }), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}

/**
 * Everything that happens to every request before and after routing. Kept outside Elysia's
 * hooks so the log line sees the final status of every response, errors included.
 */
export function createEdge(ctx: AppContext, app: App, streaming: Streaming, federation: FederationHandler | null = null, inFlight: RequestsInFlight = new RequestsInFlight()) {
  const publicOrigin = new URL(ctx.config.publicUrl).origin;
  const { config } = ctx;
  let counter = 0;
  const instanceTag = Math.random().toString(36).slice(2, 8);
  // Parsing an address costs more than the rest of the edge; clients keep theirs.
  const peers = new Map<string, Ip | null>();
  const peerIp = (address: string | undefined): Ip | null => {
    if (!address) return null;
    let ip = peers.get(address);
    if (ip === undefined) {
      if (peers.size > 10_000) peers.clear();
      ip = parseIp(address);
      peers.set(address, ip);
    }
    return ip;
  };

  /**
   * `peerAddress`: the client's address when the request was received by another thread
   * (src/threads); `counted`: that thread counted it against the rate limits already.
   */
  return function edge(request: Request, server: Server<WsData>, peerAddress?: string | null, counted = false): Promise<Response | undefined> | Response | undefined {
    const started = performance.now();
    const requestId = `${instanceTag}-${(++counter).toString(36)}`;
    // The client's address is a system call of its own (getpeername): a read that neither logs
    // nor is rate-limited never asks for it. Requests that log, and those that may change
    // something (sign-in counts its attempts by address), have it looked up now, while their
    // client is surely still connected.
    let ip: Ip | null | undefined;
    const ipOf = (): Ip | null => {
      if (ip !== undefined) return ip;
      const forwarded = config.trustedProxies.length > 0 ? request.headers.get("x-forwarded-for") : null;
      const peer = peerIp(peerAddress !== undefined ? (peerAddress ?? undefined) : server.requestIP(request)?.address);
      return (ip = forwarded ? clientIp(peer && formatIp(peer), forwarded, config.trustedProxies) : peer);
    };
    if (config.logRequests || (request.method !== "GET" && request.method !== "HEAD")) ipOf();
    const meta = newMeta(requestId, ipOf);
    setMeta(request, meta);
    // Without a usable Host, Bun's URL has no origin: there is no path to classify it by.
    if (!request.url.startsWith("http")) {
      const bad = jsonError(400, "Bad Request");
      bad.headers.set("x-content-type-options", "nosniff");
      return bad;
    }
    const rawPath = pathOf(request.url);
    const path = routePath(rawPath);
    const origin = request.headers.get("origin");
    const cors = origin !== null ? corsMethods(path) : null;

    let limits: Verdict | null = null;
    const finish = (response: Response): Response => {
      const headers = response.headers;
      headers.set("x-request-id", requestId);
      // No response of ours is to be read as another type than it says (a JSON error as HTML...).
      headers.set("x-content-type-options", "nosniff");
      if (limits) {
        headers.set("x-ratelimit-limit", limits.limit);
        headers.set("x-ratelimit-remaining", limits.remaining);
        headers.set("x-ratelimit-reset", limits.reset);
      }
      if (cors !== null) {
        headers.set("access-control-allow-origin", "*");
        headers.set("access-control-expose-headers", EXPOSED);
      }
      if (path.startsWith("/api/")) {
        if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
        headers.set("vary", "Authorization, Origin");
      }
      if (config.logRequests) {
        const at = ipOf();
        log("info", "request", {
          method: request.method,
          path: redactPath(request.url),
          status: response.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          ip: at ? formatIp(at) : undefined,
          request_id: requestId,
        });
      }
      return response;
    };

    if (request.method === "OPTIONS" && cors !== null && request.headers.get("access-control-request-method")) {
      return finish(new Response(null, {
        status: 200,
        headers: {
          "access-control-allow-origin": "*",
          "access-control-allow-methods": cors,
          "access-control-allow-headers": request.headers.get("access-control-request-headers") ?? "",
          "access-control-expose-headers": EXPOSED,
          "access-control-max-age": "7200",
        },
      }));
    }
    const refused = tooLarge(request, path);
    if (refused) return finish(refused);
    const streamingPath = isStreamingPath(rawPath);
    // The token is authenticated here, once, through the port (its read is asynchronous), and
    // kept with the request: the routes' checks (auth.ts) read it synchronously. A request
    // without one pays nothing, nor does one whose token the tokens' cache holds.
    const token = streamingPath ? streamToken(request) : bearerToken(request);
    if (token === null) {
      meta.auth = null;
      return routed();
    }
    const known = ctx.services.tokens.known(token);
    if (known !== undefined) {
      meta.auth = known;
      return routed();
    }
    return ctx.services.tokens.authenticate(token).then(
      (auth) => {
        meta.auth = auth;
        meta.refusedToken = auth === null;
        return routed();
      },
      (e) => {
        log("error", "a token could not be authenticated", { error: String(e).split("\n")[0], request_id: requestId });
        return finish(jsonError(500, "There was a problem processing your request"));
      },
    );

    /** The rest of the edge, with the request's authentication known. */
    function routed(): Promise<Response | undefined> | Response | undefined {
      // An upload's body (up to 120 MB) is read only for a caller with a valid token: anyone
      // else is answered as the route would answer them, before a byte of it is held.
      if (bodyLimit(request.method, path) > MAX_FORM_BYTES && path.startsWith("/settings/")) {
        // The settings' upload (a CSV import) is for a signed-in browser: anyone else goes to the sign-in, as the page would send them.
        return ctx.services.webSessions.accountFor(cookie(request, SESSION_COOKIE)).then((member) =>
          member === null ? finish(new Response(null, { status: 303, headers: { location: `${config.publicUrl}/oauth/sign_in?return_to=${encodeURIComponent(path)}` } })) : admitted(),
        );
      }
      if (bodyLimit(request.method, path) > MAX_FORM_BYTES) {
        try {
          requireToken(ctx, request);
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          const answer = jsonError(e.status, e.message);
          for (const [name, value] of Object.entries(e.headers)) answer.headers.set(name, value);
          return finish(answer);
        }
      }
      return admitted();
    }

    /** Refused before routing: the request has no effect at all. */
    function throttled(verdict: Verdict | null): Response | null {
      limits = verdict;
      if (!limits?.limited) return null;
      // Mastodon's throttled responder: exactly this type, this body. A server refused at an
      // inbox is also told when to come back (Retry-After, in seconds), which Fedify's
      // delivery queue holds its retry to; API clients get Mastodon's headers only.
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (limits.bucket === INBOX_BUCKET) headers["retry-after"] = String(limits.retryAfter);
      return finish(new Response(JSON.stringify({ error: "Too many requests" }), { status: 429, headers }));
    }

    /** The rest, once an upload's sender is known to be allowed to send it: the limits, then the route. */
    function admitted(): Promise<Response | undefined> | Response | undefined {
      const inboxPost = request.method === "POST" && INBOX_PATH.test(path);
      if (!counted && config.rateLimits && (path.startsWith("/api/") || inboxPost)) {
        // Servers posting to an inbox carry no token: they are counted by their address.
        const verdict = ctx.services.rateLimits.check({ method: request.method, path, ip: ipOf(), accountId: inboxPost ? null : peekAccountId(ctx, request) });
        // Counted by every process in PostgreSQL, the verdict is a round trip away.
        if (isThenable(verdict)) return verdict.then((v) => throttled(v) ?? route());
        const refused = throttled(verdict);
        if (refused) return refused;
      }
      return route();
    }

    /** The request past the limits: a stream, Fedify's, or the router's. */
    function route(): Promise<Response | undefined> | Response | undefined {
      if (streamingPath) {
        const response = handleStreaming(ctx, streaming, request, server as Server<unknown>, rawPath, requestId);
        if (response instanceof Promise) return response.then(finish);
        if (response) return finish(response);
        if (config.logRequests) log("info", "request", { method: request.method, path: redactPath(request.url), status: 101, request_id: requestId });
        return undefined;
      }
      const negotiated = federation !== null ? activityPathOf(path, request) : null;
      const forFederation = federation !== null && (negotiated !== null || isFederationPath(path));
      if (forFederation) {
        const refused = refusedSigner(request, (host) => ctx.services.federationDomains.refuses(host));
        if (refused) return finish(refused);
      }
      // Fedify first; what it does not serve (other paths below /users/, HTML) falls through to Elysia.
      // Fedify sees the request at PUBLIC_URL, as its sender signed it: behind a TLS proxy the
      // server is asked over plain http at another address, and an RFC 9421 signature covers
      // the scheme and authority of the public URL.
      const passOn = (r: Request) => app.handle(backFromFedify(r, request));
      const handled =
        forFederation && federation !== null
          ? forFedify(request, publicOrigin, bodyLimit(request.method, path), negotiated).then((r) =>
              r instanceof Response ? r : federation.fetch(r, { contextData: undefined, onNotFound: passOn, onNotAcceptable: passOn, onUnauthorized: unauthorizedFetch }),
            )
          : app.handle(request);
      return inFlight.track(handled)
        .then(finish, (e) => {
          if (e instanceof ApiError) return finish(jsonError(e.status, e.message));
          log("error", "request failed outside the router", { error: String(e).split("\n")[0] });
          return finish(jsonError(500, "There was a problem processing your request"));
        })
        // The files its multipart body was read into: the route has taken what it keeps.
        .finally(() => removeUploads(meta.uploads));
    }
  };
}

/**
 * The request as Fedify should see it: addressed to the public origin, with its body read
 * under the cap (Fedify reads whole bodies, and one sent without a length would otherwise
 * be held however large: past the cap it is 413, through the catch below).
 */
async function forFedify(request: Request, publicOrigin: string, limit: number, pathname: string | null = null): Promise<Request | Response> {
  const url = new URL(request.url);
  const body = request.body ? ((await readLimited(request, limit)) as Uint8Array<ArrayBuffer>) : null;
  if (request.method === "POST" && INBOX_PATH.test(routePath(url.pathname))) {
    const refusal = inboxBodyRefusal(request.headers, body);
    if (refusal) return refusal;
  }
  const routed = new Request(publicOrigin + (pathname ?? url.pathname) + url.search, { method: request.method, headers: request.headers, body });
  // Negotiated (GET only): its signature covers the path it was sent to, not the one routed.
  if (pathname !== null) routedFrom(routed, new Request(publicOrigin + url.pathname + url.search, { method: request.method, headers: request.headers }));
  return routed;
}

/**
 * What Fedify passes on, handed to the router at the address the server was asked at (the
 * path Fedify saw, which negotiation may have changed). The router reads the path from the
 * first slash after "http://", all Bun ever hands it: Fedify's copy is at PUBLIC_URL, and
 * behind a TLS proxy "https://social.example/users/alice" would be routed as
 * "/social.example/users/alice", a 404 instead of the profile's redirect.
 */
function backFromFedify(passed: Request, original: Request): Request {
  const url = new URL(passed.url);
  const back = new Request(new URL(original.url).origin + url.pathname + url.search, {
    method: passed.method,
    headers: passed.headers,
    body: passed.bodyUsed ? null : passed.body,
  });
  setMeta(back, getMeta(original));
  return back;
}

/**
 * Bodies past their cap are refused from the declared length, before any byte is read.
 * Bodies sent without a length are counted as they are read (see input.ts).
 */
function tooLarge(request: Request, path: string): Response | null {
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length === 0) return null;
  if (length > bodyLimit(request.method, path)) return jsonError(413, "Request body is too large");
  return null;
}
