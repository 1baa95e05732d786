import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { parseCidrList, type Cidr } from "./net/ip.ts";
import type { OutgoingLimits } from "./net/outgoing.ts";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  /** Host part of publicUrl (with port when not default): used in acct URIs and webfinger. */
  domain: string;
  /**
   * Who may sign up (Mastodon's registrations_mode): anyone (open), anyone but staff approve
   * them before they can sign in (approval), or nobody (closed). An invite link lets its
   * holder in whatever the mode, approved at once.
   */
  registrations: "open" | "approval" | "closed";
  /** Public reads need a signed-in user, and only allow-listed domains federate (Mastodon's LIMITED_FEDERATION_MODE). */
  whitelistMode: boolean;
  rateLimits: boolean;
  /** POSTs to the inboxes one address may make per period (counted while rateLimits is on); null: no inbox limit. */
  inboxRateLimit: { limit: number; periodMs: number } | null;
  trustedProxies: Cidr[];
  instanceTitle: string;
  contactEmail: string;
  /** Log one line per request to stdout. */
  logRequests: boolean;
  /** Background media processing jobs at a time. */
  mediaWorkers: number;
  /** ffmpeg processes at a time (video and audio): MEDIA_WORKERS when set, else one. */
  transcodeWorkers: number;
  /** ActivityPub: actor documents, inboxes and delivery. Off gives an island server. */
  federation: boolean;
  /** Outgoing requests may reach loopback, private and link-local addresses (tests, loopback set-ups only: SSRF). */
  allowPrivateAddresses: boolean;
  /** Copies of remote statuses' images kept here (on by default, as Mastodon and GoToSocial: readers' apps never ask other servers), and the bound of their total size in bytes. */
  remoteMediaCache: { maxTotalBytes: number } | null;
  /**
   * Mastodon's secure mode: collections and statuses are served only to signed requests, actor
   * documents unsigned only in their bare technical form, and our own fetches are signed.
   */
  authorizedFetch: boolean;
  /** Deadlines and concurrency of requests to other servers (src/net/outgoing.ts). */
  outgoing: OutgoingLimits;
  /** How fast imported lists are worked off: entries per period to any one server, and in all (null: no bound). */
  importRates: { perHost: { limit: number; periodMs: number } | null; total: { limit: number; periodMs: number } | null };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function choice<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = raw.trim().toLowerCase() as T;
  if (!allowed.includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")} (got "${raw}")`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = raw.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(value)) return true;
  if (["false", "0", "no", "off"].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 256) throw new ConfigError(`${name} must be a whole number from 1 to 256 (got "${raw}")`);
  return Number(raw);
}

function megabytes(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback * 1024 * 1024;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 1_000_000) throw new ConfigError(`${name} must be a whole number of megabytes from 1 to 1000000 (got "${raw}")`);
  return Number(raw) * 1024 * 1024;
}

/**
 * A limit written `<requests>/<seconds>` (2000/300: 2,000 in five minutes), or `off`. The
 * window is a fixed one, aligned like the other buckets' (see src/infra/rate-limits.ts).
 */
function perPeriod(env: Env, name: string, fallback: { limit: number; periodMs: number }): { limit: number; periodMs: number } | null {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (raw === "off") return null;
  const m = /^(\d{1,9})\/(\d{1,7})$/.exec(raw);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new ConfigError(`${name} must be <requests>/<seconds> (such as 2000/300) or off (got "${env[name]}")`);
  return { limit: Number(m[1]), periodMs: Number(m[2]) * 1000 };
}

/** Reads and validates the environment; throws ConfigError naming the variable at fault. */
export function loadConfig(env: Env = process.env): Config {
  const portRaw = env.PORT ?? "3000";
  const port = Number(portRaw);
  if (!/^\d+$/.test(portRaw.trim()) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be a whole number from 0 to 65535 (got "${portRaw}")`);
  }
  const host = (env.HOST ?? "127.0.0.1").trim();
  if (host === "") throw new ConfigError("HOST must not be empty");

  const dataDir = resolve(env.DATA_DIR && env.DATA_DIR.trim() !== "" ? env.DATA_DIR : "./data");

  const publicUrlRaw = env.PUBLIC_URL && env.PUBLIC_URL.trim() !== "" ? env.PUBLIC_URL.trim() : `http://localhost:${port}`;
  let url: URL;
  try {
    url = new URL(publicUrlRaw);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL (got "${publicUrlRaw}")`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`PUBLIC_URL must start with http:// or https:// (got "${publicUrlRaw}")`);
  }
  if (url.pathname !== "/" || url.search || url.hash) {
    throw new ConfigError(`PUBLIC_URL must be an origin without a path (got "${publicUrlRaw}")`);
  }

  let trustedProxies: Cidr[];
  try {
    trustedProxies = parseCidrList(env.TRUSTED_PROXIES ?? "");
  } catch (e) {
    throw new ConfigError(`TRUSTED_PROXIES ${(e as Error).message}`);
  }

  return {
    port,
    host,
    dataDir,
    publicUrl: url.origin,
    domain: url.host,
    registrations: choice(env, "REGISTRATIONS", ["open", "approval", "closed"] as const, "closed"),
    whitelistMode: bool(env, "WHITELIST_MODE", false),
    rateLimits: choice(env, "RATE_LIMITS", ["on", "off"] as const, "on") === "on",
    inboxRateLimit: perPeriod(env, "INBOX_RATE_LIMIT", { limit: 2000, periodMs: 5 * 60 * 1000 }),
    trustedProxies,
    instanceTitle: env.INSTANCE_TITLE?.trim() || "Rookery",
    contactEmail: env.CONTACT_EMAIL?.trim() || "",
    logRequests: bool(env, "LOG_REQUESTS", true),
    mediaWorkers: positiveInt(env, "MEDIA_WORKERS", Math.max(1, availableParallelism() - 1)),
    transcodeWorkers: positiveInt(env, "MEDIA_WORKERS", 1),
    federation: choice(env, "FEDERATION", ["on", "off"] as const, "on") === "on",
    allowPrivateAddresses: bool(env, "ALLOW_PRIVATE_ADDRESSES", false),
    remoteMediaCache: bool(env, "CACHE_REMOTE_MEDIA", true) ? { maxTotalBytes: megabytes(env, "REMOTE_MEDIA_CACHE_MB", 1024) } : null,
    authorizedFetch: bool(env, "AUTHORIZED_FETCH", false),
    outgoing: {
      // Mastodon gives a fetched document about 10 s in all.
      firstByteMs: positiveInt(env, "FETCH_TIMEOUT_SECONDS", 10) * 1000,
      totalMs: positiveInt(env, "FETCH_TIMEOUT_SECONDS", 10) * 1000,
      maxPerHost: positiveInt(env, "FETCH_MAX_PER_HOST", 8),
      maxTotal: positiveInt(env, "FETCH_MAX_CONCURRENT", 64),
    },
    // An imported entry is up to three requests to its server (WebFinger, the actor, the
    // activity): one entry a second there, five a second in all.
    importRates: { perHost: perPeriod(env, "IMPORT_RATE_PER_HOST", { limit: 60, periodMs: 60_000 }), total: perPeriod(env, "IMPORT_RATE", { limit: 300, periodMs: 60_000 }) },
  };
}
