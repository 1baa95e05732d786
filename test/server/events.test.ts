import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/db/connection.ts";
import { createUser, postStatus } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

/**
 * The services' events through real requests: transports (afterCommit listeners) hear of a
 * write only once another connection can read it, and never of a write that rolled back.
 */
describe("events of real writes", () => {
  let server: TestServer;
  /** A connection of the test's own: SQLite's file read-only, or a client of the PostgreSQL database. */
  let other: { sees(text: string, params: unknown[]): Promise<boolean>; close(): Promise<void> | void };
  const heard: { type: string; committed: Promise<boolean> }[] = [];
  /** What was heard, each with whether the other connection saw its row when told (asked then, on SQLite at once). */
  const told = () => Promise.all(heard.map(async (h) => ({ type: h.type, committed: await h.committed })));

  beforeAll(async () => {
    server = await startTestServer();
    const url = server.env.DATABASE_URL;
    if (url) {
      const pg = new SQL(url, { max: 1 });
      other = {
        sees: async (text, params) => {
          let n = 0;
          return (await pg.unsafe(text.replace(/\?/g, () => `$${++n}`), params)).length > 0;
        },
        close: () => pg.close(),
      };
    } else {
      const sqlite = new Database(join(server.dataDir, DATABASE_FILE), { readonly: true });
      other = { sees: (text, params) => Promise.resolve(sqlite.query(text).get(...(params as number[])) !== null), close: () => sqlite.close() };
    }
    const { events } = server.ctx.services;
    const exists = (table: string, id: number) => other.sees(`SELECT 1 FROM ${table} WHERE id = ?`, [id]);
    events.afterCommit("follow.created", (e) =>
      heard.push({ type: e.type, committed: other.sees("SELECT 1 FROM follows WHERE account_id = ? AND target_account_id = ?", [e.accountId, e.targetAccountId]) }),
    );
    events.afterCommit("notification.created", (e) => heard.push({ type: e.type, committed: exists("notifications", e.notification.id) }));
    events.afterCommit("status.created", (e) => heard.push({ type: e.type, committed: exists("statuses", e.status.id) }));
  });
  afterAll(async () => {
    await other?.close();
    await server.close();
  });

  test("a follow and a post over HTTP: each event is heard once its rows are committed", async () => {
    const [ann, ben] = await Promise.all([createUser(server, "ev_ann"), createUser(server, "ev_ben")]);
    heard.length = 0;
    expect((await ann!.client.post(`/api/v1/accounts/${ben!.id}/follow`)).status).toBe(200);
    await postStatus(ann!, { status: `hello @${ben!.account.username}` });
    expect(await told()).toEqual([
      { type: "follow.created", committed: true },
      // The follow notification is written by a `within` listener in the same transaction.
      { type: "notification.created", committed: true },
      // So is the mention's: transports hear of the post first, then of its notification.
      { type: "status.created", committed: true },
      { type: "notification.created", committed: true },
    ]);
  });

  test("a write that rolls back after its event: its consequences are undone and no transport hears of it", async () => {
    const [cat, dan] = await Promise.all([createUser(server, "ev_cat"), createUser(server, "ev_dan")]);
    const { writes, follows } = server.ctx.services;
    heard.length = 0;
    const failed = writes.run(async () => {
      await follows.follow(cat!.account.id, dan!.account.id, {});
      throw new Error("refused after the follow");
    });
    await expect(failed).rejects.toThrow("refused after the follow");
    // A write after it proves the group commit is done and transports are being told.
    await postStatus(cat!, { status: "after the rollback" });
    expect(await told()).toEqual([{ type: "status.created", committed: true }]);
    const notes = await dan!.client.get("/api/v1/notifications");
    expect(notes.body).toEqual([]);
    const rel = await cat!.client.get("/api/v1/accounts/relationships", { query: { "id[]": dan!.id } });
    expect(rel.body[0].following).toBe(false);
  });

  test("poll.opened: a poll that an edit sets again ends at its new deadline (its end is on the wheel)", async () => {
    const [eve, fay] = await Promise.all([createUser(server, "ev_eve"), createUser(server, "ev_fay")]);
    const status = await postStatus(eve!, { status: "pick", poll: { options: ["a", "b"], expires_in: 3600 } });
    const edited = await eve!.client.put(`/api/v1/statuses/${status.id}`, { json: { status: "pick again", poll: { options: ["c", "d"], expires_in: 300 } } });
    expect(edited.status).toBe(200);
    expect((await fay!.client.post(`/api/v1/polls/${edited.body.poll.id}/votes`, { json: { choices: ["1"] } })).status).toBe(200);
    const pollNotes = async () => ((await fay!.client.get("/api/v1/notifications", { query: { "types[]": "poll" } })).body as { status: { id: string } }[]).map((n) => n.status.id);
    server.clock.advance(299 * 1000);
    expect(await pollNotes()).toEqual([]);
    server.clock.advance(2 * 1000);
    // The wheel's handler runs once the clock moved; on PostgreSQL it first claims the timer (a round trip), so it is waited for.
    await eventually(async () => (await pollNotes()).length > 0, "the poll's end notified");
    expect(await pollNotes()).toEqual([status.id]);
  });
});
