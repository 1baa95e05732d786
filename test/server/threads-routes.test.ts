import { afterAll, beforeAll, expect, test } from "bun:test";
import { answersHere } from "../../src/http/read-routes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The list of reads a serving thread answers itself (src/http/read-routes.ts) against every
 * route of the router: no write is ever answered there, and the GET routes it answers are
 * exactly these, so a new route is passed to the main thread until someone adds it here and
 * there on purpose.
 */
const ANSWERED_BY_SERVING_THREADS = `
GET /
GET /.well-known/host-meta
GET /.well-known/nodeinfo
GET /.well-known/webfinger
GET /:handle
GET /:handle/:id
GET /:handle/:id/embed
GET /:handle/tagged/:tag
GET /api/oembed
GET /api/v1/accounts
GET /api/v1/accounts/:id
GET /api/v1/accounts/:id/featured_tags
GET /api/v1/accounts/:id/followers
GET /api/v1/accounts/:id/following
GET /api/v1/accounts/:id/identity_proofs
GET /api/v1/accounts/:id/lists
GET /api/v1/accounts/:id/statuses
GET /api/v1/accounts/familiar_followers
GET /api/v1/accounts/lookup
GET /api/v1/accounts/relationships
GET /api/v1/accounts/search
GET /api/v1/accounts/verify_credentials
GET /api/v1/announcements
GET /api/v1/apps/verify_credentials
GET /api/v1/blocks
GET /api/v1/bookmarks
GET /api/v1/conversations
GET /api/v1/custom_emojis
GET /api/v1/directory
GET /api/v1/domain_blocks
GET /api/v1/endorsements
GET /api/v1/favourites
GET /api/v1/featured_tags
GET /api/v1/featured_tags/suggestions
GET /api/v1/filters
GET /api/v1/filters/:id
GET /api/v1/follow_requests
GET /api/v1/followed_tags
GET /api/v1/instance
GET /api/v1/instance/activity
GET /api/v1/instance/extended_description
GET /api/v1/instance/peers
GET /api/v1/instance/rules
GET /api/v1/instance/translation_languages
GET /api/v1/lists
GET /api/v1/lists/:id
GET /api/v1/lists/:id/accounts
GET /api/v1/markers
GET /api/v1/media/:id
GET /api/v1/mutes
GET /api/v1/notifications
GET /api/v1/notifications/:id
GET /api/v1/notifications/policy
GET /api/v1/notifications/requests
GET /api/v1/notifications/requests/:id
GET /api/v1/notifications/requests/merged
GET /api/v1/notifications/unread_count
GET /api/v1/polls/:id
GET /api/v1/preferences
GET /api/v1/scheduled_statuses
GET /api/v1/scheduled_statuses/:id
GET /api/v1/statuses
GET /api/v1/statuses/:id
GET /api/v1/statuses/:id/card
GET /api/v1/statuses/:id/context
GET /api/v1/statuses/:id/favourited_by
GET /api/v1/statuses/:id/history
GET /api/v1/statuses/:id/quotes
GET /api/v1/statuses/:id/reblogged_by
GET /api/v1/statuses/:id/source
GET /api/v1/streaming/health
GET /api/v1/suggestions
GET /api/v1/tags/:name
GET /api/v1/timelines/home
GET /api/v1/timelines/list/:id
GET /api/v1/timelines/public
GET /api/v1/timelines/tag/:hashtag
GET /api/v1/trends
GET /api/v1/trends/links
GET /api/v1/trends/statuses
GET /api/v1/trends/tags
GET /api/v2/filters
GET /api/v2/filters/:id
GET /api/v2/filters/:id/keywords
GET /api/v2/filters/:id/statuses
GET /api/v2/filters/keywords/:id
GET /api/v2/filters/statuses/:id
GET /api/v2/instance
GET /api/v2/notifications
GET /api/v2/notifications/:group_key
GET /api/v2/notifications/:group_key/accounts
GET /api/v2/notifications/policy
GET /api/v2/notifications/unread_count
GET /api/v2/search
GET /api/v2/suggestions
GET /avatars/original/missing.png
GET /favicon.ico
GET /headers/original/missing.png
GET /nodeinfo/2.0
GET /system/*
GET /tags/:name
GET /web/rookery.css
`.trim().split("\n");

let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.close());

/** A path the route answers: its parameters filled in (handles start with @, as the router's /:handle routes want). */
function example(path: string): string {
  return path.replace(/^\/:handle/, "/@alice").replace(/:[a-z_]+/g, "1").replace("*", "a/b.png");
}

const routes = () => [...new Set(((server.app as unknown as { routes: { method: string; path: string }[] }).routes).map((r) => `${r.method} ${r.path}`))];
const local = () => true;

test("no route but a GET or HEAD is answered by a serving thread: every write, OAuth and Fedify's paths go to the main thread", () => {
  const writes = routes().filter((r) => !r.startsWith("GET ") && !r.startsWith("HEAD "));
  expect(writes.length).toBeGreaterThan(100);
  for (const route of writes) {
    const [method, path] = route.split(" ") as [string, string];
    if (method === "ALL" || method === "WS") continue;
    expect([route, answersHere(new Request(`http://localhost${example(path)}`, { method }), example(path), local)]).toEqual([route, false]);
  }
  for (const path of ["/users/alice", "/users/alice/outbox", "/inbox", "/users/alice/inbox", "/emojis/1", "/oauth/authorize", "/api/v1_alpha/async_refreshes/1"]) {
    expect([path, answersHere(new Request(`http://localhost${path}`), path, local)]).toEqual([path, false]);
  }
});

test("the GET routes a serving thread answers are exactly the listed reads: a new route is passed to the main thread", () => {
  const answered = routes()
    .filter((r) => r.startsWith("GET "))
    .filter((r) => {
      const path = example(r.slice(4));
      return answersHere(new Request(`http://localhost${path}`), path, local);
    })
    .sort();
  expect(answered).toEqual([...ANSWERED_BY_SERVING_THREADS].sort());
});

test("reads that may fetch or store are passed on for the callers they would: resolving searches, remote lookups, ActivityPub pages, a signed-in look at a remote profile", () => {
  const ask = (path: string, headers: Record<string, string> = {}, isLocal = true) => answersHere(new Request(`http://localhost${path}`, { headers }), new URL(`http://localhost${path}`).pathname, () => isLocal);
  expect(ask("/api/v2/search?q=a")).toBe(true);
  expect(ask("/api/v2/search?q=a&resolve=false")).toBe(true);
  expect(ask("/api/v2/search?q=a&resolve=true")).toBe(false);
  expect(ask("/api/v1/accounts/search?q=a&resolve=1")).toBe(false);
  expect(ask("/api/v1/accounts/lookup?acct=alice")).toBe(true);
  expect(ask("/api/v1/accounts/lookup?acct=alice@remote.example")).toBe(false);
  expect(ask("/@alice", { accept: "application/activity+json" })).toBe(false);
  expect(ask("/@alice", { accept: "text/html" })).toBe(true);
  expect(ask("/api/v1/accounts/1/statuses", { authorization: "Bearer x" }, false)).toBe(false);
  expect(ask("/api/v1/accounts/1/statuses", { authorization: "Bearer x" }, true)).toBe(true);
  expect(ask("/api/v1/accounts/1/statuses", {}, false)).toBe(true);
  expect(ask("/api/v1/streaming/user")).toBe(true);
});
