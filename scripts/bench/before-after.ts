/**
 * Server CPU per request of a few endpoints, before and after a change, in one run: two server
 * processes, one from another checkout (`--before=<dir>`, e.g. `git archive <commit> | tar -x -C
 * <dir>` with node_modules linked), one from this one, measured alternately, round after round,
 * so that the load of a shared machine falls on both alike. CPU is the server's utime+stime
 * from /proc over a short wrk run (wrk's own CPU does not count).
 *
 *   bun scripts/bench/before-after.ts --before=<dir> [--rounds=3] [--seconds=3] [--only=<label part>] [--port=4620]
 *     [--family=markers|announcements|tags|reports|portability|oauth|filters|push|endorsements|media|admin|remote|search|lists|notifications|accounts|follows|federation|statuses|statusmedia|reads|syncr]
 *
 * The endpoints are those of a family converted to the database port (issue 31): markers, or
 * announcements (and custom emojis), or tags (featured tags, followed tags), or reports, or portability
 * (the export counts, the imports' reports, a one-line import), or oauth, or filters, or push, or
 * endorsements (the accounts family's leaves: endorsements and the directory), or media, or admin
 * (the admin API's account list, a report assigned by staff, each assignment an audit line), or
 * remote (a little-known remote account's profile opened by a signed-in reader: its history's
 * count and cooldown read each time; the account looked up by its handle; the reader's actor document), or search (search, tags, trends, and the instance's
 * activity and description), or lists (a list's five members read, the list renamed), or
 * notifications (v1 and v2 lists, the policy read and written: notifications-seed.ts), or accounts
 * (an account, its lookup, forty at once, and the profile's display name written), or follows
 * (relationships with five accounts, the five followed listed, a follow and its undoing in turn), or statuses
 * (a post with a tag, another's status favourited and unfavourited, the scheduled list), or statusmedia (a
 * post with one of the reader's uploads, a fresh one each request, seeded as rows; an edit of a
 * status's media description, a new one each request); or issue
 * 30's reads (`reads`, with the statuses family's reads converted to the port). `--port` is the first of the two
 * servers' ports. `--only`
 * takes parts of labels, comma-separated.
 */
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { cpuSeconds, fmt, requireWrk, seedUser, startRookery, wrk } from "./lib.ts";
import { describingMedia, FOLLOWING_POST, IMPORT_OPTIONS, MEDIA_BASE, mediaPerRun, MOVING_POST, postingMedia, PUSH_SUBSCRIPTION, refavouriting, refollowing, RENAMING_PUT, repinning, seedEndorsements, seedFilters, seedFollows, seedList, seedMedia, seedReads, seedTags } from "./before-after-seeds.ts";
import { seedNotifications } from "./notifications-seed.ts";

requireWrk();
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const beforeRoot = arg("before");
if (!beforeRoot) throw new Error("--before=<dir of the other checkout> is required");
const rounds = Number(arg("rounds") ?? 3);
const seconds = Number(arg("seconds") ?? 3);
const only = arg("only");
const family = arg("family") ?? "markers";
// The two servers listen on this port and the next: another engineer's run on a shared machine may hold the default.
const port = Number(arg("port") ?? 4620);

const servers = [
  { name: "before", server: await startRookery(port, {}, undefined, beforeRoot) },
  { name: "after", server: await startRookery(port + 1) },
];
try {
  const tokens = new Map<string, string>();
  const readerIds = new Map<string, string>();
  for (const s of servers) {
    const reader = await seedUser(s.server, "reader", family === "push" ? "read write follow push" : undefined);
    tokens.set(s.name, reader.token);
    readerIds.set(s.name, reader.id);
  }
  // The reader's token subscribes to Web Push (the endpoint is never posted to: nothing notifies the reader).
  if (family === "push") {
    for (const s of servers) {
      const r = await fetch(`${s.server.url}/api/v1/push/subscription`, { method: "POST", headers: { authorization: `Bearer ${tokens.get(s.name)}`, "content-type": "application/json" }, body: PUSH_SUBSCRIPTION });
      if (r.status !== 200) throw new Error(`push subscription: ${r.status}`);
    }
  }
  // The follows written go to another account, so that the reader's list stays as seeded.
  const writers = new Map<string, string>();
  const reported = new Map<string, string>();
  if (family === "tags") {
    for (const s of servers) await seedTags(s.server.url, tokens.get(s.name)!);
    for (const s of servers) writers.set(s.name, (await seedUser(s.server, "writer")).token);
  }
  // Forty imports: GET /api/v1/imports lists forty at most, so the writes measured later do not change what it reads.
  if (family === "portability") {
    for (const s of servers) {
      for (let i = 0; i < 40; i++) {
        const r = await fetch(`${s.server.url}/api/v1/import`, { ...IMPORT_OPTIONS, headers: { ...IMPORT_OPTIONS.headers, authorization: `Bearer ${tokens.get(s.name)}` } });
        if (r.status !== 202) throw new Error(`import: ${r.status}`);
      }
    }
  }
  const endorsed = new Map<string, string>();
  if (family === "endorsements") for (const s of servers) endorsed.set(s.name, await seedEndorsements(s.server, tokens.get(s.name)!));
  const uploads = new Map<string, string>();
  if (family === "media") for (const s of servers) uploads.set(s.name, await seedMedia(s.server.url, tokens.get(s.name)!));
  const listed = new Map<string, string>();
  if (family === "lists") for (const s of servers) listed.set(s.name, await seedList(s.server, tokens.get(s.name)!));
  const followed = new Map<string, { ids: string[]; reader: string; other: string }>();
  if (family === "follows") for (const s of servers) followed.set(s.name, await seedFollows(s.server, tokens.get(s.name)!));
  const keywords = new Map<string, string>();
  if (family === "filters") for (const s of servers) keywords.set(s.name, await seedFilters(s.server.url, tokens.get(s.name)!));
  if (family === "search") {
    // A few accounts whose names the search finds, and tagged statuses for the trends and the tags' history.
    for (const s of servers) for (const name of ["annabel", "anna", "annika", "anneli", "bob"]) s.server.cli(["accounts", "create", name, "--email", `${name}@bench.test`, "--password", "benchmark password"]);
    for (const s of servers) await seedTags(s.server.url, tokens.get(s.name)!);
    for (const s of servers) s.server.cli(["description", "set", "About this #bench server: https://example.com"]);
  }
  if (family === "notifications") for (const s of servers) await seedNotifications(s.server, tokens.get(s.name)!);
  // The statuses family: another account's status, which the reader favourites and unfavourites.
  const favourited = new Map<string, string>();
  if (family === "statuses") {
    for (const s of servers) {
      const poster = await seedUser(s.server, "poster");
      const res = await fetch(`${s.server.url}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${poster.token}`, "content-type": "application/json" }, body: JSON.stringify({ status: "favourite me" }) });
      favourited.set(s.name, ((await res.json()) as { id: string }).id);
    }
  }
  if (family === "reports") for (const s of servers) reported.set(s.name, (await seedUser(s.server, "spammer")).id);
  // The statusmedia family: processed uploads of the reader's, as rows (a post takes one each), and
  // a status with one for each round to edit (an edit costs more as a status's versions pile up).
  const mediaPosts = new Map<string, { next: number; round: number; edited: { statusId: string; mediaId: number }[] }>();
  if (family === "statusmedia") {
    for (const s of servers) {
      const db = new Database(join(s.server.dataDir, "rookery.sqlite3"));
      const insert = db.prepare("INSERT INTO media_attachments (id, account_id, type, processing, file, meta, created_at) VALUES (?, ?, 'image', 'complete', 'media_attachments/bench.jpg', '{}', ?)");
      // Below the server's own ids (time-sortable, far larger), so they never meet.
      const insertOne = (id: number) => insert.run(id, Number(readerIds.get(s.name)), Date.now());
      db.transaction(() => {
        for (let i = 0; i < rounds * mediaPerRun(seconds); i++) insertOne(MEDIA_BASE + i);
      })();
      const edited: { statusId: string; mediaId: number }[] = [];
      for (let r = 0; r < rounds; r++) {
        const mediaId = MEDIA_BASE - 1 - r;
        insertOne(mediaId);
        const res = await fetch(`${s.server.url}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${tokens.get(s.name)}`, "content-type": "application/json" }, body: JSON.stringify({ status: "edit me", media_ids: [String(mediaId)] }) });
        if (!res.ok) throw new Error(`statusmedia: ${res.status}`);
        edited.push({ statusId: ((await res.json()) as { id: string }).id, mediaId });
      }
      db.close();
      mediaPosts.set(s.name, { next: MEDIA_BASE, round: 0, edited });
    }
  }
  const read = new Map<string, { statusId: string; threadId: string; accountId: string }>();
  if (family === "reads" || family === "syncr") for (const s of servers) read.set(s.name, await seedReads(s.server.url, tokens.get(s.name)!, (await seedUser(s.server, "fan")).token));
  // An admin, five more accounts for its list, and a report about one of them for it to assign.
  const report = new Map<string, string>();
  if (family === "admin") {
    for (const s of servers) {
      const admin = await seedUser(s.server, "adam", "read write follow admin:read admin:write");
      s.server.cli(["accounts", "role", "adam", "admin"]);
      writers.set(s.name, admin.token);
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await seedUser(s.server, `member${i}`)).id);
      const made = await fetch(`${s.server.url}/api/v1/reports`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokens.get(s.name)}`, "content-type": "application/json" },
        body: JSON.stringify({ account_id: ids[0], comment: "spam", category: "spam" }),
      });
      report.set(s.name, ((await made.json()) as { id: string }).id);
    }
  }
  // A remote account (at an address never fetched from: its one fill fails at once), its profile opened by the reader.
  const remoteAccount = new Map<string, string>();
  if (family === "remote") {
    for (const s of servers) {
      const db = new Database(join(s.server.dataDir, "rookery.sqlite3"));
      const id = 2 ** 46 + 7;
      db.run("INSERT INTO accounts (id, username, domain, uri, url, inbox_url, created_at) VALUES (?, 'far', '127.0.0.9', 'http://127.0.0.9:9/users/far', 'http://127.0.0.9:9/@far', 'http://127.0.0.9:9/users/far/inbox', ?)", [id, Date.now()]);
      db.close();
      remoteAccount.set(s.name, String(id));
    }
  }
  // Two announcements (one reacted to) and two custom emojis in each, made as the operator makes them.
  const announced = new Map<string, string>();
  if (family === "announcements") {
    const emoji = join(tmpdir(), `rookery-bench-emoji-${process.pid}.png`);
    writeFileSync(emoji, await sharp({ create: { width: 32, height: 32, channels: 4, background: "#00ff00" } }).png().toBuffer());
    for (const s of servers) {
      for (const code of ["blobcat", "blobfox"]) s.server.cli(["emoji", "add", code, emoji]);
      const id = s.server.cli(["announcements", "create", "Maintenance tonight, see #status :blobcat:"]);
      s.server.cli(["announcements", "create", "Welcome to the bench"]);
      announced.set(s.name, id);
      await fetch(`${s.server.url}/api/v1/announcements/${id}/reactions/%F0%9F%91%8D`, { method: "PUT", headers: { authorization: `Bearer ${tokens.get(s.name)}` } });
    }
    rmSync(emoji);
  }
  const families = (server: string): Record<string, { label: string; path: string; options: object; writer?: boolean }[]> => ({
    // The reader's actor document, as another server fetches it: its key pairs (AccountKeys) and Fedify's rendering.
    federation: [{ label: "GET /users/reader (actor)", path: "/users/reader", options: { headers: { accept: "application/activity+json" } } }],
    tags: [
      { label: "GET /api/v1/featured_tags", path: "/api/v1/featured_tags", options: {} },
      { label: "GET /api/v1/followed_tags", path: "/api/v1/followed_tags", options: {} },
      { label: "POST /api/v1/tags/:name/follow (new)", path: "/api/v1/tags/x/follow", options: { method: "POST", lua: FOLLOWING_POST }, writer: true },
    ],
    announcements: [
      { label: "GET /api/v1/announcements", path: "/api/v1/announcements", options: {} },
      { label: "POST /api/v1/announcements/:id/dismiss", path: `/api/v1/announcements/${announced.get(server) ?? "0"}/dismiss`, options: { method: "POST" } },
      { label: "GET /api/v1/custom_emojis", path: "/api/v1/custom_emojis", options: {} },
    ],
    portability: [
      { label: "GET /api/v1/exports/stats", path: "/api/v1/exports/stats", options: {} },
      { label: "GET /api/v1/imports (40)", path: "/api/v1/imports", options: {} },
      { label: "POST /api/v1/import (one line)", path: "/api/v1/import", options: IMPORT_OPTIONS },
    ],
    // An app reads itself through its token, and a new app is registered each request.
    oauth: [
      { label: "GET /api/v1/apps/verify_credentials", path: "/api/v1/apps/verify_credentials", options: {} },
      {
        label: "POST /api/v1/apps",
        path: "/api/v1/apps",
        options: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "bench", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" }) },
      },
    ],
    reads: [
      { label: "GET /api/v1/timelines/home", path: "/api/v1/timelines/home?limit=20", options: {} },
      { label: "GET /api/v1/statuses/:id (signed in)", path: `/api/v1/statuses/${read.get(server)?.statusId}`, options: {} },
      { label: "GET /api/v1/notifications", path: "/api/v1/notifications?limit=20", options: {} },
      { label: "GET /api/v1/accounts/:id/statuses", path: `/api/v1/accounts/${read.get(server)?.accountId}/statuses?limit=20`, options: {} },
      { label: "GET /api/v1/statuses/:id/context", path: `/api/v1/statuses/${read.get(server)?.threadId}/context`, options: {} },
      { label: "GET /api/v1/accounts/verify_credentials", path: "/api/v1/accounts/verify_credentials", options: {} },
      { label: "GET /api/v1/instance", path: "/api/v1/instance", options: {} },
      // Those the statuses family's reads put on the database port (issue 31).
      { label: "GET /api/v1/timelines/public", path: "/api/v1/timelines/public?limit=20", options: {} },
      { label: "GET /api/v1/timelines/tag/:tag", path: "/api/v1/timelines/tag/tag1?limit=20", options: {} },
      { label: "GET /api/v1/statuses/:id/favourited_by", path: `/api/v1/statuses/${read.get(server)?.statusId}/favourited_by`, options: {} },
      { label: "GET /api/v1/bookmarks", path: "/api/v1/bookmarks?limit=20", options: {} },
    ],
    // The renderers' and the instance documents' reads put on the port (branch syncr): a page of
    // the reader's outbox (twenty Notes, each reading what it points at), a Note, the peers, NodeInfo.
    syncr: [
      { label: "GET /users/reader/outbox?cursor= (20 Notes)", path: "/users/reader/outbox?cursor=", options: { headers: { accept: "application/activity+json" } } },
      { label: "GET /users/reader/statuses/:id (a Note)", path: `/users/reader/statuses/${read.get(server)?.statusId}`, options: { headers: { accept: "application/activity+json" } } },
      { label: "GET /api/v1/instance/peers", path: "/api/v1/instance/peers", options: {} },
      { label: "GET /nodeinfo/2.0", path: "/nodeinfo/2.0", options: {} },
    ],
    filters: [
      { label: "GET /api/v2/filters", path: "/api/v2/filters", options: {} },
      { label: "PUT /api/v2/filters/keywords/:id (renames)", path: `/api/v2/filters/keywords/${keywords.get(server) ?? "0"}`, options: { method: "PUT", headers: { "content-type": "application/json" }, lua: RENAMING_PUT } },
    ],
    // The token's subscription read, and its alerts changed (one UPDATE each request).
    push: [
      { label: "GET /api/v1/push/subscription", path: "/api/v1/push/subscription", options: {} },
      {
        label: "PUT /api/v1/push/subscription",
        path: "/api/v1/push/subscription",
        options: { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ data: { alerts: { mention: true, follow: false }, policy: "followed" } }) },
      },
    ],
    endorsements: [
      { label: "GET /api/v1/endorsements (10)", path: "/api/v1/endorsements", options: {} },
      { label: "GET /api/v1/directory (10)", path: "/api/v1/directory", options: {} },
      { label: "POST /api/v1/accounts/:id/unpin, pin", path: `/api/v1/accounts/${endorsed.get(server) ?? "0"}/pin`, options: { method: "POST", lua: repinning(endorsed.get(server) ?? "0") } },
    ],
    // The upload read back, and its description written (the row read and updated in one transaction).
    media: [
      { label: "GET /api/v1/media/:id", path: `/api/v1/media/${uploads.get(server) ?? "0"}`, options: {} },
      {
        label: "PUT /api/v1/media/:id (description)",
        path: `/api/v1/media/${uploads.get(server) ?? "0"}`,
        options: { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ description: "a blue rectangle" }) },
      },
    ],
    admin: [
      { label: "GET /api/v1/admin/accounts", path: "/api/v1/admin/accounts", options: {}, writer: true },
      { label: "POST /api/v1/admin/reports/:id/assign_to_self", path: `/api/v1/admin/reports/${report.get(server) ?? "0"}/assign_to_self`, options: { method: "POST" }, writer: true },
    ],
    remote: [
      { label: "GET /api/v1/accounts/:id/statuses (remote, little known)", path: `/api/v1/accounts/${remoteAccount.get(server) ?? "0"}/statuses`, options: {} },
      // RemoteAccounts.lookup (a stored remote account by its handle) and the actor dispatcher (FederationActors.localAccount).
      { label: "GET /api/v1/accounts/lookup (remote)", path: "/api/v1/accounts/lookup?acct=far@127.0.0.9", options: {} },
      { label: "GET /users/reader (actor document)", path: "/users/reader", options: { headers: { accept: "application/activity+json" } } },
    ],
    search: [
      { label: "GET /api/v2/search (accounts)", path: "/api/v2/search?q=ann&type=accounts", options: {} },
      { label: "GET /api/v2/search (both)", path: "/api/v2/search?q=rus", options: {} },
      { label: "GET /api/v1/tags/:name", path: "/api/v1/tags/rust", options: {} },
      { label: "GET /api/v1/trends/tags", path: "/api/v1/trends/tags", options: {} },
      { label: "GET /api/v1/instance/activity", path: "/api/v1/instance/activity", options: {} },
      { label: "GET /api/v1/instance/extended_descr.", path: "/api/v1/instance/extended_description", options: {} },
      { label: "GET /api/v1/instance", path: "/api/v1/instance", options: {} },
    ],
    lists: [
      { label: "GET /api/v1/lists/:id/accounts (5)", path: `/api/v1/lists/${listed.get(server) ?? "0"}/accounts`, options: {} },
      {
        label: "PUT /api/v1/lists/:id (renames)",
        path: `/api/v1/lists/${listed.get(server) ?? "0"}`,
        options: { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "Close friends", replies_policy: "followed" }) },
      },
    ],
    notifications: [
      { label: "GET /api/v1/notifications", path: "/api/v1/notifications?limit=20", options: {} },
      { label: "GET /api/v2/notifications", path: "/api/v2/notifications?limit=20", options: {} },
      { label: "GET /api/v2/notifications/policy", path: "/api/v2/notifications/policy", options: {} },
      {
        label: "PATCH /api/v2/notifications/policy",
        path: "/api/v2/notifications/policy",
        options: { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ for_not_following: "filter", for_new_accounts: "accept" }) },
      },
    ],
    accounts: [
      { label: "GET /api/v1/accounts/:id", path: `/api/v1/accounts/${readerIds.get(server)}`, options: {} },
      { label: "GET /api/v1/accounts/lookup", path: "/api/v1/accounts/lookup?acct=reader", options: {} },
      { label: "GET /api/v1/accounts?id[]= (40, one known)", path: `/api/v1/accounts?${Array.from({ length: 40 }, (_, i) => `id[]=${i === 0 ? readerIds.get(server) : 1000 + i}`).join("&")}`, options: {} },
      {
        label: "PATCH update_credentials (name)",
        path: "/api/v1/accounts/update_credentials",
        options: { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ display_name: "Reader" }) },
      },
    ],
    follows: [
      { label: "GET /api/v1/accounts/relationships (5)", path: `/api/v1/accounts/relationships?${(followed.get(server)?.ids ?? []).map((id) => `id[]=${id}`).join("&")}`, options: {} },
      { label: "GET /api/v1/accounts/:id/following (5)", path: `/api/v1/accounts/${followed.get(server)?.reader ?? "0"}/following`, options: {} },
      {
        label: "POST /api/v1/accounts/:id/follow, unfollow",
        path: `/api/v1/accounts/${followed.get(server)?.other ?? "0"}/follow`,
        options: { method: "POST", lua: refollowing(followed.get(server)?.other ?? "0") },
      },
    ],
    statuses: [
      {
        label: "POST /api/v1/statuses (a tag)",
        path: "/api/v1/statuses",
        options: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ status: "measured #bench post", visibility: "public" }) },
      },
      { label: "POST /api/v1/statuses/:id/favourite, unfav.", path: `/api/v1/statuses/${favourited.get(server) ?? "0"}/favourite`, options: { method: "POST", lua: refavouriting(favourited.get(server) ?? "0") } },
      { label: "GET /api/v1/scheduled_statuses", path: "/api/v1/scheduled_statuses", options: {} },
    ],
    statusmedia: (() => {
      const seeded = mediaPosts.get(server);
      const base = seeded?.next ?? MEDIA_BASE;
      const edited = seeded?.edited[seeded.round];
      if (seeded) (seeded.next += mediaPerRun(seconds)), seeded.round++;
      return [
        { label: "POST /api/v1/statuses (a media id)", path: "/api/v1/statuses", options: { method: "POST", headers: { "content-type": "application/json" }, lua: postingMedia(base) } },
        {
          label: "PUT /api/v1/statuses/:id (media description)",
          path: `/api/v1/statuses/${edited?.statusId ?? "0"}`,
          options: { method: "PUT", headers: { "content-type": "application/json" }, lua: describingMedia(edited?.mediaId ?? 0) },
        },
      ];
    })(),
    reports: [
      {
        label: "POST /api/v1/reports",
        path: "/api/v1/reports",
        options: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ account_id: reported.get(server), comment: "spam", category: "spam" }) },
      },
    ],
  });
  const endpoints = (server: string) => (families(server)[family] ?? [
    { label: "GET /api/v1/markers", path: "/api/v1/markers?timeline[]=home&timeline[]=notifications", options: {} },
    { label: "POST /api/v1/markers (moves)", path: "/api/v1/markers", options: { method: "POST", headers: { "content-type": "application/json" }, lua: MOVING_POST } },
    { label: "GET /api/v1/notifications/unread_count", path: "/api/v1/notifications/unread_count", options: {} },
  ]).filter((e) => !only || only.split(",").some((part) => e.label.includes(part))).map((e) => ({ ...e, options: { ...e.options, headers: { ...(e.options as { headers?: Record<string, string> }).headers, authorization: `Bearer ${("writer" in e && e.writer ? writers : tokens).get(server)}` } } }));

  const cpu = new Map<string, number[]>();
  const rps = new Map<string, number[]>();
  console.log(`wrk -t1 -c16, ${seconds} s a run, ${rounds} rounds alternating before/after, ${new Date().toISOString().slice(0, 10)}\n`);
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always follows the other's warm-up.
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) {
      for (const e of endpoints(s.name)) {
        const key = `${e.label}|${s.name}`;
        const start = cpuSeconds(s.server.proc.pid);
        const r = wrk(`${s.server.url}${e.path}`, { seconds, connections: 16, ...e.options });
        const used = cpuSeconds(s.server.proc.pid) - start;
        if (r.non2xx) throw new Error(`${key}: ${r.non2xx} non-2xx answers`);
        (cpu.get(key) ?? cpu.set(key, []).get(key)!).push((used / (r.requestsPerSecond * seconds)) * 1e6);
        (rps.get(key) ?? rps.set(key, []).get(key)!).push(r.requestsPerSecond);
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`${"endpoint".padEnd(40)} ${"CPU µs/req before".padStart(18)} ${"after".padStart(8)} ${"ratio".padStart(6)} ${"req/s before".padStart(13)} ${"after".padStart(8)}   (medians; each round's CPU)`);
  for (const e of endpoints("")) {
    const b = cpu.get(`${e.label}|before`)!;
    const a = cpu.get(`${e.label}|after`)!;
    const runs = b.map((x, i) => `${fmt(x, 1)}/${fmt(a[i]!, 1)}`).join(" ");
    console.log(
      `${e.label.padEnd(40)} ${fmt(median(b), 1).padStart(18)} ${fmt(median(a), 1).padStart(8)} ${fmt(median(a) / median(b), 2).padStart(6)} ${fmt(median(rps.get(`${e.label}|before`)!)).padStart(13)} ${fmt(median(rps.get(`${e.label}|after`)!)).padStart(8)}   ${runs}`,
    );
  }
} finally {
  for (const s of servers) await s.server.stop();
}
