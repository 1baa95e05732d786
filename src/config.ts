import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { MAX_ID_WORKERS, type IdWorker } from "./ids.ts";
import { parseCidrList, type Cidr } from "./net/ip.ts";
import type { S3Settings } from "./media-files/s3-store.ts";
import type { OutgoingLimits } from "./net/outgoing.ts";
import { isPostgresUrl } from "./db/port.ts";
import { setting, settingGiven, type Env, type SettingName } from "./settings.ts";

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
  /**
   * Threads serving HTTP: the main one, which owns every write, the queues, the wheel and
   * federation, and `webThreads - 1` more that answer reads from their own read-only database
   * connection and pass anything else to it (src/threads).
   */
  webThreads: number;
  /** Which of the processes making ids on the database this one is (src/ids.ts): 0 of 1 but with several processes on PostgreSQL. */
  idWorker: IdWorker;
  /** ID_WORKER was given: on PostgreSQL none is leased from the database then. */
  idWorkerGiven: boolean;
  /** Where the data is: SQLite in DATA_DIR (the default), or PostgreSQL at DATABASE_URL. */
  database: { kind: "sqlite" } | { kind: "postgres"; url: string };
  /** Background media processing jobs at a time. */
  mediaWorkers: number;
  /** ffmpeg processes at a time (video and audio): MEDIA_WORKERS when set, else one. */
  transcodeWorkers: number;
  /** ActivityPub: actor documents, inboxes and delivery. Off gives an island server. */
  federation: boolean;
  /** Outgoing requests may reach loopback, private and link-local addresses (tests, loopback set-ups only: SSRF). */
  allowPrivateAddresses: boolean;
  /** Where media are kept (MEDIA_STORAGE): files under DATA_DIR/media, or an S3-compatible bucket. */
  mediaStorage: { kind: "files" } | ({ kind: "s3" } & S3Settings);
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

// Each reads the setting's value, or its default from the table (src/settings.ts): a default
// is parsed like any value, so the table and the behaviour cannot disagree.

function choice<T extends string>(env: Env, name: SettingName, allowed: readonly T[]): T {
  const raw = setting(name, env) ?? "";
  const value = raw.trim().toLowerCase() as T;
  if (!allowed.includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")} (got "${raw}")`);
  }
  return value;
}

function bool(env: Env, name: SettingName): boolean {
  const raw = setting(name, env) ?? "";
  const value = raw.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(value)) return true;
  if (["false", "0", "no", "off"].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

/** A whole number from 1 to 256; `fallback` only for a setting whose default is worked out (MEDIA_WORKERS). */
function positiveInt(env: Env, name: SettingName, fallback?: number): number {
  const raw = setting(name, env);
  if (raw === undefined && fallback !== undefined) return fallback;
  if (raw === undefined || !/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 256) throw new ConfigError(`${name} must be a whole number from 1 to 256 (got "${raw ?? ""}")`);
  return Number(raw);
}

function megabytes(env: Env, name: SettingName): number {
  const raw = setting(name, env) ?? "";
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 1_000_000) throw new ConfigError(`${name} must be a whole number of megabytes from 1 to 1000000 (got "${raw}")`);
  return Number(raw) * 1024 * 1024;
}

/**
 * A limit written `<requests>/<seconds>` (2000/300: 2,000 in five minutes), or `off`. The
 * window is a fixed one, aligned like the other buckets' (see src/infra/rate-limits.ts).
 */
function perPeriod(env: Env, name: SettingName): { limit: number; periodMs: number } | null {
  const given = setting(name, env) ?? "";
  const raw = given.trim().toLowerCase();
  if (raw === "off") return null;
  const m = /^(\d{1,9})\/(\d{1,7})$/.exec(raw);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new ConfigError(`${name} must be <requests>/<seconds> (such as 2000/300) or off (got "${given}")`);
  return { limit: Number(m[1]), periodMs: Number(m[2]) * 1000 };
}

/** `<number>/<how many>`: 0/1 for the one process, 2/4 for the third of four. */
function idWorker(env: Env): IdWorker {
  const given = setting("ID_WORKER", env) ?? "";
  const m = /^(\d{1,3})\/(\d{1,3})$/.exec(given.trim());
  const worker = Number(m?.[1]);
  const workers = Number(m?.[2]);
  if (!m || workers < 1 || workers > MAX_ID_WORKERS || worker >= workers) {
    throw new ConfigError(`ID_WORKER must be <number>/<how many>, how many from 1 to ${MAX_ID_WORKERS} and the number below it (such as 0/1 or 2/4) (got "${given}")`);
  }
  return { worker, workers };
}

/** DATABASE_URL: unset for SQLite, else a PostgreSQL URL naming its database. */
function database(env: Env): Config["database"] {
  const url = (setting("DATABASE_URL", env) ?? "").trim();
  if (url === "") return { kind: "sqlite" };
  const what = "a PostgreSQL URL, postgres://user:password@host:5432/database (unset: SQLite in DATA_DIR)";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`DATABASE_URL must be ${what}`);
  }
  // The URL is not repeated: it may hold the password.
  if (!isPostgresUrl(url) || parsed.pathname.length <= 1) throw new ConfigError(`DATABASE_URL must be ${what}`);
  return { kind: "postgres", url };
}

/** An http(s) URL with no query or fragment, without its trailing slash; `what` names it in the error. */
function baseUrl(raw: string, name: SettingName, what: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be ${what} (got "${raw}")`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash || url.username || url.password) throw new ConfigError(`${name} must be ${what} (got "${raw}")`);
  return url.href.replace(/\/+$/, "");
}

/** MEDIA_STORAGE and, for s3, the bucket's settings (named as Mastodon names them where they map). */
function mediaStorage(env: Env): Config["mediaStorage"] {
  if (choice(env, "MEDIA_STORAGE", ["files", "s3"] as const) === "files") return { kind: "files" };
  const region = (setting("S3_REGION", env) ?? "").trim();
  const given = (setting("S3_ENDPOINT", env) ?? "").trim();
  const endpoint = given ? baseUrl(given, "S3_ENDPOINT", "an http(s) URL such as https://s3.eu-central-1.amazonaws.com") : `https://s3.${region}.amazonaws.com`;
  const required = (name: SettingName, value: string | undefined) => {
    if (!value?.trim()) throw new ConfigError(`${name} must be set when MEDIA_STORAGE is s3`);
    return value.trim();
  };
  const bucket = required("S3_BUCKET", setting("S3_BUCKET", env));
  const accessKeyId = required("AWS_ACCESS_KEY_ID", setting("AWS_ACCESS_KEY_ID", env));
  const secretAccessKey = required("AWS_SECRET_ACCESS_KEY", setting("AWS_SECRET_ACCESS_KEY", env));
  // Mastodon's S3_ALIAS_HOST is a host (and path) served over https; a whole URL is taken too.
  const alias = (setting("S3_ALIAS_HOST", env) ?? "").trim();
  const aliasUrl = alias ? baseUrl(/^https?:\/\//i.test(alias) ? alias : `https://${alias}`, "S3_ALIAS_HOST", "a host such as files.example.com, or an http(s) URL") : null;
  return { kind: "s3", endpoint, bucket, region, accessKeyId, secretAccessKey, aliasUrl };
}

/** Reads and validates the environment; throws ConfigError naming the variable at fault. */
export function loadConfig(env: Env = process.env): Config {
  const portRaw = setting("PORT", env) ?? "";
  const port = Number(portRaw);
  if (!/^\d+$/.test(portRaw.trim()) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be a whole number from 0 to 65535 (got "${portRaw}")`);
  }
  const host = (setting("HOST", env) ?? "").trim();

  const dataDir = resolve(setting("DATA_DIR", env) ?? "");

  const publicUrlRaw = setting("PUBLIC_URL", env)?.trim() || `http://localhost:${port}`;
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
    trustedProxies = parseCidrList(setting("TRUSTED_PROXIES", env) ?? "");
  } catch (e) {
    throw new ConfigError(`TRUSTED_PROXIES ${(e as Error).message}`);
  }

  const webThreads = positiveInt(env, "WEB_THREADS");
  const db = database(env);
  // Serving threads split reads from SQLite's one writer; PostgreSQL takes writes from any
  // connection, and scales by processes.
  if (db.kind === "postgres" && webThreads > 1) throw new ConfigError("WEB_THREADS must be 1 with DATABASE_URL (PostgreSQL): run more processes instead");

  return {
    port,
    host,
    dataDir,
    publicUrl: url.origin,
    domain: url.host,
    registrations: choice(env, "REGISTRATIONS", ["open", "approval", "closed"] as const),
    whitelistMode: bool(env, "WHITELIST_MODE"),
    rateLimits: choice(env, "RATE_LIMITS", ["on", "off"] as const) === "on",
    inboxRateLimit: perPeriod(env, "INBOX_RATE_LIMIT"),
    trustedProxies,
    instanceTitle: (setting("INSTANCE_TITLE", env) ?? "").trim(),
    contactEmail: (setting("CONTACT_EMAIL", env) ?? "").trim(),
    logRequests: bool(env, "LOG_REQUESTS"),
    webThreads,
    idWorker: idWorker(env),
    idWorkerGiven: settingGiven("ID_WORKER", env),
    database: db,
    mediaWorkers: positiveInt(env, "MEDIA_WORKERS", Math.max(1, availableParallelism() - 1)),
    transcodeWorkers: positiveInt(env, "MEDIA_WORKERS", 1),
    federation: choice(env, "FEDERATION", ["on", "off"] as const) === "on",
    allowPrivateAddresses: bool(env, "ALLOW_PRIVATE_ADDRESSES"),
    mediaStorage: mediaStorage(env),
    remoteMediaCache: bool(env, "CACHE_REMOTE_MEDIA") ? { maxTotalBytes: megabytes(env, "REMOTE_MEDIA_CACHE_MB") } : null,
    authorizedFetch: bool(env, "AUTHORIZED_FETCH"),
    outgoing: {
      // Mastodon gives a fetched document about 10 s in all.
      firstByteMs: positiveInt(env, "FETCH_TIMEOUT_SECONDS") * 1000,
      totalMs: positiveInt(env, "FETCH_TIMEOUT_SECONDS") * 1000,
      maxPerHost: positiveInt(env, "FETCH_MAX_PER_HOST"),
      maxTotal: positiveInt(env, "FETCH_MAX_CONCURRENT"),
    },
    // An imported entry is up to three requests to its server (WebFinger, the actor, the
    // activity): one entry a second there, five a second in all.
    importRates: { perHost: perPeriod(env, "IMPORT_RATE_PER_HOST"), total: perPeriod(env, "IMPORT_RATE") },
  };
}
