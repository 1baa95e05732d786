import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { onPostgres } from "../support/test-database.ts";
import { StatusPolicy, VISIBILITIES, visibleToSql, type Visibility } from "../../src/services/statuses/visibility.ts";
import { portable } from "../../src/services/statuses/home-feed.ts";
import { Conditions } from "../../src/services/statuses/timeline-sql.ts";
import { Person } from "@fedify/fedify/vocab";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

type Relationship =
  | "author"
  | "follower"
  | "mentioned"
  | "follower, mentioned"
  | "silently mentioned"
  | "stranger"
  | "anonymous"
  | "blocked by the author"
  | "blocking the author"
  | "remote, on a domain the author blocks"
  | "remote, on another domain";

/** Who sees a status of each visibility, as Mastodon's StatusPolicy#show? decides. */
const EXPECTED: Record<Relationship, Record<Visibility, boolean>> = {
  author: { public: true, unlisted: true, private: true, direct: true },
  follower: { public: true, unlisted: true, private: true, direct: false },
  mentioned: { public: true, unlisted: true, private: true, direct: true },
  "follower, mentioned": { public: true, unlisted: true, private: true, direct: true },
  // Mastodon's silent mention (Quote#ensure_quoted_access: the quoted author of a private
  // quote): a row of the mentions table that the status's own mentions do not list.
  "silently mentioned": { public: true, unlisted: true, private: true, direct: true },
  stranger: { public: true, unlisted: true, private: false, direct: false },
  anonymous: { public: true, unlisted: true, private: false, direct: false },
  // Mentioned, then blocked: the author's block hides even what mentions the viewer.
  "blocked by the author": { public: false, unlisted: false, private: false, direct: false },
  // A follower who then blocked the author (the block ended the follow): hiding the author
  // from the blocker's timelines is the timelines' business, not the policy's.
  "blocking the author": { public: true, unlisted: true, private: false, direct: false },
  // Mastodon's author_blocking_domain?: a remote account on a domain the author blocks sees
  // nothing (as the blocked above); on any other domain, what a stranger sees.
  "remote, on a domain the author blocks": { public: false, unlisted: false, private: false, direct: false },
  "remote, on another domain": { public: true, unlisted: true, private: false, direct: false },
};

/**
 * The visibility rule exists as StatusPolicy (JS, for rows in hand) and as visibleToSql (for
 * queries that filter before they page). Both run here against a real database, for every
 * visibility and relationship, and must agree with each other and with Mastodon.
 */
describe("StatusPolicy and visibleToSql", () => {
  let server: TestServer;
  const viewers = new Map<Relationship, number | null>();
  const posted = new Map<Visibility, number>();

  beforeAll(async () => {
    server = await startTestServer();
    const names = ["vis_author", "vis_follower", "vis_mentioned", "vis_both", "vis_stranger", "vis_blocked", "vis_blocking", "vis_silent"];
    const [author, follower, mentioned, both, stranger, blocked, blocking, silent] = (await Promise.all(names.map((n) => createUser(server, n)))) as TestUser[];
    for (const fan of [follower!, both!, blocking!]) expect((await fan.client.post(`/api/v1/accounts/${author!.id}/follow`)).status).toBe(200);
    for (const visibility of VISIBILITIES) {
      const status = await postStatus(author!, { status: `@vis_mentioned @vis_both @vis_blocked ${visibility}`, visibility });
      posted.set(visibility, Number(status.id));
      await server.database.port.run("INSERT INTO mentions (status_id, account_id) VALUES (?, ?)", [Number(status.id), silent!.account.id]);
    }
    expect((await author!.client.post(`/api/v1/accounts/${blocked!.id}/block`)).status).toBe(200);
    expect((await blocking!.client.post(`/api/v1/accounts/${author!.id}/block`)).status).toBe(200);
    const remote = async (host: string) =>
      (await server.federation!.storeActor(new Person({ id: new URL(`https://${host}/users/vis_remote`), preferredUsername: "vis_remote", inbox: new URL(`https://${host}/inbox`) })))!;
    const [shunned, elsewhere] = [await remote("shunned.example:8443"), await remote("elsewhere.example")];
    expect((await author!.client.post("/api/v1/domain_blocks", { json: { domain: "shunned.example" } })).status).toBe(200);
    const ids: [Relationship, TestUser | null][] = [
      ["author", author!],
      ["follower", follower!],
      ["mentioned", mentioned!],
      ["follower, mentioned", both!],
      ["silently mentioned", silent!],
      ["stranger", stranger!],
      ["anonymous", null],
      ["blocked by the author", blocked!],
      ["blocking the author", blocking!],
    ];
    for (const [relationship, user] of ids) viewers.set(relationship, user ? user.account.id : null);
    viewers.set("remote, on a domain the author blocks", shunned.id);
    viewers.set("remote, on another domain", elsewhere.id);
  });
  afterAll(() => server.close());

  test("agree on every visibility x relationship, and with Mastodon", async () => {
    const { follows, moderation, reader } = server.ctx.services;
    const port = server.database.port;
    const policy = new StatusPolicy(follows, moderation, port);
    const results: Record<string, Record<string, { js: boolean; sql: boolean; bound: boolean }>> = {};
    const expected: Record<string, Record<string, { js: boolean; sql: boolean; bound: boolean }>> = {};
    for (const [relationship, viewer] of viewers) {
      results[relationship] = {};
      expected[relationship] = {};
      for (const [visibility, id] of posted) {
        const row = (await reader.findRow(id))!;
        const js = await policy.canSee(row, viewer);
        // The viewer's id written into the text (a number): the condition names it more than once.
        const text = await port.get<{ ok: number }>(`SELECT CASE WHEN ${portable(port.dialect, visibleToSql("s", viewer === null ? null : String(viewer)))} THEN 1 ELSE 0 END AS ok FROM statuses s WHERE s.id = ?`, [id]);
        // As the timelines bind it (the viewer as a parameter, as often as the text names them).
        const where = new Conditions(port.dialect).add("statuses.id = ?", id).visibleTo("statuses", viewer);
        const bound = await port.get(`SELECT id FROM statuses WHERE ${where.where}`, where.params);
        results[relationship]![visibility] = { js, sql: text?.ok === 1, bound: bound !== undefined };
        const want = EXPECTED[relationship][visibility];
        expected[relationship]![visibility] = { js: want, sql: want, bound: want };
      }
    }
    expect(results).toEqual(expected);
  });

  // SQLite's query plans (PostgreSQL's planner chooses by its statistics).
  test.skipIf(onPostgres)("as a query condition it keeps the query on its own index: lookups per row, no scan, no sort", () => {
    const plan = (query: string) =>
      server.database.sqlite!
        .query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${query}`)
        .all()
        .map((r) => r.detail);
    // An account's timeline, as another signed-in account reads it.
    const account = plan(`SELECT id FROM statuses s WHERE s.account_id = 1 AND ${visibleToSql("s", "2")} ORDER BY s.id DESC LIMIT 20`);
    expect(account[0]).toStartWith("SEARCH s USING INDEX statuses_account");
    expect(account.filter((d) => d.startsWith("SCAN") || d.includes("TEMP B-TREE"))).toEqual([]);
    // Per row, covering index lookups and the author's row by its primary key (is it suspended?);
    // the viewer's own domain (for the author's domain blocks) is read once, by its primary key,
    // in a scalar subquery that does not depend on the row.
    const byKey = new Set(["SEARCH va USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH vs USING INTEGER PRIMARY KEY (rowid=?)"]);
    expect(account.filter((d) => d.startsWith("SEARCH v") && !d.includes("COVERING INDEX") && !byKey.has(d))).toEqual([]);
    expect(account).toContain("SCALAR SUBQUERY 3");
  });
});
