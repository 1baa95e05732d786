import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clips, removeClips } from "../support/clips.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { counted } from "../../src/web/words.ts";

// The public pages read as a person expects: "1 reply", "2 replies" by the plural rules of the
// pages' language, and a video post previews as its own frame, not its author's face.

let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
});
afterAll(async () => {
  await server?.close();
  removeClips();
});

const page = async (path: string) => {
  const res = await fetch(`${server.base}${path}`, { headers: { accept: "text/html" } });
  expect(res.status).toBe(200);
  return res.text();
};
const meta = (body: string, key: string) => new RegExp(`<meta (?:property|name)="${key}" content="([^"]*)">`).exec(body)?.[1];
const counts = (body: string) => /<ul class="counts">(.*?)<\/ul>/.exec(body)?.[1]?.replace(/<\/?li>/g, "|");
const focusMeta = (body: string) => /<article class="status focus">[\s\S]*?<p class="meta">.*?<\/time><\/a>(.*?)<\/p>/.exec(body)?.[1];

describe("counted words", () => {
  test("a server of one: 1 user, 0 posts; its profile: 1 post, 0 following, 1 follower, then 2 followers", async () => {
    expect(counts(await page("/"))).toBe("|1 user||0 posts|");
    await postStatus(alice, { status: "the first", visibility: "public" });
    const bob = await createUser(server, "bob");
    expect((await bob.client.post(`/api/v1/accounts/${alice.id}/follow`)).status).toBe(200);
    expect(counts(await page("/@alice"))).toBe("|1 post||0 following||1 follower|");
    const carol = await createUser(server, "carol");
    expect((await carol.client.post(`/api/v1/accounts/${alice.id}/follow`)).status).toBe(200);
    expect(counts(await page("/@alice"))).toBe("|1 post||0 following||2 followers|");
    expect(counts(await page("/@bob"))).toBe("|0 posts||1 following||0 followers|");
    expect(counts(await page("/"))).toBe("|3 users||1 post|");
  });

  test("a status: 0 replies, then 1 reply · 1 boost · 1 favourite, then 2 of each", async () => {
    const post = await postStatus(alice, { status: "count me", visibility: "public" });
    expect(focusMeta(await page(`/@alice/${post.id}`))).toBe(" · 0 replies · 0 boosts · 0 favourites");
    const [bob, carol] = [await createUser(server, "bobby"), await createUser(server, "caro")];
    for (const [user, n] of [[bob, 1], [carol, 2]] as const) {
      await postStatus(user, { status: "a reply", visibility: "public", in_reply_to_id: post.id });
      expect((await user.client.post(`/api/v1/statuses/${post.id}/reblog`)).status).toBe(200);
      expect((await user.client.post(`/api/v1/statuses/${post.id}/favourite`)).status).toBe(200);
      expect(focusMeta(await page(`/@alice/${post.id}`))).toBe(n === 1 ? " · 1 reply · 1 boost · 1 favourite" : " · 2 replies · 2 boosts · 2 favourites");
    }
  });

  test("a poll: 0 votes, 1 vote, 2 votes", async () => {
    const post = await postStatus(alice, { status: "tea or coffee", visibility: "public", poll: { options: ["tea", "coffee"], expires_in: 3600 } });
    const votes = async () => /<div class="poll">.*?<p class="meta">(.*?)<\/p>/.exec(await page(`/@alice/${post.id}`))?.[1];
    expect(await votes()).toBe("0 votes");
    for (const [name, expected] of [["voter1", "1 vote"], ["voter2", "2 votes"]]) {
      const voter = await createUser(server, name as string);
      expect((await voter.client.post(`/api/v1/polls/${post.poll.id}/votes`, { json: { choices: [0] } })).status).toBe(200);
      expect(await votes()).toBe(expected);
    }
  });

  test("the plural rules and number grouping are the pages' language's (English), whatever the status's language", async () => {
    expect([0, 1, 2, 1.5, 1234].map((n) => counted(n, "reply"))).toEqual(["0 replies", "1 reply", "2 replies", "1.5 replies", "1,234 replies"]);
    expect(counted(1, "following")).toBe("1 following");
    // A language without words of its own here is written, and counted, in the pages' language.
    expect(counted(1, "follower", "fr")).toBe("1 follower");
    const post = await postStatus(alice, { status: "Bonjour à tous", visibility: "public", language: "fr" });
    const body = await page(`/@alice/${post.id}`);
    expect(body).toContain('<html lang="en">');
    expect(body).toContain('<div class="content" lang="fr"><p>Bonjour à tous</p></div>');
    expect(focusMeta(body)).toBe(" · 0 replies · 0 boosts · 0 favourites");
  });
});

describe("link previews", () => {
  test("a video post's og:image is its preview frame, a large card; a post without media shows the author's avatar", async () => {
    const form = new FormData();
    form.append("file", new Blob([(await clips.mp4()) as Uint8Array<ArrayBuffer>], { type: "video/mp4" }), "clip.mp4");
    const media = await alice.client.post("/api/v1/media", { multipart: form });
    expect(media.status).toBe(200);
    expect(media.body.type).toBe("video");
    expect(media.body.preview_url).toMatch(/\.(png|jpe?g|webp)$/);
    const post = await postStatus(alice, { status: "a film", visibility: "public", media_ids: [media.body.id] });
    const body = await page(`/@alice/${post.id}`);
    expect(meta(body, "og:image")).toBe(media.body.preview_url);
    expect(meta(body, "twitter:image")).toBe(media.body.preview_url);
    expect(meta(body, "twitter:card")).toBe("summary_large_image");
    const preview = await fetch(media.body.preview_url);
    expect(preview.status).toBe(200);
    expect(preview.headers.get("content-type")).toMatch(/^image\//);

    const plain = await postStatus(alice, { status: "just words", visibility: "public" });
    const plainBody = await page(`/@alice/${plain.id}`);
    expect(meta(plainBody, "og:image")).toBe(post.account.avatar);
    expect(meta(plainBody, "twitter:card")).toBe("summary");
  });
});
