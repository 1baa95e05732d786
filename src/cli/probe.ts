import http from "node:http";
import https from "node:https";
import tls from "node:tls";

// The requests of `rookery federation check`. They go to this server's own public name, not to
// another server, so not through src/net/outgoing.ts (which refuses the loopback and private
// addresses a server's own name may well resolve to here). node:http rather than fetch: the
// forwarded-address check must choose the address a request leaves from.

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  ms: number;
}

export interface ProbeOptions {
  headers?: Record<string, string>;
  /** The local address the request leaves from (a loopback alias: see the forwarded-address check). */
  localAddress?: string;
  /** Accept a certificate that is not valid (the certificate check has said so already). */
  insecure?: boolean;
  timeoutMs?: number;
}

/** What a GET answers, up to 1 MB of its body; rejects with the error of the connection. */
export function get(url: string, options: ProbeOptions = {}): Promise<Answer> {
  const started = performance.now();
  const target = new URL(url);
  const client = target.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      target,
      {
        method: "GET",
        headers: { "user-agent": "Rookery federation check", ...options.headers },
        localAddress: options.localAddress,
        rejectUnauthorized: !options.insecure,
        timeout: options.timeoutMs ?? 10_000,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
          if (body.length > 1024 * 1024) response.destroy(new Error("the answer is over 1 MB"));
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body, ms: performance.now() - started }));
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(Object.assign(new Error(`no answer within ${Math.round((options.timeoutMs ?? 10_000) / 1000)} s`), { code: "ETIMEDOUT" })));
    request.on("error", reject);
    request.end();
  });
}

/** A connection error in the operator's words. */
export function reasonOf(e: unknown): string {
  const error = e as { code?: string; message?: string };
  switch (error.code) {
    case "ECONNREFUSED":
      return "connection refused (nothing listens there: is the proxy running?)";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the name does not resolve (no DNS record, or no network)";
    case "ETIMEDOUT":
      return error.message ?? "timed out";
    case "ECONNRESET":
      return "the connection was reset";
    default:
      return `${error.message ?? String(e)}${error.code && !(error.message ?? "").includes(error.code) ? ` (${error.code})` : ""}`;
  }
}

export interface Certificate {
  /** Why a client refuses it, or null when it is valid for the host. */
  refusal: string | null;
  validTo: number;
  issuer: string;
  names: string;
}

/** The certificate the host presents, and whether a client with the system's CAs (and NODE_EXTRA_CA_CERTS) accepts it for that name. */
export function certificateOf(host: string, port: number, timeoutMs = 10_000): Promise<Certificate> {
  const servername = /^[\d.]+$|:/.test(host) ? undefined : host;
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: host.replace(/^\[|\]$/g, ""), port, servername, rejectUnauthorized: false, timeout: timeoutMs }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      if (!cert || !cert.valid_to) return reject(new Error("no certificate was presented"));
      const identity = tls.checkServerIdentity(host.replace(/^\[|\]$/g, ""), cert);
      const refusal = !socket.authorized ? String(socket.authorizationError ?? "not trusted") : identity ? identity.message : null;
      const issuer = cert.issuer ? (cert.issuer.O ?? cert.issuer.CN ?? "") : "";
      resolve({ refusal, validTo: Date.parse(cert.valid_to), issuer: String(issuer), names: cert.subjectaltname ?? "" });
    });
    socket.on("timeout", () => socket.destroy(Object.assign(new Error("no TLS handshake within the deadline"), { code: "ETIMEDOUT" })));
    socket.on("error", reject);
  });
}
