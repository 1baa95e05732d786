import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import type { TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, createStaff, NOT_ALLOWED, remoteAccount } from "../support/staff.ts";

let server: TestServer;
let admin: TestUser;
let moderator: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  admin = await createStaff(server, "adam", "admin");
  moderator = await createStaff(server, "mona", "moderator");
});
afterAll(() => server?.close());

const blockCount = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM domain_blocks"))!.n;

describe("/api/v1/admin/domain_blocks", () => {
  test("a block suspends the domain (its accounts here go) and answers Admin::DomainBlock; listed, shown, removed", async () => {
    const spammer = await remoteAccount(server, "spam", "spam.example");
    const before = (await auditLines(server)).length;
    const res = await admin.client.post("/api/v1/admin/domain_blocks", { json: { domain: "Spam.Example", severity: "suspend" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      domain: "spam.example",
      digest: createHash("sha256").update("spam.example").digest("hex"),
      created_at: expect.any(String),
      severity: "suspend",
      reject_media: false,
      reject_reports: false,
      private_comment: null,
      public_comment: null,
      obfuscate: false,
    });
    expect(await server.ctx.services.accounts.get(spammer.id)).toBeUndefined();
    expect(server.ctx.services.federationDomains.refuses("spam.example")).toBe(true);
    const listed = await admin.client.get("/api/v1/admin/domain_blocks");
    expect(listed.body.map((b: { domain: string }) => b.domain)).toEqual(["spam.example"]);
    const shown = await admin.client.get(`/api/v1/admin/domain_blocks/${res.body.id}`);
    expect(shown.body).toEqual(res.body);
    const removed = await admin.client.delete(`/api/v1/admin/domain_blocks/${res.body.id}`);
    expect([removed.status, removed.body]).toEqual([200, {}]);
    expect(server.ctx.services.federationDomains.refuses("spam.example")).toBe(false);
    expect((await auditSince(server, before))).toEqual([
      ["create", "DomainBlock", res.body.id, admin.account.id],
      ["destroy", "DomainBlock", res.body.id, admin.account.id],
    ]);
  });

  test("a domain already covered (itself or a parent) is 422 naming the block in force; a bad domain or severity is 422; nothing is added", async () => {
    const first = await admin.client.post("/api/v1/admin/domain_blocks", { form: { domain: "bad.example" } });
    const count = await blockCount();
    const before = (await auditLines(server)).length;
    for (const domain of ["bad.example", "sub.bad.example"]) {
      const res = await admin.client.post("/api/v1/admin/domain_blocks", { json: { domain } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "You have already imposed stricter limits on bad.example.", existing_domain_block: first.body });
    }
    const blank = await admin.client.post("/api/v1/admin/domain_blocks", { json: { domain: "" } });
    expect([blank.status, blank.body]).toEqual([422, { error: "Validation failed: Domain can't be blank" }]);
    const silence = await admin.client.post("/api/v1/admin/domain_blocks", { json: { domain: "loud.example", severity: "silence" } });
    expect(silence.status).toBe(422);
    expect(silence.body.error).toStartWith("Validation failed: Severity silence is not supported here");
    expect(await blockCount()).toBe(count);
    expect((await auditSince(server, before))).toEqual([]);
    const update = await admin.client.put(`/api/v1/admin/domain_blocks/${first.body.id}`, { json: { severity: "noop" } });
    expect(update.status).toBe(422);
  });

  test("moderators do not manage federation: 403, nothing changes; an unknown block is 404", async () => {
    const count = await blockCount();
    const before = (await auditLines(server)).length;
    const create = await moderator.client.post("/api/v1/admin/domain_blocks", { json: { domain: "mod.example" } });
    expect([create.status, create.body]).toEqual([403, NOT_ALLOWED]);
    const list = await moderator.client.get("/api/v1/admin/domain_blocks");
    expect([list.status, list.body]).toEqual([403, NOT_ALLOWED]);
    const allow = await moderator.client.post("/api/v1/admin/domain_allows", { json: { domain: "mod.example" } });
    expect([allow.status, allow.body]).toEqual([403, NOT_ALLOWED]);
    expect(await blockCount()).toBe(count);
    expect((await auditSince(server, before))).toEqual([]);
    const missing = await admin.client.delete("/api/v1/admin/domain_blocks/999999999");
    expect([missing.status, missing.body]).toEqual([404, { error: "Record not found" }]);
  });
});

describe("/api/v1/admin/domain_allows", () => {
  test("allowing is idempotent (logged once); listed, shown and removed as Admin::DomainAllow", async () => {
    const before = (await auditLines(server)).length;
    const res = await admin.client.post("/api/v1/admin/domain_allows", { json: { domain: "friends.example" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.any(String), domain: "friends.example", created_at: expect.any(String) });
    const again = await admin.client.post("/api/v1/admin/domain_allows", { json: { domain: "friends.example" } });
    expect(again.body).toEqual(res.body);
    expect((await admin.client.get("/api/v1/admin/domain_allows")).body).toEqual([res.body]);
    expect((await admin.client.get(`/api/v1/admin/domain_allows/${res.body.id}`)).body).toEqual(res.body);
    const removed = await admin.client.delete(`/api/v1/admin/domain_allows/${res.body.id}`);
    expect([removed.status, removed.body]).toEqual([200, {}]);
    expect((await admin.client.get("/api/v1/admin/domain_allows")).body).toEqual([]);
    expect((await auditSince(server, before))).toEqual([
      ["create", "DomainAllow", res.body.id, admin.account.id],
      ["destroy", "DomainAllow", res.body.id, admin.account.id],
    ]);
  });
});
