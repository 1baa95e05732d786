import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A hostile server tries to get addresses that are not http(s) shown by this one: as a
// status's url, its attachments, custom emojis, and an actor's profile page, avatar, header
// and field links. Clients put these in links and image sources (and so did our own pages): none
// may come through, and none is stored.

let a: TestServer;
let alice: TestUser;
let evil: Awaited<ReturnType<typeof startRawServer>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  evil = await startRawServer("127.0.0.51");
});
afterAll(async () => {
  evil?.stop();
  await a?.close();
});

/** What the hostile server sent (our pages carry `data:` of their own: an empty favicon). */
const BAD = ["javascript:", "data:image", "data:text", "file:", "evil.example@"];
const emoji = (name: string, url: string) => ({ type: "Emoji", id: `${evil.base}/emojis/${name}`, name: `:${name}:`, icon: { type: "Image", mediaType: "image/png", url } });
/** Everything stored of a remote account and its statuses, as one string to search (values, not rows: the three tables share column names). */
const storedOf = async (uri: string) =>
  JSON.stringify(
    await a.database.port.values("SELECT a.*, s.*, m.* FROM accounts a LEFT JOIN statuses s ON s.account_id = a.id LEFT JOIN media_attachments m ON m.status_id = s.id WHERE a.uri = ?", [uri]),
  );
const missing = (what: "avatars" | "headers") => `${a.base}/${what}/original/missing.png`;

describe("addresses from other servers are http(s) or dropped", () => {
  test("a Note's url, attachments and emojis and its author's url, avatar, header, emojis and field links in bad schemes are dropped: in the API, in a boost, on the booster's public page, in the database", async () => {
    const mallory = evil.actor("mallory", "mallory", {
      name: "Mallory :evilface: :goodface:",
      url: "javascript:alert('url')",
      icon: { type: "Image", url: "javascript:alert('icon')" },
      image: { type: "Image", url: "file:///etc/passwd" },
      endpoints: { sharedInbox: "javascript:alert('inbox')" },
      followers: "data:text/html,followers",
      tag: [emoji("evilface", "data:image/png;base64,AAAA"), emoji("goodface", "https://files.example/good.png")],
      attachment: [
        { type: "PropertyValue", name: "Script", value: '<a href="javascript:alert(\'field\')">click me</a>' },
        { type: "PropertyValue", name: "Data", value: '<a href="data:text/html,<script>alert(1)</script>">see</a>' },
        { type: "PropertyValue", name: "Gemini", value: '<a href="gemini://g.example/">capsule</a>' },
        { type: "PropertyValue", name: "Site", value: '<a href="https://mallory.example/">mallory.example</a>' },
      ],
    });
    const noteId = `${evil.base}/notes/1`;
    const res = await evil.post(`${a.base}/users/alice/inbox`, mallory, {
      id: `${noteId}/activity`,
      type: "Create",
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      cc: [`${a.base}/users/alice`],
      object: {
        id: noteId,
        type: "Note",
        attributedTo: mallory,
        url: "javascript:alert('status')",
        inReplyTo: "javascript:alert('parent')",
        to: ["https://www.w3.org/ns/activitystreams#Public"],
        cc: [`${a.base}/users/alice`],
        content: `<p>look <a href="javascript:alert('content')">here</a> :evilface: :goodface:</p>`,
        tag: [{ type: "Mention", href: `${a.base}/users/alice` }, emoji("evilface", "javascript:alert('emoji')"), emoji("goodface", "https://files.example/good.png")],
        attachment: [
          { type: "Document", mediaType: "image/png", url: "data:image/png;base64,AAAA" },
          { type: "Document", mediaType: "image/png", url: "javascript:alert('media')" },
          { type: "Document", mediaType: "video/mp4", url: "file:///etc/passwd" },
          { type: "Document", mediaType: "image/png", url: "https://evil.example@files.example/x.png" },
          { type: "Document", mediaType: "image/png", url: "https://files.example/cat.png", name: "a cat" },
        ],
      },
    });
    expect(res.status).toBe(202);
    const row = await a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [noteId]);
    expect(row).toBeDefined();

    const shown = (await alice.client.get(`/api/v1/statuses/${row!.id}`)).body;
    // No url of its own: the IRI stands in, as Mastodon shows it.
    expect(shown.url).toBe(noteId);
    expect(shown.uri).toBe(noteId);
    expect(shown.in_reply_to_id).toBeNull();
    expect(shown.content).toBe("<p>look here :evilface: :goodface:</p>");
    expect(shown.media_attachments.map((m: any) => [m.url, m.preview_url, m.remote_url])).toEqual([["https://files.example/cat.png", "https://files.example/cat.png", "https://files.example/cat.png"]]);
    expect(shown.emojis).toEqual([{ shortcode: "goodface", url: "https://files.example/good.png", static_url: "https://files.example/good.png", visible_in_picker: false }]);
    expect(shown.account).toMatchObject({
      username: "mallory",
      url: mallory,
      uri: mallory,
      avatar: missing("avatars"),
      avatar_static: missing("avatars"),
      header: missing("headers"),
      header_static: missing("headers"),
      emojis: [{ shortcode: "goodface", url: "https://files.example/good.png", static_url: "https://files.example/good.png", visible_in_picker: false }],
      fields: [
        { name: "Script", value: "click me", verified_at: null },
        { name: "Data", value: "see", verified_at: null },
        { name: "Gemini", value: "capsule", verified_at: null },
        { name: "Site", value: '<a href="https://mallory.example/" rel="nofollow noopener" target="_blank">mallory.example</a>', verified_at: null },
      ],
    });
    expect((await alice.client.get(`/api/v1/accounts/${shown.account.id}`)).body).toEqual(shown.account);

    // alice boosts it: the boost shows the same addresses, and so does her public profile page.
    const boost = await alice.client.post(`/api/v1/statuses/${row!.id}/reblog`);
    expect(boost.status).toBe(200);
    expect(boost.body.reblog).toMatchObject({ url: noteId, uri: noteId, media_attachments: [expect.objectContaining({ url: "https://files.example/cat.png" })] });
    const timeline = (await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body;
    expect(timeline[0].reblog.url).toBe(noteId);
    const page = await fetch(`${a.base}/@alice`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`href="${noteId}"`);
    for (const bad of BAD) expect([bad, html.includes(bad)]).toEqual([bad, false]);

    const stored = await storedOf(mallory);
    for (const bad of BAD) expect([bad, stored.includes(bad)]).toEqual([bad, false]);
    expect(await a.database.port.get("SELECT url, in_reply_to_uri FROM statuses WHERE uri = ?", [noteId])).toEqual({ url: null, in_reply_to_uri: null });
    expect(await a.database.port.get("SELECT url, avatar_remote_url, header_remote_url, shared_inbox_url, followers_url FROM accounts WHERE uri = ?", [mallory])).toEqual({
      url: null,
      avatar_remote_url: null,
      header_remote_url: null,
      shared_inbox_url: null,
      followers_url: null,
    });
  });

  test("an actor whose inbox or IRI is not http(s) is not stored, nor its Note", async () => {
    const before = await a.database.port.get("SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM statuses) AS statuses");
    const trudy = evil.actor("trudy", "trudy", { inbox: "javascript:alert('inbox')" });
    const res = await evil.post(`${a.base}/users/alice/inbox`, trudy, {
      id: `${evil.base}/notes/trudy/activity`,
      type: "Create",
      to: [`${a.base}/users/alice`],
      object: { id: `${evil.base}/notes/trudy`, type: "Note", attributedTo: trudy, to: [`${a.base}/users/alice`], content: "<p>hi</p>", tag: [{ type: "Mention", href: `${a.base}/users/alice` }] },
    });
    // Taken in (Mastodon answers 202 too) and dropped.
    expect(res.status).toBe(202);
    await a.federation!.idle();
    const search = await alice.client.get("/api/v2/search", { query: { q: trudy, resolve: "true" } });
    expect(search.status).toBe(200);
    expect(search.body).toEqual({ accounts: [], statuses: [], hashtags: [] });
    expect(await a.database.port.get("SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM statuses) AS statuses")).toEqual(before);
  });
});
