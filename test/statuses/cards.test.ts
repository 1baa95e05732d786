import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Link previews: the page a status links to is read in the background and its OpenGraph shown
// as the status's `card`. The pages come from a local server on another loopback address.
let server: TestServer;
let alice: TestUser;
let pages: ReturnType<typeof Bun.serve>;
const hits = new Map<string, number>();

const ARTICLE = `<!DOCTYPE html><html lang="en-GB"><head>
<title>Ignored when og:title is there</title>
<meta property="og:title" content="Moss &amp; lichen: a field guide">
<meta property="og:description" content="Everything about moss.">
<meta property="og:image" content="/images/moss.jpg">
<meta property="og:image:width" content="1200"><meta property="og:image:height" content="630">
<meta property="og:image:alt" content="Green moss on a stone">
<meta property="og:site_name" content="Moss Weekly">
<meta property="article:published_time" content="2026-11-01T10:00:00Z">
<meta name="author" content="Ivy Green">
</head><body><p>The article.</p><meta property="og:title" content="not in the head"></body></html>`;

beforeAll(async () => {
  server = await startTestServer({ ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(server, "alice");
  pages = Bun.serve({
    hostname: "127.0.0.17",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const html = (body: string) => new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
      if (path === "/article") return html(ARTICLE);
      if (path === "/plain") return html("<html><head><title> A plain   page </title><meta name=\"description\" content=\"Just a title.\"></head><body></body></html>");
      if (path === "/notitle") return html("<html><head></head><body>nothing to show</body></html>");
      if (path === "/moved") return Response.redirect("/plain", 302);
      if (path === "/endless") return new Response(new ReadableStream({ pull: (c) => c.enqueue(new TextEncoder().encode("<p>".repeat(10_000))) }), { headers: { "content-type": "text/html" } });
      return new Response("missing", { status: 404 });
    },
  });
});
afterAll(async () => {
  await server?.close();
  pages?.stop(true);
});

const link = (path: string) => `http://127.0.0.17:${pages.port}${path}`;
const cardOf = async (id: string) => (await alice.client.get(`/api/v1/statuses/${id}`)).body.card;
const cardRows = async (on: TestServer, where: string, params: unknown[] = []) =>
  Number((await on.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM preview_cards WHERE ${where}`, params))!.n);
const failed = async (url: string) => (await cardRows(server, "url = ? AND failed_at IS NOT NULL", [url])) === 1;

describe("link previews", () => {
  test("a status's first link becomes its card: Mastodon's PreviewCard from the page's OpenGraph; the same link is fetched once", async () => {
    const post = await postStatus(alice, { status: `Read this: ${link("/article")} #moss`, visibility: "public" });
    const card = await eventually(() => cardOf(post.id), "the card");
    expect(card).toEqual({
      url: link("/article"),
      title: "Moss & lichen: a field guide",
      description: "Everything about moss.",
      language: "en-GB",
      type: "link",
      author_name: "Ivy Green",
      author_url: "",
      provider_name: "Moss Weekly",
      provider_url: "",
      html: "",
      width: 1200,
      height: 630,
      image: link("/images/moss.jpg"),
      image_description: "Green moss on a stone",
      embed_url: "",
      blurhash: null,
      published_at: "2026-11-01T10:00:00.000Z",
      authors: [],
    });
    expect((await alice.client.get(`/api/v1/statuses/${post.id}/card`)).body).toEqual(card);
    // Another status with the link: the card kept for it, no second fetch.
    const again = await postStatus(alice, { status: `Again ${link("/article")}`, visibility: "public" });
    expect(await eventually(() => cardOf(again.id), "the second card")).toEqual(card);
    expect(hits.get("/article")).toBe(1);
  });

  test("mentions and hashtags are not the link; a redirect is followed; <title> and the description meta stand in for OpenGraph", async () => {
    await createUser(server, "bob");
    const post = await postStatus(alice, { status: `@bob #tag look ${link("/moved")}`, visibility: "public" });
    const card = await eventually(() => cardOf(post.id), "the card");
    expect([card.url, card.title, card.description, card.provider_name, card.image]).toEqual([link("/moved"), "A plain page", "Just a title.", "127.0.0.17", null]);
  });

  test("no card for a page without a title, one past the size cap, or a status with media; failures are not fetched again", async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#000" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new Blob([png], { type: "image/png" }), "p.png");
    const media = (await alice.client.post("/api/v1/media", { multipart: form })).body;
    const withMedia = await postStatus(alice, { status: `Pictured ${link("/plain?media")}`, visibility: "public", media_ids: [media.id] });
    const untitled = await postStatus(alice, { status: `See ${link("/notitle")}`, visibility: "public" });
    const endless = await postStatus(alice, { status: `See ${link("/endless")}`, visibility: "public" });
    await eventually(async () => (await failed(link("/notitle"))) && (await failed(link("/endless"))), "both tried and failed");
    expect([await cardOf(withMedia.id), await cardOf(untitled.id), await cardOf(endless.id)]).toEqual([null, null, null]);
    expect((await alice.client.get(`/api/v1/statuses/${untitled.id}/card`)).body).toEqual({});
    const again = await postStatus(alice, { status: `Still ${link("/notitle")}`, visibility: "public" });
    // A later link's card proves the queue went past the repeated one.
    const marker = await postStatus(alice, { status: `And ${link("/plain?marker")}`, visibility: "public" });
    await eventually(() => cardOf(marker.id), "the marker's card");
    expect(await cardOf(again.id)).toBeNull();
    expect(hits.get("/notitle")).toBe(1);
    expect(await cardRows(server, "url LIKE '%media'")).toBe(0);
  });

  test("an edit that removes the link removes the card", async () => {
    const post = await postStatus(alice, { status: `Linked ${link("/article")}`, visibility: "public" });
    await eventually(() => cardOf(post.id), "the card");
    expect((await alice.client.put(`/api/v1/statuses/${post.id}`, { json: { status: "No link any more" } })).status).toBe(200);
    await eventually(async () => (await cardOf(post.id)) === null, "the card gone");
  });

  test("GET /api/v1/statuses/:id/card: unknown, or someone else's private status, 404 with Mastodon's error", async () => {
    const bob = await createUser(server, "bobby");
    const hidden = await postStatus(bob, { status: `mine ${link("/article")}`, visibility: "private" });
    for (const id of ["999999999", hidden.id]) {
      const res = await alice.client.get(`/api/v1/statuses/${id}/card`);
      expect([id, res.status, res.body]).toEqual([id, 404, { error: "Record not found" }]);
    }
  });

  test("without ALLOW_PRIVATE_ADDRESSES, a link to a loopback address is never fetched", async () => {
    const strict = await startTestServer();
    try {
      const carol = await createUser(strict, "carol");
      const before = hits.get("/plain") ?? 0;
      await postStatus(carol, { status: `Internal ${link("/plain?internal")}`, visibility: "public" });
      // The refused fetch is recorded as a failed card: only then is "never fetched" a finding.
      await eventually(async () => (await cardRows(strict, "failed_at IS NOT NULL")) === 1, "tried and refused");
      expect(hits.get("/plain") ?? 0).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
