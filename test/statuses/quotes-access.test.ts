import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { delivered, SseClient, type StreamEvent } from "../support/streams.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Two things Mastodon 4.5 does around a quote that the quote itself does not show: the quoted
 * author of a private quote is mentioned silently (Quote#ensure_quoted_access), so that they
 * may see it and be told of it, without the post naming them; and a quote whose state changes
 * after its post went out (revoked above all) is shown again on the streams (`status.update`).
 */
let server: TestServer;
let gina: TestUser;
let hank: TestUser;
let ivy: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  [gina, hank, ivy] = (await Promise.all(["gina", "hank", "ivy"].map((n) => createUser(server, n)))) as [TestUser, TestUser, TestUser];
  // ivy follows hank (sees his private posts); gina follows nobody.
  expect((await ivy.client.post(`/api/v1/accounts/${hank.id}/follow`)).status).toBe(200);
});
afterAll(() => server.close());

const mentionRows = async (statusId: string) =>
  (await server.database.port.all<{ account_id: number }>("SELECT account_id FROM mentions WHERE status_id = ? ORDER BY account_id", [Number(statusId)])).map((r) => r.account_id);

describe("a private quote and its quoted author", () => {
  test("the quoted author sees it and is told (quote), though the post neither mentions nor addresses them; others still do not see it", async () => {
    const quoted = await postStatus(gina, { status: "a public thought" });
    const quoting = await postStatus(hank, { status: "for my followers only", visibility: "private", quoted_status_id: quoted.id });
    expect(quoting.visibility).toBe("private");
    expect(quoting.mentions).toEqual([]);
    // Its text is its own and the fallback link to the quoted post: no mention of gina.
    expect(quoting.content).toBe(`<p class="quote-inline">RE: <a href="${server.base}/@gina/${quoted.id}">${server.base}/@gina/${quoted.id}</a></p><p>for my followers only</p>`);

    const seen = await gina.client.get(`/api/v1/statuses/${quoting.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body.mentions).toEqual([]);
    expect(seen.body.quote).toMatchObject({ state: "accepted", quoted_status: { id: quoted.id } });
    const told = (await gina.client.get("/api/v1/notifications")).body;
    expect(told.map((n: { type: string; account: { id: string }; status: { id: string } }) => [n.type, n.account.id, n.status.id])).toEqual([["quote", hank.id, quoting.id]]);
    const grouped = (await gina.client.get("/api/v2/notifications")).body;
    expect(grouped.statuses.map((s: { id: string }) => s.id)).toEqual([quoting.id]);
    // Not a mention: no mention notification, nothing in gina's direct conversations.
    expect((await gina.client.get("/api/v1/notifications", { query: { "types[]": "mention" } })).body).toEqual([]);
    expect((await gina.client.get("/api/v1/conversations")).body).toEqual([]);

    // Someone who neither follows hank nor is quoted sees nothing.
    const stranger = await createUser(server, "jack");
    const hidden = await stranger.client.get(`/api/v1/statuses/${quoting.id}`);
    expect([hidden.status, hidden.body]).toEqual([404, { error: "Record not found" }]);
    expect(await mentionRows(quoting.id)).toEqual([gina.account.id]);
  });

  test("the silent mention outlasts edits, even one that mentions the quoted author and one that stops", async () => {
    const quoted = await postStatus(gina, { status: "another public thought" });
    const quoting = await postStatus(hank, { status: "first", visibility: "private", quoted_status_id: quoted.id });
    const edit = async (status: string) => {
      const res = await hank.client.put(`/api/v1/statuses/${quoting.id}`, { json: { status } });
      expect(res.status).toBe(200);
      return res.body;
    };
    expect((await edit("second")).mentions).toEqual([]);
    expect((await gina.client.get(`/api/v1/statuses/${quoting.id}`)).status).toBe(200);
    expect((await edit("third, @gina")).mentions.map((m: { id: string }) => m.id)).toEqual([gina.id]);
    expect((await edit("fourth, alone")).mentions).toEqual([]);
    expect((await gina.client.get(`/api/v1/statuses/${quoting.id}`)).status).toBe(200);
    expect(await mentionRows(quoting.id)).toEqual([gina.account.id]);
  });

  test("a public quote needs no access and the quoting post still names no one", async () => {
    const quoted = await postStatus(gina, { status: "open" });
    const quoting = await postStatus(ivy, { status: "quoting openly", quoted_status_id: quoted.id });
    expect(quoting.mentions).toEqual([]);
    expect((await gina.client.get(`/api/v1/statuses/${quoting.id}`)).body.mentions).toEqual([]);
  });
});

describe("a quote's new state on the streams", () => {
  const updates = (events: StreamEvent[], id: string) => events.filter((e) => e.event === "status.update" && JSON.parse(e.data!).id === id).map((e) => JSON.parse(e.data!));

  test("a revoked quote: its quoting status again, as status.update with the quote revoked, to the streams it went to", async () => {
    const url = (path: string) => `${server.base}/api/v1/streaming${path}`;
    const home = await SseClient.open(url("/user"), { token: ivy.token });
    const pub = await SseClient.open(url("/public"));
    try {
      const quoted = await postStatus(gina, { status: "quote me, then not" });
      const quoting = await postStatus(hank, { status: "quoting gina", quoted_status_id: quoted.id });
      await delivered(server, home, pub);
      // Posted with its quote settled: only the status itself, no update of it.
      expect(home.events.filter((e) => e.event === "update").map((e) => JSON.parse(e.data!).id)).toContain(quoting.id);
      expect([updates(home.events, quoting.id), updates(pub.events, quoting.id)]).toEqual([[], []]);

      expect((await gina.client.post(`/api/v1/statuses/${quoted.id}/quotes/${quoting.id}/revoke`)).status).toBe(200);
      await delivered(server, home, pub);
      for (const stream of [home, pub]) {
        const [update, ...more] = updates(stream.events, quoting.id);
        expect(more).toEqual([]);
        expect(update.quote).toEqual({ state: "revoked", quoted_status: null });
      }
    } finally {
      home.close();
      pub.close();
    }
  });

  test("a deleted quoting status sends its delete alone, not an update for its quote going with it", async () => {
    const url = (path: string) => `${server.base}/api/v1/streaming${path}`;
    const pub = await SseClient.open(url("/public"));
    try {
      const open = await postStatus(gina, { status: "quote and go" });
      const quoting = await postStatus(hank, { status: "soon gone", quoted_status_id: open.id });
      expect((await hank.client.delete(`/api/v1/statuses/${quoting.id}`)).status).toBe(200);
      await delivered(server, pub);
      expect(updates(pub.events, quoting.id)).toEqual([]);
      expect(pub.events.filter((e) => e.event === "delete").map((e) => e.data)).toContain(quoting.id);
    } finally {
      pub.close();
    }
  });
});
