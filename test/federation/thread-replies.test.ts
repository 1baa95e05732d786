import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { startThreadServer } from "../support/thread-server.ts";

// Opening a remote thread fetches its missing replies in the background, as Mastodon 4.5 does:
// through the `replies` collections of its statuses and the `context` collection of its top,
// bounded, once per period; the reader is answered at once and told of the work by
// Mastodon-Async-Refresh, and asks again once it is finished.

let a: TestServer;
let alice: TestUser;
let remote: Awaited<ReturnType<typeof startThreadServer>>;
let elsewhere: Awaited<ReturnType<typeof startThreadServer>>;
let dave: string;
let erin: string;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  remote = await startThreadServer("127.0.0.31");
  elsewhere = await startThreadServer("127.0.0.32");
  dave = remote.actor("dave");
  erin = elsewhere.actor("erin");
});
afterAll(async () => {
  await a?.close();
  remote?.stop();
  elsewhere?.stop();
});

const stored = async (uri: string) => (await a.database.port.get<{ id: number; content_html: string; in_reply_to_id: number | null }>("SELECT id, content_html, in_reply_to_id FROM statuses WHERE uri = ?", [uri])) ?? null;

/** The status at `uri`, fetched and stored as search with resolve=true does; its id here. */
async function resolve(uri: string): Promise<string> {
  const res = await alice.client.get("/api/v2/search", { query: { q: uri, resolve: "true", type: "statuses" } });
  expect(res.status).toBe(200);
  expect(res.body.statuses).toHaveLength(1);
  return res.body.statuses[0].id;
}

const HEADER = /^id="([A-Za-z0-9_-]+)", retry=3, result_count=(\d+)$/;

/** The context as alice reads it, with the refresh it announces (null when none). */
async function context(id: string, user: TestUser | null = alice) {
  const res = user ? await user.client.get(`/api/v1/statuses/${id}/context`) : await fetch(`${a.base}/api/v1/statuses/${id}/context`).then(async (r) => ({ status: r.status, body: await r.json(), headers: r.headers }));
  expect(res.status).toBe(200);
  const header = res.headers.get("mastodon-async-refresh");
  return { body: res.body as { ancestors: any[]; descendants: any[] }, header, refreshId: header ? HEADER.exec(header)![1]! : null };
}

async function finished(refreshId: string) {
  return eventually(async () => {
    const res = await alice.client.get(`/api/v1_alpha/async_refreshes/${refreshId}`);
    return res.body.async_refresh?.status === "finished" && res.body;
  }, "the async refresh to finish", 30_000);
}

/**
 * A thread of 40 replies to dave's root: 29 direct replies over three pages of its `replies`
 * (the first embedded in the Note, some items embedded, the rest by IRI), replies to some of
 * those in their own collections, two levels deep, and two on another server (erin's).
 */
function fortyReplies(name: string) {
  const root = `${remote.base}/${name}/root`;
  const direct: (string | Record<string, unknown>)[] = [];
  let count = 0;
  for (let i = 0; i < 27; i++) {
    const path = `/${name}/r${i}`;
    const children: string[] = [];
    if (i < 5) {
      for (let j = 0; j < 2; j++) {
        const grand = i === 0 && j === 0 ? [remote.thread(`/${name}/r0-0-0`, dave, "deep", [], { inReplyTo: `${remote.base}/${name}/r0-0` })] : [];
        children.push(remote.thread(`/${name}/r${i}-${j}`, dave, `reply ${i}.${j}`, grand, { inReplyTo: `${remote.base}${path}` }));
        count += 1 + grand.length;
      }
    }
    const iri = remote.thread(path, dave, `reply ${i}`, children, { inReplyTo: root });
    count++;
    // Every third is embedded in the page, as Mastodon embeds its own accounts' replies.
    direct.push(i % 3 === 0 ? remote.documentAt(path) : iri);
  }
  for (let k = 0; k < 2; k++) {
    direct.push(elsewhere.thread(`/${name}/e${k}`, erin, `from elsewhere ${k}`, [], { inReplyTo: root }));
    count++;
  }
  remote.thread(`/${name}/root`, dave, "the root", direct, { perPage: 10 });
  expect(count).toBe(40);
  return root;
}

describe("the missing replies of a remote thread", () => {
  test("opening it fetches all 40 replies over pages and levels; the answer comes at once with a refresh to follow, the second shows them", async () => {
    const root = fortyReplies("forty");
    const id = await resolve(root);
    const first = await context(id);
    expect(first.body.descendants).toEqual([]);
    expect(first.header).toMatch(HEADER);
    const done = await finished(first.refreshId!);
    expect(done).toEqual({ async_refresh: { id: first.refreshId, status: "finished", result_count: 40 } });
    const second = await context(id);
    expect(second.body.descendants).toHaveLength(40);
    // Nested where they belong: the deepest answers its parent.
    const deep = (await stored(`${remote.base}/forty/r0-0-0`))!;
    expect(deep.in_reply_to_id).toBe((await stored(`${remote.base}/forty/r0-0`))!.id);
    expect((await stored(`${elsewhere.base}/forty/e1`))!.content_html).toBe("<p>from elsewhere 1</p>");
    // Fetched within the cooldown: nothing is asked again, and no refresh is announced.
    expect(second.header).toBeNull();
    // Every request was signed (by the instance actor: the servers in secure mode answer it).
    expect(remote.unsigned).toEqual([]);
    expect(elsewhere.unsigned).toEqual([]);
  });
});

describe("threads served through a context collection", () => {
  test("the top's `context` collection (FEP-7888, as Mastodon 4.5 serves it) lists replies its `replies` do not", async () => {
    const root = `${remote.base}/ctx/root`;
    const members: string[] = [root];
    for (let i = 0; i < 12; i++) members.push(remote.thread(`/ctx/c${i}`, dave, `in context ${i}`, [], { inReplyTo: i === 0 ? root : `${remote.base}/ctx/c${i - 1}` }));
    // Mastodon's shape: a Collection with its first page embedded, the rest at next.
    const page = (n: number) => ({ id: `${remote.base}/contexts/ctx?page=${n}`, type: "CollectionPage", partOf: `${remote.base}/contexts/ctx`, items: members.slice(n * 5, n * 5 + 5), ...(n < 2 ? { next: `${remote.base}/contexts/ctx?page=${n + 1}` } : {}) });
    for (let n = 1; n < 3; n++) remote.route(`/contexts/ctx?page=${n}`, page(n));
    remote.route("/contexts/ctx", { id: `${remote.base}/contexts/ctx`, type: "Collection", attributedTo: dave, first: page(0) });
    remote.thread("/ctx/root", dave, "a root with a context", [], { extra: { context: `${remote.base}/contexts/ctx` } });
    const id = await resolve(root);
    const first = await context(id);
    await finished(first.refreshId!);
    const second = await context(id);
    expect(second.body.descendants.map((s: any) => s.uri)).toEqual(members.slice(1));
    expect(remote.count("/contexts/ctx")).toBe(3);
  });
});

describe("bounds, cooldown and who sets it off", () => {
  test("a server offering 10,000 replies on one page: at most 200 statuses are read, within seconds", async () => {
    remote.routePrefix("/big/r", (url) => remote.note(`${remote.base}${url.pathname}`, dave, "one of many", { inReplyTo: `${remote.base}/big/root` }));
    const replies = Array.from({ length: 10_000 }, (_, i) => `${remote.base}/big/r${i}`);
    const root = remote.thread("/big/root", dave, "a root with 10,000 replies", replies, { perPage: 10_000 });
    const id = await resolve(root);
    const started = Date.now();
    const first = await context(id);
    const done = await finished(first.refreshId!);
    expect(Date.now() - started).toBeLessThan(30_000);
    // The page is read as far as 500 items; of those, 200 statuses at most are fetched.
    const fetched = remote.gets.filter((g) => /^\/big\/r\d/.test(g)).length;
    expect(fetched).toBeLessThanOrEqual(200);
    expect(done.async_refresh.result_count).toBe(fetched);
    expect(done.async_refresh.result_count).toBeGreaterThan(100);
  });

  test("a chain of pages without end: at most 100 pages are read", async () => {
    remote.routePrefix("/endless/replies", (url) => {
      const n = Number(url.searchParams.get("page") ?? 0);
      return { id: `${remote.base}/endless/replies?page=${n}`, type: "CollectionPage", items: [`${remote.base}/endless/gone-${n}`], next: `${remote.base}/endless/replies?page=${n + 1}` };
    });
    remote.route("/endless/root", remote.note(`${remote.base}/endless/root`, dave, "endless", { replies: `${remote.base}/endless/replies` }));
    const id = await resolve(`${remote.base}/endless/root`);
    const first = await context(id);
    await finished(first.refreshId!);
    expect(remote.count("/endless/replies")).toBeLessThanOrEqual(101);
    expect(remote.count("/endless/replies")).toBeGreaterThan(50);
  });

  test("once per thread per 15 minutes; a reader without a token sets off nothing", async () => {
    const root = remote.thread("/cool/root", dave, "cooling down", [remote.thread("/cool/r0", dave, "early reply", [], { inReplyTo: `${remote.base}/cool/root` })]);
    const id = await resolve(root);
    // Anonymous: no fetch, no refresh.
    const before = remote.gets.length;
    const anonymous = await context(id, null);
    expect(anonymous.header).toBeNull();
    expect(remote.gets.length).toBe(before);

    await finished((await context(id)).refreshId!);
    expect(await stored(`${remote.base}/cool/r0`)).not.toBeNull();
    // A reply posted since: not asked for within the cooldown.
    remote.thread("/cool/root", dave, "cooling down", [`${remote.base}/cool/r0`, remote.thread("/cool/r1", dave, "late reply", [], { inReplyTo: root })]);
    const asked = remote.gets.length;
    expect((await context(id)).header).toBeNull();
    expect(remote.gets.length).toBe(asked);
    // Past it, the thread is asked again, and the late reply arrives.
    a.clock.set(a.clock.now() + 16 * 60 * 1000);
    await finished((await context(id)).refreshId!);
    expect(await stored(`${remote.base}/cool/r1`)).not.toBeNull();
  });

  test("a running fill is announced to every reader of the thread, anonymous ones too, and reported running until it finishes", async () => {
    const root = remote.thread("/slow/root", dave, "slow", [remote.thread("/slow/r0", dave, "a slow reply", [], { inReplyTo: `${remote.base}/slow/root` })]);
    const id = await resolve(root);
    // From now on the root's document is held until released: the fill waits on it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const served = remote.documentAt("/slow/root");
    remote.route("/slow/root", async () => (await held, served));
    const first = await context(id);
    expect(first.header).toBe(`id="${first.refreshId}", retry=3, result_count=0`);
    const running = await alice.client.get(`/api/v1_alpha/async_refreshes/${first.refreshId}`);
    expect(running.status).toBe(200);
    expect(running.body).toEqual({ async_refresh: { id: first.refreshId, status: "running", result_count: 0 } });
    // Another request, signed in or not, is told of the same work; none starts a second.
    expect((await context(id)).refreshId).toBe(first.refreshId);
    expect((await context(id, null)).refreshId).toBe(first.refreshId);
    release();
    expect(await finished(first.refreshId!)).toEqual({ async_refresh: { id: first.refreshId, status: "finished", result_count: 1 } });
    expect(remote.count("/slow/root")).toBe(2);
    // Finished: no header any more, for anyone.
    expect((await context(id, null)).header).toBeNull();
  });
});

describe("a thread begun here", () => {
  test("a remote reply opened in it has its own replies fetched; the local top asks no one", async () => {
    const top = await alice.client.post("/api/v1/statuses", { json: { status: "a local top" } });
    const topUri = `${a.base}/users/alice/statuses/${top.body.id}`;
    const answer = remote.thread("/local-top/answer", dave, "an answer to alice", [remote.thread("/local-top/answer-reply", dave, "and its reply", [], { inReplyTo: `${remote.base}/local-top/answer` })], { inReplyTo: topUri });
    const id = await resolve(answer);
    expect((await context(top.body.id)).header).toBeNull();
    const opened = await context(id);
    await finished(opened.refreshId!);
    expect((await stored(`${remote.base}/local-top/answer-reply`))!.in_reply_to_id).toBe(Number(id));
  });
});

describe("fills do not pile up", () => {
  test("two fills run at once and eight wait; a thread opened past that starts none, and is filled when opened again", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) {
      const root = remote.thread(`/many${i}/root`, dave, `thread ${i}`, [remote.thread(`/many${i}/r`, dave, "a reply", [], { inReplyTo: `${remote.base}/many${i}/root` })]);
      ids.push(await resolve(root));
      const served = remote.documentAt(`/many${i}/root`);
      remote.route(`/many${i}/root`, async () => (await held, served));
    }
    const opened = [];
    for (const id of ids) opened.push(await context(id));
    expect(opened.slice(0, 10).every((o) => o.refreshId !== null)).toBe(true);
    expect(opened[10]!.header).toBeNull();
    // Two asked their root; the others wait their turn without asking anything.
    await eventually(() => remote.gets.filter((g) => /^\/many\d+\/root$/.test(g)).length >= 13, "two fills to ask their roots");
    expect(remote.gets.filter((g) => /^\/many\d+\/root$/.test(g)).length).toBe(13);
    release();
    for (const o of opened.slice(0, 10)) await finished(o.refreshId!);
    const late = await context(ids[10]!);
    await finished(late.refreshId!);
    expect(await stored(`${remote.base}/many10/r`)).not.toBeNull();
  });
});

describe("what a hostile server says is not believed", () => {
  test("a reply claiming another server's account, an embedded copy of another server's status, and a status that answers something else are not stored as told", async () => {
    const genuine = elsewhere.thread("/genuine", erin, "the genuine words", [], { inReplyTo: `${remote.base}/liar/root` });
    const replies = [
      // Served here, attributed to erin on the other server.
      remote.thread("/liar/impostor", erin, "erin never said this", [], { inReplyTo: `${remote.base}/liar/root` }),
      // erin's status embedded with other words: fetched from erin's server instead.
      { ...elsewhere.documentAt("/genuine"), content: "<p>forged words</p>" },
      // Listed among the root's replies, answering nothing of the thread.
      remote.thread("/liar/unrelated", dave, "not a reply to the root", []),
      remote.thread("/liar/honest", dave, "an honest reply", [], { inReplyTo: `${remote.base}/liar/root` }),
    ];
    const root = remote.thread("/liar/root", dave, "the liar's root", replies);
    const id = await resolve(root);
    await finished((await context(id)).refreshId!);
    expect(await stored(`${remote.base}/liar/honest`)).not.toBeNull();
    expect(await stored(`${remote.base}/liar/impostor`)).toBeNull();
    expect(await stored(`${remote.base}/liar/unrelated`)).toBeNull();
    expect((await stored(genuine))!.content_html).toBe("<p>the genuine words</p>");
  });
});

describe("a hostile context collection", () => {
  test("what it lists is kept only when it answers the thread: replies elsewhere, chains hanging from another thread and cycles are not; a reply listed before its parent is", async () => {
    const root = `${remote.base}/hctx/root`;
    const other = elsewhere.thread("/hctx/other-top", erin, "another thread's top", []);
    const listed = [
      root,
      // Listed before its parent, which answers the root: kept once the parent is.
      remote.thread("/hctx/child", dave, "a reply to a reply", [], { inReplyTo: `${remote.base}/hctx/parent` }),
      remote.thread("/hctx/parent", dave, "a reply to the root", [], { inReplyTo: root }),
      // Genuine replies to another thread, on another server, one answering the other.
      elsewhere.thread("/hctx/x", erin, "erin answers her own thread", [], { inReplyTo: other }),
      elsewhere.thread("/hctx/x2", erin, "and again", [], { inReplyTo: `${elsewhere.base}/hctx/x` }),
      // Two statuses answering each other.
      elsewhere.thread("/hctx/c1", erin, "cycle one", [], { inReplyTo: `${elsewhere.base}/hctx/c2` }),
      elsewhere.thread("/hctx/c2", erin, "cycle two", [], { inReplyTo: `${elsewhere.base}/hctx/c1` }),
    ];
    remote.route("/contexts/hctx", { id: `${remote.base}/contexts/hctx`, type: "Collection", attributedTo: dave, first: { id: `${remote.base}/contexts/hctx?page=0`, type: "CollectionPage", partOf: `${remote.base}/contexts/hctx`, items: listed } });
    remote.thread("/hctx/root", dave, "a root with a hostile context", [], { extra: { context: `${remote.base}/contexts/hctx` } });
    const id = await resolve(root);
    const refresh = await finished((await context(id)).refreshId!);
    expect(await stored(`${remote.base}/hctx/parent`)).not.toBeNull();
    expect((await stored(`${remote.base}/hctx/child`))!.in_reply_to_id).toBe((await stored(`${remote.base}/hctx/parent`))!.id);
    for (const path of ["/hctx/x", "/hctx/x2", "/hctx/c1", "/hctx/c2", "/hctx/other-top"]) expect(await stored(`${elsewhere.base}${path}`)).toBeNull();
    expect(refresh.async_refresh.result_count).toBe(2);
    expect((await context(id)).body.descendants.map((s: any) => s.uri)).toEqual([`${remote.base}/hctx/parent`, `${remote.base}/hctx/child`]);
  });
});

describe("GET /api/v1_alpha/async_refreshes/:id", () => {
  test("an unknown id is 404; no token is 401; a token without `read` is 403; nothing changes", async () => {
    const unknown = await alice.client.get("/api/v1_alpha/async_refreshes/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: "Record not found" });
    const anonymous = await fetch(`${a.base}/api/v1_alpha/async_refreshes/nope`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ error: "The access token is invalid" });
    const writer = await createUser(a, "writer", { scopes: "write" });
    const outside = await writer.client.get("/api/v1_alpha/async_refreshes/nope");
    expect(outside.status).toBe(403);
    expect(outside.body).toEqual({ error: "This action is outside the authorized scopes" });
  });
});
