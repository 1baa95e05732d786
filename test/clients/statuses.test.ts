import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRestAPIClient } from "masto";
import generator from "megalodon";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

describe("masto.js", () => {
  test("posts, reads, acts on and deletes statuses; pages timelines", async () => {
    const a = createRestAPIClient({ url: server.base, accessToken: alice.token });
    const b = createRestAPIClient({ url: server.base, accessToken: bob.token });
    await b.v1.accounts.$select(alice.id).follow();

    const status = await a.v1.statuses.create({
      status: "Hello from masto #clients @bob",
      visibility: "public",
      language: "en",
      poll: { options: ["yes", "no"], expiresIn: 600, multiple: false },
    });
    expect(status.content).toContain("#<span>clients</span>");
    expect(status.mentions[0]?.acct).toBe("bob");
    expect(status.poll?.options.length).toBe(2);

    const fav = await b.v1.statuses.$select(status.id).favourite();
    expect(fav.favourited).toBe(true);
    expect(fav.favouritesCount).toBe(1);
    const boost = await b.v1.statuses.$select(status.id).reblog();
    expect(boost.reblog?.id).toBe(status.id);
    const bookmarked = await b.v1.statuses.$select(status.id).bookmark();
    expect(bookmarked.bookmarked).toBe(true);
    const pinned = await a.v1.statuses.$select(status.id).pin();
    expect(pinned.pinned).toBe(true);
    const voted = await b.v1.polls.$select(status.poll!.id).votes.create({ choices: [0] });
    expect(voted.ownVotes).toEqual([0]);

    const reply = await b.v1.statuses.create({ status: "@alice replying", inReplyToId: status.id });
    const context = await a.v1.statuses.$select(status.id).context.fetch();
    expect(context.descendants.map((s) => s.id)).toEqual([reply.id]);
    const favouritedBy = await a.v1.statuses.$select(status.id).favouritedBy.list();
    expect(favouritedBy.map((acc) => acc.id)).toEqual([bob.id]);

    const notifications = await a.v1.notifications.list();
    expect(notifications.map((n) => n.type)).toEqual(["mention", "reblog", "favourite", "follow"]);

    for (let i = 0; i < 5; i++) await a.v1.statuses.create({ status: `page ${i}` });
    const seen: string[] = [];
    for await (const page of b.v1.timelines.home.list({ limit: 3 })) {
      seen.push(...page.map((s) => s.id));
      if (seen.length > 20) break;
    }
    expect(seen.length).toBe(new Set(seen).size);
    expect(seen).toContain(status.id);

    const deleted = await a.v1.statuses.$select(status.id).remove();
    expect(deleted.text).toBe("Hello from masto #clients @bob");
    await expect(a.v1.statuses.$select(status.id).fetch()).rejects.toMatchObject({ statusCode: 404, message: "Record not found" });
  });

  test("validation errors arrive as Mastodon's error body", async () => {
    const a = createRestAPIClient({ url: server.base, accessToken: alice.token });
    await expect(a.v1.statuses.create({ status: "" })).rejects.toMatchObject({ statusCode: 422, message: "Validation failed: Text can't be blank" });
  });
});

describe("megalodon", () => {
  test("posts, favourites, boosts, reads the home timeline and the status", async () => {
    const a = generator("mastodon", server.base, alice.token);
    const b = generator("mastodon", server.base, bob.token);
    const posted = await a.postStatus("Hello from megalodon", { visibility: "public", poll: { options: ["a", "b"], expires_in: 600 } });
    const status = posted.data as { id: string; poll: { id: string } };
    expect(status.id).toBeTruthy();
    const fav = await b.favouriteStatus(status.id);
    expect(fav.data.favourited).toBe(true);
    const boost = await b.reblogStatus(status.id);
    expect(boost.data.reblog?.id).toBe(status.id);
    const unboost = await b.unreblogStatus(status.id);
    expect(unboost.data.reblogged).toBe(false);
    const vote = await b.votePoll(status.poll.id, [1]);
    expect((vote.data as { own_votes?: number[] }).own_votes).toEqual([1]);
    const home = await a.getHomeTimeline({ limit: 5 });
    expect(home.data[0]?.id).toBe(status.id);
    const fetched = await b.getStatus(status.id);
    expect(fetched.data.favourites_count).toBe(1);
    const removed = await a.deleteStatus(status.id);
    expect(removed.status).toBe(200);
  });
});
