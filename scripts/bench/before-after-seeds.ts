/**
 * What scripts/bench/before-after.ts seeds and sends for each family: wrk scripts of the writes
 * measured, and the rows a family's reads need on both servers. Kept apart from the runner, which
 * is the same for every family.
 */
import sharp from "sharp";
import { seedUser } from "./lib.ts";

// A POST that moves the home marker on each request (a write each time, version + 1).
export const MOVING_POST = `
n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, nil, '{"home":{"last_read_id":"' .. (100000 + n) .. '"},"notifications":{"last_read_id":"7"}}')
end`;

// A POST that follows another tag on each request (a new tag and a new follow each time; the
// run's start time in the name keeps later rounds from following the same tags again).
export const FOLLOWING_POST = `
n = 0
prefix = "b" .. os.time()
request = function()
  n = n + 1
  return wrk.format("POST", "/api/v1/tags/" .. prefix .. "x" .. n .. "/follow")
end`;

// A one-line import of a blocked domain, as a client uploads it (multipart); the worker blocks it in the background.
const IMPORT_BODY = [
  "--bench",
  'Content-Disposition: form-data; name="type"',
  "",
  "domain_blocks",
  "--bench",
  'Content-Disposition: form-data; name="data"; filename="blocked_domains.csv"',
  "Content-Type: text/csv",
  "",
  "spam.example",
  "--bench--",
  "",
].join("\r\n");
export const IMPORT_OPTIONS = { method: "POST", headers: { "content-type": "multipart/form-data; boundary=bench" }, body: IMPORT_BODY };

// A P-256 point and a 16-byte secret, as a browser's PushSubscription gives them.
export const PUSH_SUBSCRIPTION = JSON.stringify({
  subscription: { endpoint: "https://push.example/bench", keys: { p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString("base64url"), auth: Buffer.alloc(16, 9).toString("base64url") } },
  data: { alerts: { mention: true }, policy: "all" },
});

/** What the tags family reads: three featured tags over a few tagged statuses, and twenty followed tags. */
export async function seedTags(url: string, token: string) {
  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => {
      if (!r.ok) throw new Error(`${path}: ${r.status}`);
    });
  for (let i = 0; i < 12; i++) await post("/api/v1/statuses", { status: `post ${i} #rust${i % 2 ? " #zig" : ""} #go` });
  for (const name of ["rust", "zig", "go"]) await post("/api/v1/featured_tags", { name });
  for (let i = 0; i < 20; i++) await post(`/api/v1/tags/followed${i}/follow`, {});
}

/**
 * What the reads family reads (issue 30's endpoints): 30 statuses of the reader's (a thread of 10
 * among them), another account following the reader and favouriting 20 of them (notifications).
 */
export async function seedReads(url: string, token: string, fanToken: string): Promise<{ statusId: string; threadId: string; accountId: string }> {
  const call = async (path: string, body: unknown, as = token) => {
    const r = await fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${as}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${path}: ${r.status}`);
    return (await r.json()) as { id: string; account: { id: string } };
  };
  const first = await call("/api/v1/statuses", { status: "a thread starts here #bench" });
  let parent = first;
  for (let i = 0; i < 9; i++) parent = await call("/api/v1/statuses", { status: `reply ${i}`, in_reply_to_id: parent.id });
  const ids = [first.id];
  for (let i = 0; i < 20; i++) ids.push((await call("/api/v1/statuses", { status: `post ${i} with a link https://example.com/${i} and #tag${i % 3}` })).id);
  await call(`/api/v1/accounts/${first.account.id}/follow`, {}, fanToken);
  for (const id of ids) await call(`/api/v1/statuses/${id}/favourite`, {}, fanToken);
  return { statusId: ids.at(-1)!, threadId: parent.id, accountId: first.account.id };
}

// A PUT that renames one keyword on each request (a write, and the matcher rebuilt, each time).
export const RENAMING_PUT = `
n = 0
request = function()
  n = n + 1
  return wrk.format("PUT", nil, nil, '{"keyword":"spoiler' .. n .. '"}')
end`;

// Unpins and pins again an endorsed account, in turn (a DELETE, then an INSERT, each a write).
// A status favourited and unfavourited in turn (each request a write, with its event).
export const refavouriting = (id: string) => `
n = 0
request = function()
  n = n + 1
  if n % 2 == 1 then return wrk.format("POST", "/api/v1/statuses/${id}/favourite") end
  return wrk.format("POST", "/api/v1/statuses/${id}/unfavourite")
end`;

// The statusmedia family's uploads: ids from MEDIA_BASE, MEDIA_PER_RUN for each wrk run (one thread, one connection's worth of Lua state).
export const MEDIA_BASE = 1_000_000;
/** Uploads one run of `seconds` may post, at most. */
export const mediaPerRun = (seconds: number) => 20_000 * seconds;
export const postingMedia = (base: number) => `
n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, nil, '{"status":"measured","media_ids":["' .. (${base} + n) .. '"]}')
end`;
export const describingMedia = (id: number) => `
n = 0
request = function()
  n = n + 1
  return wrk.format("PUT", nil, nil, '{"status":"edit me","media_ids":["${id}"],"media_attributes":[{"id":"${id}","description":"d' .. n .. '"}]}')
end`;

export const repinning = (id: string) => `
n = 0
request = function()
  n = n + 1
  if n % 2 == 1 then return wrk.format("POST", "/api/v1/accounts/${id}/unpin") end
  return wrk.format("POST", "/api/v1/accounts/${id}/pin")
end`;

/** What the endorsements family reads: ten discoverable accounts the reader follows and endorses; answers one's id. */
export async function seedEndorsements(server: Parameters<typeof seedUser>[0], token: string): Promise<string> {
  const auth = { authorization: `Bearer ${token}` };
  let last = "";
  for (let i = 0; i < 10; i++) {
    const star = await seedUser(server, `star${i}`);
    const profile = await fetch(`${server.url}/api/v1/accounts/update_credentials`, { method: "PATCH", headers: { authorization: `Bearer ${star.token}`, "content-type": "application/json" }, body: JSON.stringify({ discoverable: true }) });
    if (profile.status !== 200) throw new Error(`discoverable: ${profile.status}`);
    for (const step of ["follow", "pin"]) {
      const r = await fetch(`${server.url}/api/v1/accounts/${star.id}/${step}`, { method: "POST", headers: auth });
      if (r.status !== 200) throw new Error(`${step}: ${r.status}`);
    }
    last = star.id;
  }
  return last;
}

/** What the lists family reads: a list of five followed accounts; answers its id. */
export async function seedList(server: Parameters<typeof seedUser>[0], token: string): Promise<string> {
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status}`);
    return (await r.json()) as { id: string };
  };
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await seedUser(server, `friend${i}`)).id);
  for (const id of ids) await call("POST", `/api/v1/accounts/${id}/follow`);
  const list = await call("POST", "/api/v1/lists", { title: "Friends" });
  await call("POST", `/api/v1/lists/${list.id}/accounts`, { account_ids: ids });
  return list.id;
}

/** What the follows family reads: five accounts the reader follows, one following back; answers their ids, the reader's, and a sixth's. */
export async function seedFollows(server: Parameters<typeof seedUser>[0], token: string): Promise<{ ids: string[]; reader: string; other: string }> {
  const call = async (path: string, auth = token, method = "POST") => {
    const r = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${auth}` } });
    if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
    return (await r.json()) as { id: string };
  };
  const reader = (await call("/api/v1/accounts/verify_credentials", token, "GET")).id;
  const pals = [];
  for (let i = 0; i < 5; i++) pals.push(await seedUser(server, `pal${i}`));
  for (const pal of pals) await call(`/api/v1/accounts/${pal.id}/follow`);
  await call(`/api/v1/accounts/${reader}/follow`, pals[0]!.token);
  return { ids: pals.map((p) => p.id), reader, other: (await seedUser(server, "other")).id };
}

// Follows an account, then unfollows it, in turn (an INSERT with its counters, then a DELETE with its counters).
export const refollowing = (id: string) => `
n = 0
request = function()
  n = n + 1
  if n % 2 == 1 then return wrk.format("POST", "/api/v1/accounts/${id}/follow") end
  return wrk.format("POST", "/api/v1/accounts/${id}/unfollow")
end`;

/** What the filters family reads: three filters of four keywords each, one filtering a status; answers a keyword's id. */
export async function seedFilters(url: string, token: string): Promise<string> {
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${path}: ${r.status}`);
    return r.json() as Promise<{ id: string; keywords: { id: string }[] }>;
  };
  const status = await post("/api/v1/statuses", { status: "the butler did it" });
  const made = [];
  for (const title of ["spoilers", "sport", "politics"]) {
    made.push(await post("/api/v2/filters", { title, context: ["home", "public"], keywords_attributes: ["a", "b", "c", "d"].map((k) => ({ keyword: `${title}-${k}` })) }));
  }
  await post(`/api/v2/filters/${made[0]!.id}/statuses`, { status_id: status.id });
  return made[0]!.keywords[0]!.id;
}

/** What the media family reads: one small upload, not yet on a status; answers its id. */
export async function seedMedia(url: string, token: string): Promise<string> {
  const form = new FormData();
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#3366aa" } }).jpeg().toBuffer();
  form.append("file", new Blob([jpeg as Uint8Array<ArrayBuffer>]), "bench.jpg");
  const r = await fetch(`${url}/api/v1/media`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form });
  if (!r.ok) throw new Error(`media: ${r.status}`);
  return ((await r.json()) as { id: string }).id;
}
