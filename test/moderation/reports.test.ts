import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Flag } from "@fedify/fedify/vocab";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/wait.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  server = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  [alice, bob] = (await Promise.all(["alice", "bob"].map((n) => createUser(server, n)))) as [TestUser, TestUser];
  receiver = await startReceiver("127.0.0.9");
});
afterAll(async () => {
  await server?.close();
  receiver?.stop();
});

const reportCount = async () => Number((await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM reports"))!.n);

describe("POST /api/v1/reports", () => {
  test("a report of statuses answers Mastodon's Report entity and is stored unresolved", async () => {
    const one = await postStatus(bob, { status: "spam one" });
    const two = await postStatus(bob, { status: "spam two", visibility: "unlisted" });
    const res = await alice.client.post("/api/v1/reports", {
      json: { account_id: bob.id, status_ids: [one.id, two.id, one.id], comment: "Buy now!", category: "spam", forward: true },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      action_taken: false,
      action_taken_at: null,
      category: "spam",
      comment: "Buy now!",
      // bob is local: there is nowhere to forward to.
      forwarded: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      status_ids: [one.id, two.id],
      rule_ids: null,
      target_account: expect.objectContaining({ id: bob.id, username: "bob" }),
    });
    const stored = (await server.ctx.services.reports.find(Number(res.body.id)))!;
    expect(stored.report).toMatchObject({ accountId: alice.account.id, targetAccountId: bob.account.id, actionTakenAt: null });
  });

  test("form parameters; no category is other; rules make it a violation", async () => {
    const plain = await alice.client.post("/api/v1/reports", { form: { account_id: bob.id } });
    expect(plain.body).toMatchObject({ category: "other", comment: "", status_ids: [], rule_ids: null });
    const rule = await server.ctx.services.instanceInfo.addRule("No spam");
    const violation = await alice.client.post("/api/v1/reports", { form: { account_id: bob.id, category: "other", "rule_ids[]": String(rule.id) } });
    expect(violation.status).toBe(200);
    expect(violation.body).toMatchObject({ category: "violation", rule_ids: [String(rule.id)] });
  });

  test("unknown accounts, statuses not of that account or not visible to the reporter are 404; nothing is stored", async () => {
    const mine = await postStatus(alice, { status: "alice's own" });
    const secret = await postStatus(bob, { status: "followers only", visibility: "private" });
    const before = await reportCount();
    for (const body of [
      { account_id: "999999" },
      { account_id: "nope" },
      {},
      { account_id: bob.id, status_ids: [mine.id] },
      { account_id: bob.id, status_ids: [secret.id] },
      { account_id: bob.id, status_ids: ["999999"] },
    ]) {
      const res = await alice.client.post("/api/v1/reports", { json: body });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    expect(await reportCount()).toBe(before);
  });

  test("a comment past 1000 characters, unknown rules or category are 422; nothing is stored", async () => {
    const before = await reportCount();
    const cases: [Record<string, unknown>, string][] = [
      [{ comment: "x".repeat(1001) }, "Validation failed: Comment is too long (maximum is 1000 characters)"],
      [{ rule_ids: ["424242"] }, "Validation failed: Rule ids does not reference valid rules"],
      [{ category: "violation" }, "Validation failed: Rule ids does not reference valid rules"],
      [{ category: "rude" }, "Validation failed: Category is not included in the list"],
    ];
    for (const [body, error] of cases) {
      const res = await alice.client.post("/api/v1/reports", { json: { account_id: bob.id, ...body } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error });
    }
    expect((await alice.client.post("/api/v1/reports", { json: { account_id: bob.id, comment: "é".repeat(1000) } })).status).toBe(200);
    expect(await reportCount()).toBe(before + 1);
  });

  test("401 without a token, 403 without write:reports", async () => {
    const before = await reportCount();
    const anon = await new Client(server.base).post("/api/v1/reports", { json: { account_id: bob.id } });
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ error: "The access token is invalid" });
    const reader = await createUser(server, "reader", { scopes: "read write:statuses" });
    const res = await reader.client.post("/api/v1/reports", { json: { account_id: bob.id } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "This action is outside the authorized scopes" });
    expect(await reportCount()).toBe(before);
  });

  test("a forwarded report of a remote account goes to its server as a Flag from the instance actor", async () => {
    const carol = (await server.federation!.resolveActor(receiver.actor))!;
    const kept = await alice.client.post("/api/v1/reports", { json: { account_id: String(carol.id), comment: "not forwarded" } });
    expect(kept.body.forwarded).toBe(false);
    const res = await alice.client.post("/api/v1/reports", { json: { account_id: String(carol.id), comment: "Harassment", forward: "true" } });
    expect(res.status).toBe(200);
    expect(res.body.forwarded).toBe(true);
    await server.federation!.idle();
    const flag = await eventually(() => receiver.received.find((x): x is Flag => x instanceof Flag), "carol's server received the Flag");
    expect(flag.actorId?.href).toBe(`${server.base}/users/${new URL(server.base).hostname}`);
    expect(flag.objectIds.map((u) => u.href)).toEqual([receiver.actor]);
    expect(flag.content?.toString()).toBe("Harassment");
    expect(flag.id?.href).toBe((await server.ctx.services.reports.find(Number(res.body.id)))!.report.uri);
    expect(receiver.received.filter((x) => x instanceof Flag)).toHaveLength(1);
  });
});
