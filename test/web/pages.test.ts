import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { createUser, PASSWORD, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The public face: /@name and /@name/:id open in a browser, as server-rendered pages.
let server: TestServer;
let alice: TestUser;

const HOSTILE = `<script>x()</script>"q"&'s'`;

const ESCAPED = "&lt;script&gt;x()&lt;/script&gt;&quot;q&quot;&amp;&#39;s&#39;";

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  const updated = await alice.client.patch("/api/v1/accounts/update_credentials", {
    json: { display_name: `A ${HOSTILE}`, note: `Bio with <script>bad()</script> and https://example.com`, fields_attributes: { "0": { name: `Site <b>${HOSTILE}</b>`, value: "https://alice.example" } } },
  });
  expect([updated.status, updated.body]).toEqual([200, expect.anything()]);
});
afterAll(async () => {
  await server?.close();
});

const get = async (path: string, accept = "text/html") => {
  const res = await fetch(`${server.base}${path}`, { headers: { accept } });
  return { status: res.status, headers: res.headers, body: await res.text() };
};
const meta = (body: string, key: string) => new RegExp(`<meta (?:property|name)="${key}" content="([^"]*)">`).exec(body)?.[1];

describe("/@name/:id, a status page", () => {
  test("a public status: its text, author, meta for previews, canonical and the ActivityPub twin; no script anywhere", async () => {
    const post = await postStatus(alice, { status: "Hello from the web page", visibility: "public" });
    const page = await get(`/@alice/${post.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("content-security-policy")).not.toContain("script-src");
    expect(page.headers.get("link")).toBe(`<${post.uri}>; rel="alternate"; type="application/activity+json"`);
    expect(page.body).toContain("<p>Hello from the web page</p>");
    expect(page.body).toContain(`<link rel="canonical" href="${post.url}">`);
    expect(page.body).toContain(`<link rel="alternate" type="application/activity+json" href="${post.uri}">`);
    expect(meta(page.body, "og:description")).toBe("Hello from the web page");
    expect(meta(page.body, "og:type")).toBe("article");
    expect(meta(page.body, "twitter:card")).toBe("summary");
    expect(page.body).not.toContain("<script");
    // The hostile display name is text, in the title, in meta and in the page.
    expect(page.body).toContain(`A ${ESCAPED}`);
  });

  test("the thread around it, a content warning behind <details>, media with alt text, poll results", async () => {
    const root = await postStatus(alice, { status: "the start", visibility: "public" });
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#3366aa" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new Blob([png], { type: "image/png" }), "x.png");
    form.append("description", `alt ${HOSTILE}`);
    const media = (await alice.client.post("/api/v1/media", { multipart: form })).body;
    const middle = await postStatus(alice, { status: "the middle", visibility: "public", in_reply_to_id: root.id, spoiler_text: `CW ${HOSTILE}`, media_ids: [media.id] });
    const reply = await postStatus(alice, { status: "a public reply", visibility: "public", in_reply_to_id: middle.id });
    await postStatus(alice, { status: "a private reply", visibility: "private", in_reply_to_id: middle.id });
    const poll = await postStatus(alice, { status: "a poll", visibility: "public", poll: { options: ["tea", "coffee"], expires_in: 3600 } });

    const page = await get(`/@alice/${middle.id}`);
    expect(page.status).toBe(200);
    expect(page.body.indexOf("the start")).toBeLessThan(page.body.indexOf("the middle"));
    expect(page.body).toContain("a public reply");
    expect(page.body).not.toContain("a private reply");
    expect(page.body).toContain(`<details class="cw"><summary>CW ${ESCAPED}</summary>`);
    expect(page.body).toContain(`alt="alt ${ESCAPED}"`);
    expect(meta(page.body, "og:image")).toBe(media.url);
    expect(meta(page.body, "twitter:card")).toBe("summary_large_image");
    expect(meta(page.body, "og:description")).toBe(`CW ${ESCAPED}`);
    expect(page.body).not.toContain("<script");
    expect((await get(`/@alice/${reply.id}`)).body).toContain("the middle");

    const pollPage = await get(`/@alice/${poll.id}`);
    expect(pollPage.body).toContain("<li>tea: 0 (0%)</li>");
    expect(pollPage.body).toContain("<li>coffee: 0 (0%)</li>");
  });

  test("private, direct, deleted, unknown, and another account's status under this name: 404, as the API answers an anonymous reader", async () => {
    const bob = await createUser(server, "bob");
    const privatePost = await postStatus(alice, { status: "followers only", visibility: "private" });
    const direct = await postStatus(alice, { status: "@bob just you", visibility: "direct" });
    const gone = await postStatus(alice, { status: "soon gone", visibility: "public" });
    expect((await alice.client.delete(`/api/v1/statuses/${gone.id}`)).status).toBe(200);
    const bobs = await postStatus(bob, { status: "bob's", visibility: "public" });
    for (const path of [`/@alice/${privatePost.id}`, `/@alice/${direct.id}`, `/@alice/${gone.id}`, "/@alice/123456789", `/@alice/${bobs.id}`, "/@nobody/1", "/@nobody", "/alice", "/@alice/notanid"]) {
      const page = await get(path);
      expect([path, page.status]).toEqual([path, 404]);
      expect(page.body).not.toContain("followers only");
    }
    expect((await get(`/@bob/${bobs.id}`)).status).toBe(200);
  });

  test("the actor's and the Note's IRIs opened in a browser lead to their pages", async () => {
    const post = await postStatus(alice, { status: "by its IRI", visibility: "public" });
    for (const [from, to] of [[post.uri, post.url], [`${server.base}/users/alice`, `${server.base}/@alice`]]) {
      const res = await fetch(from, { headers: { accept: "text/html" }, redirect: "manual" });
      expect([from, res.status, res.headers.get("location")]).toEqual([from, 302, to]);
    }
    expect((await fetch(`${server.base}/users/nobody`, { headers: { accept: "text/html" }, redirect: "manual" })).status).toBe(404);
  });

  test("revalidation: the same page asked with its ETag is 304 without a body; once the status changes (a favourite), 200 with a new ETag", async () => {
    const post = await postStatus(alice, { status: "cache me", visibility: "public" });
    const first = await fetch(`${server.base}/@alice/${post.id}`, { headers: { accept: "text/html" } });
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^W\/"[0-9a-z]+"$/);
    expect(first.headers.get("cache-control")).toBe("public, max-age=60");
    const again = await fetch(`${server.base}/@alice/${post.id}`, { headers: { accept: "text/html", "if-none-match": etag } });
    expect([again.status, await again.text(), again.headers.get("etag")]).toEqual([304, "", etag]);
    const bob = await createUser(server, "bobby");
    expect((await bob.client.post(`/api/v1/statuses/${post.id}/favourite`)).status).toBe(200);
    const changed = await fetch(`${server.base}/@alice/${post.id}`, { headers: { accept: "text/html", "if-none-match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect(await changed.text()).toContain("1 favourite<");
    // A new reply, an edit and a deletion show at once: pages are kept only while nothing changed.
    await postStatus(bob, { status: "a fresh reply", visibility: "public", in_reply_to_id: post.id });
    expect((await get(`/@alice/${post.id}`)).body).toContain("a fresh reply");
    expect((await alice.client.put(`/api/v1/statuses/${post.id}`, { json: { status: "cache me, edited" } })).status).toBe(200);
    expect((await get(`/@alice/${post.id}`)).body).toContain("cache me, edited");
    expect((await alice.client.delete(`/api/v1/statuses/${post.id}`)).status).toBe(200);
    expect((await get(`/@alice/${post.id}`)).status).toBe(404);
  });

  test("a signed-in browser whom the author blocked gets 404 for the status page; another gets it", async () => {
    const post = await postStatus(alice, { status: "not for the blocked", visibility: "public" });
    const [blocked, welcome] = [await createUser(server, "blockedone"), await createUser(server, "welcome")];
    expect((await alice.client.post(`/api/v1/accounts/${blocked.id}/block`)).status).toBe(200);
    const session = async (user: TestUser) => `_rookery_session=${await server.ctx.services.webSessions.create(user.account.id)}`;
    for (const round of ["fresh", "kept"]) {
      const asBlocked = await fetch(`${server.base}/@alice/${post.id}`, { headers: { accept: "text/html", cookie: await session(blocked) } });
      expect([round, asBlocked.status]).toEqual([round, 404]);
      const asWelcome = await fetch(`${server.base}/@alice/${post.id}`, { headers: { accept: "text/html", cookie: await session(welcome) } });
      expect([round, asWelcome.status]).toEqual([round, 200]);
    }
  });

  test("a boost's page shows it as a boost of the original", async () => {
    const booster = await createUser(server, "booster");
    const post = await postStatus(alice, { status: "worth boosting", visibility: "public" });
    const boost = (await booster.client.post(`/api/v1/statuses/${post.id}/reblog`)).body;
    const page = await get(`/@booster/${boost.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`<p class="boosted"><a href="${server.base}/@booster">booster</a> boosted</p>`);
    expect(page.body).toContain("<p>worth boosting</p>");
    expect((await get(`/@alice/${boost.id}`)).status).toBe(404);
  });

  test("ActivityPub clients asking the same URL get the Note (both media types Mastodon accepts)", async () => {
    const post = await postStatus(alice, { status: "negotiated", visibility: "public" });
    for (const accept of ["application/activity+json", 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"']) {
      const res = await get(`/@alice/${post.id}`, accept);
      expect([accept, res.status]).toEqual([accept, 200]);
      expect(JSON.parse(res.body)).toMatchObject({ id: post.uri, type: "Note" });
    }
  });
});

describe("/@name, a profile page", () => {
  test("the profile (name, bio, fields, counts), then public and unlisted posts newest first; never private or direct ones", async () => {
    await postStatus(alice, { status: "an unlisted one", visibility: "unlisted" });
    await postStatus(alice, { status: "a private one", visibility: "private" });
    const page = await get("/@alice");
    expect(page.status).toBe(200);
    expect(page.headers.get("link")).toBe(`<${server.base}/users/alice>; rel="alternate"; type="application/activity+json"`);
    expect(page.body).toContain(`<link rel="canonical" href="${server.base}/@alice">`);
    expect(meta(page.body, "og:type")).toBe("profile");
    expect(page.body).toContain(`<h1>A ${ESCAPED}</h1>`);
    expect(page.body).toContain("an unlisted one");
    expect(page.body).not.toContain("a private one");
    expect(page.body).not.toContain("just you");
    expect(page.body).toContain("<dt>Site &lt;b&gt;");
    // The field's link carries rel="me", for the other site to verify it.
    expect(page.body).toMatch(/<a href="https:\/\/alice\.example"[^>]* rel="me nofollow noopener noreferrer"/);
    expect(page.body).not.toContain("<script");
    expect(page.body).not.toContain("bad()</script>");
  });

  test("pages of 20 with a plain link to older posts", async () => {
    const carol = await createUser(server, "carol");
    for (let i = 1; i <= 23; i++) await postStatus(carol, { status: `carol post number ${i}.`, visibility: "public" });
    const first = await get("/@carol");
    expect(first.body).toContain("carol post number 23.");
    expect(first.body).not.toContain("carol post number 3.");
    const next = /<a href="([^"]+)" rel="next">/.exec(first.body)?.[1];
    expect(next).toBeDefined();
    const second = await get(next!.replace(server.base, "").replace(/&amp;/g, "&"));
    expect(second.body).toContain("carol post number 3.");
    expect(second.body).toContain("carol post number 1.");
    expect(second.body).not.toContain("carol post number 23.");
  });

  test("the stylesheet is served, and WHITELIST_MODE keeps the pages for members: 401 with a sign-in link, readable once signed in", async () => {
    const css = await get("/web/rookery.css", "text/css");
    expect([css.status, css.headers.get("content-type")]).toEqual([200, "text/css; charset=utf-8"]);
    expect(css.body).toContain("prefers-color-scheme:dark");
    const closed = await startTestServer({ WHITELIST_MODE: "true" });
    try {
      const member = await createUser(closed, "member");
      const post = await postStatus(member, { status: "secret words", visibility: "public" });
      for (const path of ["/@member", `/@member/${post.id}`]) {
        const res = await fetch(`${closed.base}${path}`, { headers: { accept: "text/html" } });
        expect([path, res.status]).toEqual([path, 401]);
        const body = await res.text();
        expect(body).not.toContain("secret words");
        expect(body).toContain(`<a href="/oauth/sign_in?return_to=${encodeURIComponent(path)}">Sign in</a>`);
      }
      // The sign-in form, then a post of it as the browser sends it: back to the page, signed in.
      const signIn = async (password: string, returnTo: string, origin = closed.base) => {
        const form = await fetch(`${closed.base}/oauth/sign_in?return_to=${encodeURIComponent(returnTo)}`);
        expect(form.status).toBe(200);
        const formCookie = form.headers.get("set-cookie")!.split(";")[0]!;
        const html = await form.text();
        const token = /name="authenticity_token" value="([^"]+)"/.exec(html)![1]!;
        const fields = new URLSearchParams({ authenticity_token: token, return_to: /name="return_to" value="([^"]+)"/.exec(html)![1]!.replace(/&#x2F;|&#47;/g, "/"), username: "member", password });
        return fetch(`${closed.base}/oauth/sign_in`, { method: "POST", redirect: "manual", headers: { cookie: formCookie, origin, "content-type": "application/x-www-form-urlencoded" }, body: fields });
      };
      const wrong = await signIn("not the password", `/@member/${post.id}`);
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toContain("Invalid username, e-mail address or password.");
      expect((await signIn(PASSWORD, "/@member", "https://elsewhere.example")).status).toBe(403);
      const done = await signIn(PASSWORD, `/@member/${post.id}`);
      expect([done.status, done.headers.get("location")]).toEqual([303, `${closed.base}/@member/${post.id}`]);
      const session = done.headers.get("set-cookie")!.split(";")[0]!;
      const read = await fetch(`${closed.base}/@member/${post.id}`, { headers: { accept: "text/html", cookie: session } });
      expect(read.status).toBe(200);
      expect(read.headers.get("cache-control")).toBe("private, max-age=60");
      expect(await read.text()).toContain("secret words");
      // Only paths of this server are followed after signing in.
      expect((await signIn(PASSWORD, "//evil.example/x")).headers.get("location")).toBe(`${closed.base}/`);
    } finally {
      await closed.close();
    }
  });
});

describe("/favicon.ico", () => {
  test("an icon (a PNG, as the pages' <link rel=icon> says) rather than the 404 browsers met on every page", async () => {
    const res = await fetch(`${server.base}/favicon.ico`);
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "image/png"]);
    const image = await sharp(new Uint8Array(await res.arrayBuffer())).metadata();
    expect([image.format, image.width, image.height]).toEqual(["png", 32, 32]);
    expect((await get("/")).body).toContain('<link rel="icon" href="/favicon.ico" type="image/png">');
  });
});
