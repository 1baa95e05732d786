import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AccountRow, StatusRow } from "../../src/db/schema.ts";
import { startTestServices, type TestServices } from "../support/services.ts";

// Delivery into home feeds and lists leaves out what comes from a domain the owner blocks: a
// remote author's status, and a boost of one by an account the owner follows. The domain checks
// are made only for remote authors (a local one has no domain to block), so both kinds are
// delivered here next to their local and other-domain counterparts.
let t: TestServices;
let viewer: AccountRow;
let friend: AccountRow;
let blockedAuthor: AccountRow;
let otherAuthor: AccountRow;
/** Followed by nobody here: their statuses reach the viewer only as the friend's boosts. */
let blockedStranger: AccountRow;
let otherStranger: AccountRow;
let listId: number;

const remoteStatus = async (author: AccountRow, n: number): Promise<StatusRow> =>
  (await t.services.posting.publishRemote({
    accountId: author.id,
    uri: `https://${author.domain}/users/${author.username}/statuses/${n}`,
    url: null,
    html: `<p>remote ${n}</p>`,
    text: `remote ${n}`,
    spoilerText: "",
    sensitive: false,
    tags: [],
    visibility: "public",
    language: "en",
    createdAt: t.clock.now(),
    inReplyToId: null,
    inReplyToUri: null,
    mentions: [],
    media: [],
    emojis: [],
    poll: null,
  }))!;

const home = (account: AccountRow) =>
  t.database.sqlite.query<{ id: number }, [number]>("SELECT status_id AS id FROM home_feed WHERE account_id = ? ORDER BY status_id").all(account.id).map((r) => r.id);
const list = (id: number) => t.database.sqlite.query<{ id: number }, [number]>("SELECT status_id AS id FROM list_feed WHERE list_id = ? ORDER BY status_id").all(id).map((r) => r.id);

beforeAll(async () => {
  t = await startTestServices();
  viewer = await t.local("dbd_viewer");
  friend = await t.local("dbd_friend");
  blockedAuthor = await t.remote("shunned", "blocked.example");
  otherAuthor = await t.remote("welcome", "other.example");
  blockedStranger = await t.remote("shunned_too", "blocked.example");
  otherStranger = await t.remote("welcome_too", "other.example");
  await t.services.domainBlocks.block(viewer.id, "blocked.example");
  await t.services.follows.follow(viewer.id, friend.id, {});
  for (const remote of [blockedAuthor, otherAuthor]) {
    await t.services.follows.follow(viewer.id, remote.id, {});
    await t.services.follows.authorizeRequest(remote.id, viewer.id);
  }
  listId = (await t.services.lists.create(viewer.id, { title: "friends" })).id;
  await t.services.lists.addMembers(viewer.id, listId, [friend.id, blockedAuthor.id, otherAuthor.id]);
});
afterAll(() => t.close());

describe("delivery and the owner's domain blocks", () => {
  test("a status by an account on a blocked domain, and a boost of one, reach neither the home feed nor a list; the same from elsewhere and from local accounts do", async () => {
    const shunned = await remoteStatus(blockedAuthor, 1);
    const welcome = await remoteStatus(otherAuthor, 2);
    const local = await t.post(friend, { text: "a local post" });
    const boostOfShunned = await t.services.writes.run(async () => t.services.statusActions.reblog(friend.id, (await remoteStatus(blockedStranger, 3)).id, undefined));
    const boostOfWelcome = await t.services.writes.run(async () => t.services.statusActions.reblog(friend.id, (await remoteStatus(otherStranger, 4)).id, undefined));

    const delivered = [welcome.id, local.id, boostOfWelcome.id].sort();
    expect(home(viewer)).toEqual(delivered);
    expect(list(listId)).toEqual(delivered);
    for (const kept of [shunned.id, boostOfShunned.id]) {
      expect(home(viewer)).not.toContain(kept);
      expect(list(listId)).not.toContain(kept);
    }
  });
});
