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
  });
});
