import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { notifications, quotes, statuses, type AccountRow, type StatusRow } from "../../src/db/schema.ts";
import { ApiError } from "../../src/errors.ts";
import { QUOTED_NOT_FOUND } from "../../src/services/quotes/quotes.ts";
import { startTestServices, type TestServices } from "../support/services.ts";

/**
 * The rules of quote posts where they live (src/services/quotes), over a real database and no
 * server: who may quote what (Mastodon's quote_policy_for_account and StatusPolicy#quote?), the
 * states a quote moves through, and quotes_count and the `quote` notification kept in step.
 */
describe("quote rules", () => {
  let t: TestServices;
  let alice: AccountRow;
  let bob: AccountRow;

  beforeEach(async () => {
    t = await startTestServices();
    alice = await t.local("alice");
    bob = await t.local("bob");
  });
  afterEach(() => t.close());

  const orm = () => t.database.port.orm;
  const quoteOf = async (status: StatusRow) => (await orm().select().from(quotes).where(eq(quotes.statusId, status.id)).limit(1))[0];
  const quotesCount = async (status: StatusRow) => (await orm().select({ n: statuses.quotesCount }).from(statuses).where(eq(statuses.id, status.id)).limit(1))[0]?.n;
  const quoteNotifications = async (account: AccountRow) => (await orm().select().from(notifications).where(eq(notifications.accountId, account.id))).filter((n) => n.type === "quote");
  const refusal = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (e) {
      return e instanceof ApiError ? { status: e.status, error: e.message } : e;
    }
    return null;
  };

  test("each policy decides who is accepted at once; the author always, a direct post or a boost nobody", async () => {
    const carol = await t.local("carol");
    await t.services.follows.follow(carol.id, alice.id, {});
    const open = await t.post(alice, { text: "anyone", quotePolicy: "public" });
    const followers = await t.post(alice, { text: "followers", quotePolicy: "followers" });
    const nobody = await t.post(alice, { text: "nobody", quotePolicy: "nobody" });
    const direct = await t.post(alice, { text: "@bob psst", visibility: "direct" });
    const boost = await t.services.statusCommands.act("reblog", alice.id, open.id);
    const may = async (s: StatusRow, who: AccountRow) => t.services.quotes.policy.mayQuote((await t.services.reader.findRow(s.id))!, who.id);
    expect(await Promise.all([may(open, bob), may(followers, bob), may(followers, carol), may(nobody, bob), may(nobody, alice)])).toEqual(["automatic", "denied", "automatic", "denied", "automatic"]);
    expect(await Promise.all([may(direct, bob), may(direct, alice), may(boost, bob)])).toEqual(["denied", "denied", "denied"]);
  });

  test("a quote of a local status is accepted at once: counted on the quoted status and told to its author", async () => {
    const quoted = await t.post(alice, { text: "quote me" });
    const quoting = await t.post(bob, { text: "look", quotedStatusId: String(quoted.id) });
    expect(await quoteOf(quoting)).toMatchObject({ state: "accepted", quotedStatusId: quoted.id, quotedAccountId: alice.id, accountId: bob.id, activityUri: null });
    expect(await quotesCount(quoted)).toBe(1);
    expect((await quoteNotifications(alice)).map((n) => [n.fromAccountId, n.statusId])).toEqual([[bob.id, quoting.id]]);
    // The text does not link the quoted post: the fallback paragraph does, for clients without quotes.
    expect(quoting.contentHtml).toStartWith(`<p class="quote-inline">RE: <a href="http://rookery.test/@alice/${quoted.id}">`);
  });

  test("refused quotes leave nothing behind: a policy that says no, a block either way, a private post of another", async () => {
    const nobody = await t.post(alice, { text: "mine", quotePolicy: "nobody" });
    const open = await t.post(alice, { text: "open" });
    const secret = await t.post(alice, { text: "followers only", visibility: "private" });
    const before = (await orm().select().from(statuses)).length;
    const notFound = { status: 404, error: QUOTED_NOT_FOUND };
    expect(await refusal(t.post(bob, { text: "no", quotedStatusId: String(nobody.id) }))).toEqual(notFound);
    await t.services.follows.follow(bob.id, alice.id, {});
    expect(await refusal(t.post(bob, { text: "no", quotedStatusId: String(secret.id) }))).toEqual(notFound);
    await t.services.moderation.block(bob.id, alice.id);
    expect(await refusal(t.post(bob, { text: "no", quotedStatusId: String(open.id) }))).toEqual(notFound);
    await t.services.moderation.unblock(bob.id, alice.id);
    await t.services.moderation.block(alice.id, bob.id);
    expect(await refusal(t.post(bob, { text: "no", quotedStatusId: String(open.id) }))).toEqual(notFound);
    expect(await refusal(t.post(bob, { text: "no", quotedStatusId: "12345" }))).toEqual(notFound);
    expect((await orm().select().from(statuses)).length).toBe(before);
    expect(await orm().select().from(quotes)).toEqual([]);
    expect(await quotesCount(open)).toBe(0);
  });

  test("a private post is quoted only privately, and by its author", async () => {
    const secret = await t.post(alice, { text: "followers only", visibility: "private" });
    const quoting = await t.post(alice, { text: "again", visibility: "public", quotedStatusId: String(secret.id) });
    expect(quoting.visibility).toBe("private");
    expect((await quoteOf(quoting))?.state).toBe("accepted");
    // A private post's policy is nobody's, whatever was asked.
    expect(JSON.parse(quoting.quoteApproval!)).toEqual({ automatic: [], manual: [] });
  });

  test("revoking counts back; deleting a quoting post counts back; deleting the quoted post leaves the quote without it", async () => {
    const quoted = await t.post(alice, { text: "quote me" });
    const first = await t.post(bob, { text: "one", quotedStatusId: String(quoted.id) });
    const second = await t.post(bob, { text: "two", quotedStatusId: String(quoted.id) });
    expect(await quotesCount(quoted)).toBe(2);
    expect(await refusal(Promise.resolve().then(() => t.services.quotes.revoke(bob.id, quoted.id, first.id)))).toEqual({ status: 403, error: "This action is not allowed" });
    await t.services.quotes.revoke(alice.id, quoted.id, first.id);
    expect((await quoteOf(first))?.state).toBe("revoked");
    expect(await quotesCount(quoted)).toBe(1);
    // Revoked twice: nothing more moves.
    await t.services.quotes.revoke(alice.id, quoted.id, first.id);
    expect(await quotesCount(quoted)).toBe(1);
    await t.services.statusCommands.delete(bob.id, second.id);
    expect(await quotesCount(quoted)).toBe(0);
    await t.services.statusCommands.delete(alice.id, quoted.id);
    expect(await quoteOf(first)).toMatchObject({ state: "revoked", quotedStatusId: null });
  });

  test("a remote quoted status waits for its server: pending, and the request announced", async () => {
    const carol = await t.remote("carol", "remote.example");
    const remoteStatus = (await t.services.posting.publishRemote({
      accountId: carol.id,
      uri: "https://remote.example/users/carol/statuses/1",
      url: "https://remote.example/@carol/1",
      text: "hello",
      html: "<p>hello</p>",
      spoilerText: "",
      sensitive: false,
      visibility: "public",
      language: "en",
      createdAt: t.clock.now(),
      inReplyToId: null,
      inReplyToUri: null,
      mentions: [],
      tags: [],
      emojis: [],
      media: [],
      poll: null,
    }))!;
    // Its server stated a policy (interactionPolicy.canQuote) that lets anyone quote.
    await orm().update(statuses).set({ quoteApproval: JSON.stringify({ automatic: ["public"], manual: [] }) }).where(eq(statuses.id, remoteStatus.id));
    const requested: unknown[] = [];
    t.services.events.afterCommit("quote.requested", (e) => requested.push(e.quote));
    const quoting = await t.post(alice, { text: "look", quotedStatusId: String(remoteStatus.id) });
    const quote = (await quoteOf(quoting))!;
    expect(quote).toMatchObject({ state: "pending", quotedAccountId: carol.id });
    expect(quote.activityUri).toStartWith("http://rookery.test/users/alice/quote_requests/");
    expect(requested).toEqual([quote]);
    expect(quoting.contentHtml).toStartWith('<p class="quote-inline">RE: <a href="https://remote.example/@carol/1">');
    // Only the quoted account's server may answer.
    expect(await t.services.quotes.acceptRemote(quote.activityUri!, "https://remote.example/stamps/1", alice.id)).toBeNull();
    expect((await t.services.quotes.acceptRemote(quote.activityUri!, "https://remote.example/stamps/1", carol.id))?.state).toBe("accepted");
    expect(await quotesCount(remoteStatus)).toBe(1);
    expect((await t.services.quotes.revokeStamp("https://remote.example/stamps/1", carol.id))?.state).toBe("revoked");
    expect(await quotesCount(remoteStatus)).toBe(0);
  });
});
