import { AsyncLocalStorage } from "node:async_hooks";
import { lookup } from "node:dns/promises";
import { formatIp, parseIp } from "./ip.ts";
import { isPublicAddress } from "./public-address.ts";
import { RequestSlots } from "./request-slots.ts";

/** The addresses a host name resolves to (injectable: tests map names to loopback). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Never to be sent, whenever asked: not http(s), a private address, a domain this server does not federate with. */
export class OutgoingRefused extends Error {}
/** The answer is larger than what is read of its kind. */
export class OutgoingTooLarge extends Error {}
/** A deadline passed: connecting and the first byte, or the whole exchange. */
export class OutgoingTimeout extends Error {}

/** What is read of each kind of answer at most (Mastodon reads 1 MB of ActivityPub JSON). */
export const MAX_DOCUMENT_BYTES = 1024 * 1024;
/** Bodies nobody needs whole (errors, redirects, answers to deliveries): this much is kept, the rest dropped. */
const MAX_KEPT_ERROR_BYTES = 16 * 1024;
const MAX_REDIRECTS = 5;

export interface OutgoingLimits {
  /** From the call to the response's headers: resolving, waiting for a slot, connecting, first byte. */
  firstByteMs: number;
  /** The whole exchange for documents (JSON, WebFinger, NodeInfo, contexts) and answers to POSTs. */
  totalMs: number;
  maxPerHost: number;
  maxTotal: number;
}

export interface OutgoingDeps {
  /** ALLOW_PRIVATE_ADDRESSES: loopback and private addresses may be reached (tests, closed networks). */
  allowPrivateAddresses: boolean;
  /** A host this server does not federate with (blocked, or not allowed in WHITELIST_MODE). */
  refusesHost: (host: string) => boolean;
  resolve: Resolver;
  userAgent: string;
  limits: OutgoingLimits;
  /** What sends a checked request to its address: the platform's fetch (a test may watch it instead). */
  transport?: typeof fetch;
}

export interface OutgoingOptions {
  /** The most that is read of the body (OutgoingTooLarge past it, whatever Content-Length said). */
  maxBytes?: number;
  /** The whole exchange, body included (default: the limits' totalMs). */
  totalMs?: number;
  /** Not a peer (a push service): the domain rules of federation do not apply. */
  anyDomain?: boolean;
}

/** The platform's fetch, taken before anything routes it here. */
const platformFetch: typeof fetch = globalThis.fetch;
const scope = new AsyncLocalStorage<OutgoingHttp>();
let routed = false;

/**
 * Every request this server makes to another server: the name resolved once, every address
 * it resolves to checked against the private ranges, and the request sent to the address that
 * was checked (so a name that answers differently to a second lookup reaches nothing new);
 * every redirect hop checked the same way; a deadline for the first byte and one for the
 * whole exchange; bodies read under a cap that fits their kind, streamed, never held whole;
 * and a bound on concurrent requests per host and in all.
 *
 * Fedify fetches with the global `fetch` (deliveries, WebFinger, its document loaders), with
 * no option to hand it another. Its calls made inside `run()` are routed here: the global
 * is replaced once by one that sends a call to the OutgoingHttp of the scope it was made in,
 * and to the platform's fetch outside any scope (this process's own tests and tools).
 */
export class OutgoingHttp {
  private readonly slots: RequestSlots;

  constructor(private readonly deps: OutgoingDeps) {
    this.slots = new RequestSlots(deps.limits.maxPerHost, deps.limits.maxTotal);
  }

  /** Runs `work` with every global `fetch` inside it (Fedify's) sent through this module. */
  run<T>(work: () => T): T {
    if (!routed) {
      routed = true;
      const scoped = (input: RequestInfo | URL, init?: RequestInit) => {
        const outgoing = scope.getStore();
        return outgoing ? outgoing.fetch(input, init) : platformFetch(input, init);
      };
      globalThis.fetch = Object.assign(scoped, { preconnect: platformFetch.preconnect }) as typeof fetch;
    }
    return scope.run(this, work);
  }

  /**
   * Why a request to this URL would be refused for good (not http(s), a refused domain, a
   * name that resolves to a private address), or null: for a queue to drop, not retry, what
   * can never be sent. A name that does not resolve now is not refused for good.
   */
  async refusal(url: string): Promise<string | null> {
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return `not an http(s) URL: ${parsed.protocol}`;
      const host = parsed.hostname.replace(/\.$/, "");
      if (this.deps.refusesHost(host)) return `${host} is a domain this server does not federate with`;
      if (!this.deps.allowPrivateAddresses) await this.addressOf(host, AbortSignal.timeout(this.deps.limits.firstByteMs));
      return null;
    } catch (e) {
      return e instanceof OutgoingRefused || e instanceof TypeError ? String(e.message) : null;
    }
  }

  /** Open requests now (to one host, or in all): for tests and the operator's report. */
  inFlight(host?: string): number {
    return this.slots.inUse(host);
  }

  /**
   * fetch() with the guards above. `redirect: "manual"` returns a 3xx as it is (the caller
   * asks for the next hop, which is checked again); otherwise GET and HEAD follow up to five.
   */
  async fetch(input: RequestInfo | URL, init: RequestInit = {}, options: OutgoingOptions = {}): Promise<Response> {
    const request = new Request(input, init);
    const method = request.method.toUpperCase();
    const body = method === "GET" || method === "HEAD" ? null : new Uint8Array(await request.arrayBuffer());
    const maxBytes = options.maxBytes ?? MAX_DOCUMENT_BYTES;
    const totalMs = options.totalMs ?? this.deps.limits.totalMs;
    const follow = (init.redirect ?? request.redirect) !== "manual" && (method === "GET" || method === "HEAD");
    const deadline = new AbortController();
    const totalTimer = setTimeout(() => deadline.abort(new OutgoingTimeout(`no complete answer within ${totalMs} ms`)), totalMs);
    const signal = init.signal ? AbortSignal.any([deadline.signal, init.signal]) : deadline.signal;
    let url = new URL(request.url);
    try {
      for (let hop = 0; ; hop++) {
        const { response, release } = await this.send(url, method, request.headers, body, signal, options.anyDomain === true);
        const location = response.headers.get("location");
        if (follow && response.status >= 300 && response.status < 400 && location !== null) {
          release();
          await response.body?.cancel().catch(() => {});
          if (hop >= MAX_REDIRECTS) throw new OutgoingRefused(`more than ${MAX_REDIRECTS} redirects from ${request.url}`);
          url = new URL(location, url);
          continue;
        }
        return await this.answer(url, method, response, release, maxBytes, signal, () => clearTimeout(totalTimer));
      }
    } catch (e) {
      clearTimeout(totalTimer);
      throw signal.aborted && signal.reason instanceof Error ? signal.reason : e;
    }
  }

  /** The body of a GET, read under the cap. */
  async bytes(url: string, options: OutgoingOptions & { accept: string; signal?: AbortSignal }): Promise<Uint8Array> {
    const response = await this.fetch(url, { headers: { accept: options.accept }, signal: options.signal }, options);
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`${url} answered ${response.status}`);
    }
    return new Uint8Array(await response.arrayBuffer());
  }

  /** One hop: the name resolved and checked, a slot taken, the request sent to the checked address. */
  private async send(url: URL, method: string, headers: Headers, body: Uint8Array | null, signal: AbortSignal, anyDomain: boolean): Promise<{ response: Response; release: () => void }> {
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new OutgoingRefused(`not an http(s) URL: ${url.protocol}`);
    const host = url.hostname.replace(/\.$/, "");
    if (!anyDomain && this.deps.refusesHost(host)) throw new OutgoingRefused(`${host} is a domain this server does not federate with`);
    // The connection ends at the first-byte deadline until the headers came, and at the whole
    // exchange's deadline (or the caller's signal) until the body is read.
    const connection = new AbortController();
    const firstByteMs = this.deps.limits.firstByteMs;
    const firstByte = setTimeout(() => connection.abort(new OutgoingTimeout(`no answer from ${host} within ${firstByteMs} ms`)), firstByteMs);
    const ended = () => connection.abort(signal.reason);
    if (signal.aborted) ended();
    else signal.addEventListener("abort", ended, { once: true });
    let release: (() => void) | null = null;
    try {
      const address = await this.addressOf(host, connection.signal);
      release = await this.slots.acquire(host, connection.signal);
      const target = new URL(url);
      target.hostname = address.includes(":") ? `[${address}]` : address;
      const sent = new Headers(headers);
      sent.set("host", url.host);
      if (!sent.has("user-agent")) sent.set("user-agent", this.deps.userAgent);
      const tls = url.protocol === "https:" && parseIp(host) === null ? { serverName: host } : undefined;
      const response = await (this.deps.transport ?? platformFetch)(target, { method, headers: sent, body: body as Uint8Array<ArrayBuffer> | null, redirect: "manual", signal: connection.signal, tls } as RequestInit);
      return { response, release };
    } catch (e) {
      release?.();
      throw connection.signal.aborted ? connection.signal.reason : e;
    } finally {
      clearTimeout(firstByte);
    }
  }

  /** The address to connect to: a literal as it is, a name resolved once; every address checked. */
  private async addressOf(host: string, signal: AbortSignal): Promise<string> {
    const literal = parseIp(host);
    const addresses = literal ? [host] : await untilAborted(this.deps.resolve(host), signal);
    const parsed = addresses.map((a) => parseIp(a)).filter((ip) => ip !== null);
    if (parsed.length === 0) throw new Error(`${host} resolves to no address`);
    if (!this.deps.allowPrivateAddresses) {
      const refused = parsed.find((ip) => !isPublicAddress(ip));
      if (refused) throw new OutgoingRefused(`${host} resolves to ${formatIp(refused)}, which is not a public address`);
    }
    return formatIp(parsed[0]!);
  }

  /**
   * The answer handed back: a body nobody needs whole (an error, an answer to a POST) kept up
   * to a few KB and the slot freed at once; any other read through a counting stream that
   * stops at the cap and frees the slot when it ends, however it ends.
   */
  private async answer(url: URL, method: string, response: Response, release: () => void, maxBytes: number, signal: AbortSignal, done: () => void): Promise<Response> {
    const finish = () => {
      release();
      done();
    };
    const declared = Number(response.headers.get("content-length") ?? "NaN");
    const small = !response.ok || method !== "GET";
    if (!small && declared > maxBytes) {
      finish();
      await response.body?.cancel().catch(() => {});
      throw new OutgoingTooLarge(`${url.href} announces ${declared} bytes, more than ${maxBytes}`);
    }
    const init = { status: response.status, statusText: response.statusText, headers: response.headers };
    const nullBody = response.body === null || method === "HEAD" || [101, 204, 205, 304].includes(response.status);
    let result: Response;
    if (nullBody) {
      finish();
      await response.body?.cancel().catch(() => {});
      result = new Response(null, init);
    } else if (small) {
      const kept = await readUpTo(response.body!, MAX_KEPT_ERROR_BYTES).finally(finish);
      result = new Response(kept, init);
    } else {
      result = new Response(cappedStream(response.body!, maxBytes, url, signal, finish), init);
    }
    // Fedify takes the document's URL from the response (the platform's is the address connected to).
    Object.defineProperty(result, "url", { value: url.href });
    return result;
  }
}

/** The promise's outcome, or the signal's reason if it aborts first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** The first `max` bytes of a body; the rest is cancelled unread. */
async function readUpTo(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value.subarray(0, max - size));
      size += Math.min(value.byteLength, max - size);
    }
  } catch {
    // A body cut off midway is what was read of it.
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks) as Uint8Array<ArrayBuffer>;
}

/** The body passed through as it arrives, failing once more than `max` bytes came, or at the deadline. */
function cappedStream(body: ReadableStream<Uint8Array>, max: number, url: URL, signal: AbortSignal, finish: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let size = 0;
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  const end = () => {
    signal.removeEventListener("abort", onAbort);
    finish();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
          return;
        }
        size += value.byteLength;
        if (size > max) throw new OutgoingTooLarge(`${url.href} sent more than ${max} bytes`);
        controller.enqueue(value);
      } catch (e) {
        end();
        await reader.cancel().catch(() => {});
        controller.error(signal.aborted && signal.reason instanceof Error ? signal.reason : e);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason).catch(() => {});
    },
  });
}
