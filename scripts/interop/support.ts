/** Small helpers of the interop scripts: a Mastodon-API client and a bounded wait. */
import { readFileSync } from "node:fs";

export const USER_AGENT = "rookery-interop/0.1 (+scripts/interop)";

export interface Res<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  json?: unknown;
  form?: Record<string, string>;
  multipart?: FormData;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
}

/**
 * A client of either server's Mastodon API: real requests with a User-Agent (GoToSocial
 * answers 418 without one), trusting the test certificate when given one (the script's own
 * process did not start with NODE_EXTRA_CA_CERTS), never following redirects.
 */
export class ApiClient {
  private ca: string | undefined;

  constructor(
    public base: string,
    public token?: string,
    private caFile?: string,
  ) {
    this.ca = caFile ? readFileSync(caFile, "utf8") : undefined;
  }

  withToken(token: string): ApiClient {
    return new ApiClient(this.base, token, this.caFile);
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Res<T>> {
    const url = new URL(path, this.base);
    if (options.query) for (const [k, v] of Object.entries(options.query)) for (const item of [v].flat()) url.searchParams.append(k, item);
    const headers: Record<string, string> = { "user-agent": USER_AGENT, accept: "application/json", ...options.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let body: BodyInit | undefined;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    } else if (options.form) {
      body = new URLSearchParams(options.form);
    } else if (options.multipart) {
      body = options.multipart;
    }
    const init: RequestInit & { tls?: { ca: string } } = { method, headers, body, redirect: "manual", signal: AbortSignal.timeout(30_000) };
    if (this.ca) init.tls = { ca: this.ca };
    const response = await fetch(url, init);
    const text = await response.text();
    const type = response.headers.get("content-type") ?? "";
    let parsed: unknown = text;
    if (type.includes("json") && text !== "") parsed = JSON.parse(text);
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("GET", path, options);
  }
  post<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("POST", path, options);
  }
  put<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("PUT", path, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("DELETE", path, options);
  }

  /** The raw bytes at a URL (media), with this client's trust but without its token. */
  async bytes(url: string): Promise<{ status: number; type: string; size: number }> {
    const init: RequestInit & { tls?: { ca: string } } = { headers: { "user-agent": USER_AGENT }, signal: AbortSignal.timeout(30_000) };
    if (this.ca) init.tls = { ca: this.ca };
    const response = await fetch(url, init);
    const buffer = await response.arrayBuffer();
    return { status: response.status, type: response.headers.get("content-type") ?? "", size: buffer.byteLength };
  }
}

export class Timeout extends Error {}

/**
 * Polls `probe` until it returns something other than null, undefined or false, for at most
 * `timeoutMs`; the error names what was awaited and the last thing the probe saw (`seen`).
 */
export async function waitFor<T>(what: string, probe: (seen: { last: string }) => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const seen = { last: "nothing yet" };
  for (;;) {
    const value = await probe(seen);
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Timeout(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}; last seen: ${seen.last}`);
    await Bun.sleep(150);
  }
}
