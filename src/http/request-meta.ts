import type { Ip } from "../net/ip.ts";
import type { Authentication } from "../services/oauth/tokens.ts";

/** What the edge learns about a request before routing, shared with the route handlers. */
export interface RequestMeta {
  id: string;
  ip: Ip | null;
  /**
   * What the request's token speaks for, as the edge authenticated it before routing:
   * undefined when the edge did not (a request handed straight to the router), null when no
   * token was sent or the one sent was refused (`refusedToken`).
   */
  auth?: Authentication | null;
  /** A token was sent and refused (unknown, revoked): an error even where none is needed. */
  refusedToken?: boolean;
  /** Merged query and body parameters, parsed once. */
  params?: Record<string, unknown>;
  /** Files a multipart body was read into, removed once the request is answered. */
  uploads?: string[];
}

const metas = new WeakMap<Request, RequestMeta>();

/**
 * Every field is the object's own (never inherited), whatever anything did to Object.prototype.
 * `ip`: the address, or how to find it when it is first read (the edge's lookup is a system call).
 */
export function newMeta(id: string, ip: Ip | null | (() => Ip | null)): RequestMeta {
  if (typeof ip !== "function") return { id, ip, auth: undefined, refusedToken: false, params: undefined, uploads: undefined };
  return {
    id,
    get ip() {
      return ip();
    },
    auth: undefined,
    refusedToken: false,
    params: undefined,
    uploads: undefined,
  };
}

export function setMeta(request: Request, meta: RequestMeta) {
  metas.set(request, meta);
}

export function getMeta(request: Request): RequestMeta {
  let meta = metas.get(request);
  if (!meta) {
    // Requests handed straight to app.handle (unit tests) have no edge metadata.
    meta = newMeta(crypto.randomUUID(), null);
    metas.set(request, meta);
  }
  return meta;
}
