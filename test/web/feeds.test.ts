import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import sharp from "sharp";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// RSS feeds, the hashtag page and the about page.
let server: TestServer;
let dana: TestUser;

beforeAll(async () => {
  server = await startTestServer({ CONTACT_EMAIL: "admin@rookery.example", REGISTRATIONS: "open" });
  dana = await createUser(server, "dana");
});
afterAll(async () => {
  await server?.close();
});

const get = async (path: string) => {
  const res = await fetch(`${server.base}${path}`);
  return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
};
/** The feed, checked to be well-formed XML, as a tree. */
const feed = (xml: string) => {
  expect(XMLValidator.validate(xml)).toBe(true);
  return new XMLParser({ ignoreAttributes: false, isArray: (name) => name === "item" || name === "enclosure" }).parse(xml).rss.channel;
};

describe("RSS", () => {
  test("/@name.rss: public posts, newest first, with content, link, date and media as enclosures; no unlisted, private, replies or boosts", async () => {
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#aa3366" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new Blob([png], { type: "image/png" }), "p.png");
    const media = (await dana.client.post("/api/v1/media", { multipart: form })).body;
    const first = await postStatus(dana, { status: "first & <foremost>", visibility: "public" });
    const pictured = await postStatus(dana, { status: "with a picture #rookery", visibility: "public", media_ids: [media.id], spoiler_text: "a warning" });
    await postStatus(dana, { status: "unlisted one", visibility: "unlisted" });
    await postStatus(dana, { status: "private one", visibility: "private" });
    // A reply to someone else (replies to oneself, threads, stay in: Mastodon's without_replies).
    const eve = await createUser(server, "eve");
    const eves = await postStatus(eve, { status: "eve speaks", visibility: "public" });
    await postStatus(dana, { status: "a reply", visibility: "public", in_reply_to_id: eves.id });
    await dana.client.post(`/api/v1/statuses/${first.id}/reblog`);

    const res = await get("/@dana.rss");
    expect([res.status, res.type]).toEqual([200, "application/rss+xml; charset=utf-8"]);
    const channel = feed(res.body);
    expect(channel.title).toBe("dana (@dana)");
    expect(channel.link).toBe(`${server.base}/@dana`);
    expect(channel.item.map((i: { link: string }) => i.link)).toEqual([pictured.url, first.url]);
    const [withMedia, plain] = channel.item;
    expect(withMedia.title).toBe("a warning");
    expect(withMedia.enclosure).toEqual([{ "@_url": media.url, "@_type": "image/png", "@_length": "0" }]);
    expect(plain.description).toBe("<p>first &amp; &lt;foremost&gt;</p>");
    expect(new Date(plain.pubDate).toISOString().slice(0, 19)).toBe(first.created_at.slice(0, 19));
    // The profile page offers it.
    expect((await get("/@dana")).body).toContain(`<link rel="alternate" type="application/rss+xml" href="${server.base}/@dana.rss">`);
    expect((await get("/@nobody.rss")).status).toBe(404);
  });

  test("/tags/:name and /tags/:name.rss: public posts with the hashtag", async () => {
    await postStatus(dana, { status: "another #Rookery post", visibility: "public" });
    await postStatus(dana, { status: "quiet #rookery post", visibility: "unlisted" });
    const page = await get("/tags/rookery");
    expect(page.status).toBe(200);
    expect(page.body).toContain("<h1>#rookery</h1>");
    expect(page.body).toContain("<p>another <a");
    expect(page.body).toContain("with a picture");
    expect(page.body).not.toContain("quiet #");
    expect(page.body).toContain(`<link rel="alternate" type="application/rss+xml" href="${server.base}/tags/rookery.rss">`);
    const channel = feed((await get("/tags/rookery.rss")).body);
    expect(channel.item).toHaveLength(2);
    expect((await get("/tags/nothingtagged")).body).toContain("No public posts with this hashtag yet.");
  });
});

describe("the about page", () => {
  test("/ says what the server is, whether it takes sign-ups, and whom to contact", async () => {
    const page = await get("/");
    expect(page.status).toBe(200);
    expect(page.body).toContain("<h1>Rookery</h1>");
    expect(page.body).toContain("Sign-ups are open");
    expect(page.body).toContain('<a href="mailto:admin@rookery.example">admin@rookery.example</a>');
    expect(page.body).toContain(`<link rel="canonical" href="${server.base}/">`);
    expect(page.body).toContain(`<a href="/oauth/sign_in">sign in here</a>`);
    // Nothing set yet: no empty sections.
    expect(page.body).not.toContain("<h2>About</h2>");
    expect(page.body).not.toContain("<h2>Rules</h2>");
  });

  test("/ shows the extended description and the rules the admin set, escaped as text", async () => {
    const info = server.ctx.services.instanceInfo;
    await info.setExtendedDescription("A small server <script>x</script>\n\nSee https://rookery.example/about");
    await info.addRule("Be kind <b>always</b>", "no insults");
    const page = await get("/");
    expect(page.body).toContain("<h2>About</h2>");
    expect(page.body).toContain("A small server &lt;script&gt;x&lt;/script&gt;");
    expect(page.body).not.toContain("<script>x");
    expect(page.body).toContain('href="https://rookery.example/about"');
    expect(page.body).toContain('<ol class="rules"><li>Be kind &lt;b&gt;always&lt;/b&gt;<br><span class="hint">no insults</span></li></ol>');
  });
});

describe("oEmbed", () => {
  test("/api/oembed?url= a status page or IRI: Mastodon's rich type with an iframe of /embed; the page offers it; the embed may be framed", async () => {
    const post = await postStatus(dana, { status: "embed me", visibility: "public" });
    const page = (await get(`/@dana/${post.id}`)).body;
    const discovery = /<link rel="alternate" type="application\/json\+oembed" href="([^"]+)">/.exec(page)?.[1]?.replace(/&amp;/g, "&");
    expect(discovery).toBe(`${server.base}/api/oembed?format=json&url=${encodeURIComponent(post.url)}`);
    for (const url of [post.url, post.uri]) {
      const res = await fetch(`${server.base}/api/oembed?url=${encodeURIComponent(url)}&maxwidth=300`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        type: "rich",
        version: "1.0",
        author_name: "dana",
        author_url: `${server.base}/@dana`,
        provider_name: new URL(server.base).host,
        provider_url: `${server.base}/`,
        cache_age: 86400,
        html: `<iframe src="${post.url}/embed" class="mastodon-embed" style="max-width: 100%; border: 0" width="300" allowfullscreen="allowfullscreen"></iframe>`,
        width: 300,
        height: null,
      });
    }
    const embed = await fetch(`${post.url}/embed`);
    expect(embed.status).toBe(200);
    expect(embed.headers.get("content-security-policy")).toContain("frame-ancestors *");
    expect(await embed.text()).toContain("<p>embed me</p>");
  });

  test("a private status, another server's URL, no URL, or an unknown status: 404 with Mastodon's error", async () => {
    const hidden = await postStatus(dana, { status: "not for embedding", visibility: "private" });
    for (const query of [`url=${encodeURIComponent(hidden.url)}`, "url=https%3A%2F%2Felsewhere.example%2F%40dana%2F1", "", `url=${encodeURIComponent(`${server.base}/@dana/1`)}`]) {
      const res = await fetch(`${server.base}/api/oembed?${query}`);
      expect([query, res.status, await res.json()]).toEqual([query, 404, { error: "Record not found" }]);
    }
    expect((await fetch(`${hidden.url}/embed`)).status).toBe(404);
  });
});
