import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AccountRow, StatusRow } from "../../src/db/schema.ts";
import { ApiError } from "../../src/errors.ts";
import { VISIBILITIES, type Visibility } from "../../src/services/statuses/visibility.ts";
import { startTestServices, type TestServices } from "../support/services.ts";

/**
 * Who may see a status, asked of the services as the routes ask them (StatusReader.visibleRow
 * for one status, StatusReader.visible for a page of them), over a real database and without
 * a server: the rule of src/services/statuses/visibility.ts where it lives. Mastodon's
 * StatusPolicy#show? is the reference.
 */

type Viewer =
  | "the author"
  | "a follower"
  | "a mentioned account"
  | "a follower, mentioned"
  | "a stranger"
  | "anonymous"
  | "blocked by the author, mentioned"
  | "blocking the author"
  | "a follower muting the author"
  | "remote, on a domain the author blocks"
  | "remote, on another domain";

const ALL = { public: true, unlisted: true, private: true, direct: true };
const PUBLICLY = { public: true, unlisted: true, private: false, direct: false };
const FOLLOWERS = { public: true, unlisted: true, private: true, direct: false };
const NOTHING = { public: false, unlisted: false, private: false, direct: false };

const EXPECTED: Record<Viewer, Record<Visibility, boolean>> = {
  "the author": ALL,
  "a follower": FOLLOWERS,
  "a mentioned account": ALL,
  "a follower, mentioned": ALL,
  "a stranger": PUBLICLY,
  anonymous: PUBLICLY,
  // The author's block hides everything, even what mentions the blocked account.
  "blocked by the author, mentioned": NOTHING,
  // Blocking ended the follow; hiding the author from the blocker's timelines is the timelines' business.
  "blocking the author": PUBLICLY,
  // A mute hides from timelines and notifications, never from a look at the status itself.
  "a follower muting the author": FOLLOWERS,
  // Mastodon's author_blocking_domain?: as if blocked; any other domain sees what a stranger sees.
  "remote, on a domain the author blocks": NOTHING,
  "remote, on another domain": PUBLICLY,
};

describe("who may see a status", () => {
  let t: TestServices;
  let author: AccountRow;
  const viewers = new Map<Viewer, AccountRow | null>();
  const posted = new Map<Visibility, StatusRow>();

  /** Whether `viewer` gets the status; a status it may not see is Mastodon's 404, as if it did not exist. */
  const sees = async (status: StatusRow, viewer: AccountRow | null): Promise<boolean> => {
    try {
      return (await t.services.reader.visibleRow(status.id, viewer?.id ?? null)).id === status.id;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      expect([e.status, e.message]).toEqual([404, "Record not found"]);
      return false;
    }
  };
  const matrix = async () => {
    const seen: Record<string, Record<string, boolean>> = {};
    for (const [name, viewer] of viewers) seen[name] = Object.fromEntries(await Promise.all(VISIBILITIES.map(async (v) => [v, await sees(posted.get(v)!, viewer)])));
    return seen;
  };

  beforeAll(async () => {
    t = await startTestServices();
    const { follows, moderation, domainBlocks } = t.services;
    author = await t.local("author");
    const [follower, mentioned, both, stranger, blocked, blocking, muting] = await Promise.all(
      ["follower", "mentioned", "both", "stranger", "blocked", "blocking", "muting"].map((name) => t.local(name)),
    );
    for (const fan of [follower!, both!, blocking!, muting!]) await follows.follow(fan.id, author.id, {});
    for (const visibility of VISIBILITIES) posted.set(visibility, await t.post(author, { text: `@mentioned @both @blocked ${visibility}`, visibility }));
    await moderation.block(author.id, blocked!.id);
    await moderation.block(blocking!.id, author.id);
    await moderation.mute(muting!.id, author.id, { notifications: true });
    await domainBlocks.block(author.id, "shunned.example");
    const entries: [Viewer, AccountRow | null][] = [
      ["the author", author],
      ["a follower", follower!],
      ["a mentioned account", mentioned!],
      ["a follower, mentioned", both!],
      ["a stranger", stranger!],
      ["anonymous", null],
      ["blocked by the author, mentioned", blocked!],
      ["blocking the author", blocking!],
      ["a follower muting the author", muting!],
      // The port is no part of the domain a block names.
      ["remote, on a domain the author blocks", await t.remote("far", "shunned.example:8443")],
      ["remote, on another domain", await t.remote("far", "elsewhere.example")],
    ];
    for (const [name, viewer] of entries) viewers.set(name, viewer);
  });
  afterAll(() => t?.close());

  test("each visibility, for each relationship to the author, as Mastodon decides", async () => {
    expect(await matrix()).toEqual(EXPECTED);
  });

  test("a page of statuses is filtered by the same rule, its order kept", async () => {
    const all = VISIBILITIES.map((v) => posted.get(v)!);
    for (const [name, viewer] of viewers) {
      const kept = (await t.services.reader.visible(all, viewer?.id ?? null)).map((s) => s.visibility);
      expect([name, kept]).toEqual([name, VISIBILITIES.filter((v) => EXPECTED[name][v])]);
    }
  });

  test("a boost is seen only by whoever may see its original", async () => {
    const booster = viewers.get("a stranger")!;
    const boost = await t.services.statusCommands.act("reblog", booster.id, posted.get("public")!.id);
    expect(boost.reblogOfId).toBe(posted.get("public")!.id);
    expect(await sees(boost, viewers.get("a follower")!)).toBe(true);
    expect(await sees(boost, null)).toBe(true);
    expect(await sees(boost, viewers.get("blocked by the author, mentioned")!)).toBe(false);
    expect(await sees(boost, viewers.get("remote, on a domain the author blocks")!)).toBe(false);
    expect(await t.services.reader.visible([boost], viewers.get("blocked by the author, mentioned")!.id)).toEqual([]);
  });

  test("a change of relationship changes what is seen at once", async () => {
    const { follows, moderation, domainBlocks } = t.services;
    const newcomer = await t.local("newcomer");
    const [priv, pub] = [posted.get("private")!, posted.get("public")!];
    expect([await sees(pub, newcomer), await sees(priv, newcomer)]).toEqual([true, false]);
    await follows.follow(newcomer.id, author.id, {});
    expect([await sees(pub, newcomer), await sees(priv, newcomer)]).toEqual([true, true]);
    await follows.unfollow(newcomer.id, author.id);
    expect([await sees(pub, newcomer), await sees(priv, newcomer)]).toEqual([true, false]);

    // A block ends the follow: once lifted, the public status is back, the private one is not.
    await follows.follow(newcomer.id, author.id, {});
    await moderation.block(author.id, newcomer.id);
    expect([await sees(pub, newcomer), await sees(priv, newcomer)]).toEqual([false, false]);
    await moderation.unblock(author.id, newcomer.id);
    expect([await sees(pub, newcomer), await sees(priv, newcomer)]).toEqual([true, false]);

    const shunned = viewers.get("remote, on a domain the author blocks")!;
    await domainBlocks.unblock(author.id, "shunned.example");
    expect(await sees(pub, shunned)).toBe(true);
    await domainBlocks.block(author.id, "shunned.example");
    expect(await sees(pub, shunned)).toBe(false);
  });
});
