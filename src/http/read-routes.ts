import { isStreamingPath } from "./streaming.ts";

/**
 * What a serving thread that only reads (src/threads) answers itself: GET and HEAD of the
 * routes below, which read and write nothing, start no work elsewhere and hold nothing in
 * the main thread's memory. Every other request (any write, OAuth, the pages for members and
 * staff, media uploads, the inboxes and everything of Fedify, and the reads that can set off
 * work: a signed-in look at a remote profile fetches its posts, a search may resolve) is
 * passed to the main thread, which owns writes. A route missing here
 * is only slower, never wrong: that is the default a new route gets
 * (test/server/threads-routes.test.ts checks every route of the router against this list).
 *
 * A thread's context is answered here unless it would start or tell of work the main thread
 * does (its missing posts fetched, its fill: RemoteThreads decides on what it reads, and
 * throws OwnersWork); that answer is marked (`NEEDS_OWNER`, OWNERS_WORK) and the request
 * passed on. Should a read here still try to write (SQLite refuses it on the thread's
 * read-only connection), the answer is marked so too: the safety net, logged so that the
 * route can be taken off the list.
 */
const READS: RegExp[] = [
  // Statuses and what hangs off them (a context that starts or tells of a fill is passed on: above).
  /^\/api\/v1\/statuses\/[^/]+(?:\/(?:favourited_by|reblogged_by|history|source|card|quotes|context))?$/,
  /^\/api\/v1\/statuses$/,
  /^\/api\/v1\/polls\/[^/]+$/,
  /^\/api\/v1\/timelines\/(?:home|public|tag\/[^/]+|list\/[^/]+)$/,
  /^\/api\/v1\/(?:bookmarks|favourites|blocks|mutes|domain_blocks|endorsements|follow_requests|followed_tags|markers|preferences|conversations|suggestions|scheduled_statuses|custom_emojis|announcements|directory)$/,
  /^\/api\/v2\/suggestions$/,
  /^\/api\/v1\/scheduled_statuses\/[^/]+$/,
  /^\/api\/v1\/lists(?:\/[^/]+(?:\/accounts)?)?$/,
  /^\/api\/v[12]\/filters(?:\/[^/]+(?:\/(?:keywords|statuses))?)?$/,
  /^\/api\/v2\/filters\/(?:keywords|statuses)\/[^/]+$/,
  /^\/api\/v1\/tags\/[^/]+$/,
  /^\/api\/v1\/trends(?:\/(?:links|statuses|tags))?$/,
  // Notifications, v1 and v2 (their requests, policy and counts).
  /^\/api\/v1\/notifications(?:\/[^/]+|\/requests\/[^/]+)?$/,
  /^\/api\/v2\/notifications(?:\/[^/]+(?:\/accounts)?)?$/,
  // Accounts (account statuses, lookup and search: see CONDITIONS).
  /^\/api\/v1\/accounts\/(?:verify_credentials|relationships|familiar_followers|lookup|search)$/,
  /^\/api\/v1\/accounts(?:\/[^/]+(?:\/(?:followers|following|lists|featured_tags|identity_proofs|statuses))?)?$/,
  /^\/api\/v1\/featured_tags(?:\/suggestions)?$/,
  /^\/api\/v1\/apps\/verify_credentials$/,
  /^\/api\/v2\/search$/,
  /^\/api\/v1\/media\/[^/]+$/,
  // The server itself.
  /^\/api\/v[12]\/instance$/,
  /^\/api\/v1\/instance\/(?:activity|extended_description|peers|rules|translation_languages)$/,
  /^\/api\/v1\/streaming\/health$/,
  /^\/\.well-known\/(?:host-meta|nodeinfo|webfinger)$/,
  /^\/nodeinfo\/2\.0$/,
  /^\/api\/oembed$/,
  // Public pages and files (not asked for as ActivityPub: see CONDITIONS).
  /^\/$/,
  /^\/@[^/]+(?:\/[^/]+(?:\/embed)?|\/tagged\/[^/]+)?$/,
  /^\/tags\/[^/]+$/,
  /^\/(?:web\/rookery\.css|favicon\.ico|avatars\/original\/missing\.png|headers\/original\/missing\.png)$/,
  /^\/system\/.+$/,
];

const ACTIVITY_TYPES = /application\/(activity\+json|ld\+json)/i;
const ACCOUNT_STATUSES = /^\/api\/v1\/accounts\/([^/]+)\/statuses$/;
const FALSE = /^(?:false|0|no|off|)$/i;

/**
 * Whether an account id is of this server: the thread reads it through the database port (a
 * promise, asked only of the one route that needs it); the tests answer at once.
 */
export type LocalAccount = (id: string) => boolean | Promise<boolean>;

/** Reads that are reads only for some callers. */
function conditionsAllow(path: string, request: Request, localAccount: LocalAccount): boolean | Promise<boolean> {
  // A page asked for as ActivityPub is Fedify's, which runs on the main thread.
  if (path.startsWith("/@") && ACTIVITY_TYPES.test(request.headers.get("accept") ?? "")) return false;
  // A search that resolves fetches from other servers, and stores what it finds.
  if ((path === "/api/v2/search" || path === "/api/v1/accounts/search") && !FALSE.test(new URL(request.url).searchParams.get("resolve") ?? "")) return false;
  // A remote account's handle is looked up at its server.
  if (path === "/api/v1/accounts/lookup" && (new URL(request.url).searchParams.get("acct") ?? "").replace(/^@/, "").includes("@")) return false;
  // A signed-in reader opening a remote profile has its posts fetched first.
  const statuses = ACCOUNT_STATUSES.exec(path);
  if (statuses && request.headers.has("authorization")) return localAccount(statuses[1]!);
  return true;
}

/** Whether a serving thread answers this request itself (`path` as routePath spells it). */
export function answersHere(request: Request, path: string, localAccount: LocalAccount): boolean | Promise<boolean> {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  // Streams are the thread's own: its hub is fed the main thread's events.
  if (isStreamingPath(path)) return true;
  if (!READS.some((r) => r.test(path))) return false;
  return conditionsAllow(path, request, localAccount);
}

/**
 * The header that marks an answer which came of a read that tried to write (the router's
 * error handler sets it on SQLITE_READONLY): the thread passes the request on instead. A
 * header, since the router hands back a Response of its own making.
 */
export const NEEDS_OWNER = "x-rookery-needs-owner";
/** NEEDS_OWNER's value for a read passed on as planned (not logged): it would set off the main thread's work. */
export const OWNERS_WORK = "work";
