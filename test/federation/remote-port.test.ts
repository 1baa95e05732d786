import { afterEach, describe, expect, test } from "bun:test";
import type { AccountRow } from "../../src/db/schema.ts";
import { EventBus, type DomainEvent } from "../../src/infra/events.ts";
import { RemoteAccounts } from "../../src/services/remote/accounts.ts";
import { FederationDomains } from "../../src/services/remote/domains.ts";
import { GoneAccounts } from "../../src/services/remote/gone-accounts.ts";
import { remoteActorInput } from "../support/remote-actor-input.ts";
import { FederationActors } from "../../src/services/remote/local-actors.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * The remote family's core on the database port (issue 31): remote accounts (stored, updated,
 * read by IRI and handle), the local actors' collections and checks, domain rules, and a gone
 * account's removal, the same services on SQLite and on PostgreSQL. What they hand to services
 * not yet converted (statuses' removal, follows) runs on SQLite only: the accounts removed here
 * have no statuses or follows on PostgreSQL. Their behaviour over HTTP and federation is tested
 * in the other files of this folder.
 */

afterEach(closePortArms);

const PUBLIC_URL = "http://rookery.test";

const actor = remoteActorInput;

async function servicesOn({ t, port }: PortArm) {
  const gone = new GoneAccounts(port, t.services.follows, t.services.removal);
  const told: DomainEvent[] = [];
  const events = new EventBus(port);
  events.within("account.updated", (e) => void told.push(e));
  events.afterCommit("federation.rules_changed", (e) => void told.push(e));
  const domains = new FederationDomains(port, t.ids, t.clock, events, false, new URL(PUBLIC_URL).hostname, gone);
  const remote = new RemoteAccounts(port, t.ids, t.clock, events, domains, null, gone);
  await domains.load();
  return { gone, domains, remote, told, events, actors: new FederationActors(port) };
}

async function count(arm: PortArm, table: string): Promise<number> {
  return Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);
}

/** A status of `author` straight into the port's database (posting is not on the port yet). */
async function aStatus(arm: PortArm, author: AccountRow, fields: { visibility?: string; uri?: string | null; inReplyToId?: number | null; conversationId?: number } = {}) {
  const id = arm.t.ids.next();
  await arm.port.run("INSERT INTO statuses (id, account_id, uri, visibility, in_reply_to_id, conversation_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", [
    id,
    author.id,
    fields.uri ?? null,
    fields.visibility ?? "public",
    fields.inReplyToId ?? null,
    fields.conversationId ?? id,
    arm.t.clock.now(),
  ]);
  return id;
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the remote family's core on ${arm.name}`, () => {
    test("remote accounts: an actor stored, found by IRI and handle, updated in place (told), and what is not a usable actor refused with nothing stored", async () => {
      const a = await arm.open();
      const { remote, told } = await servicesOn(a);
      const before = await count(a, "accounts");
      const stored = await remote.upsert(actor("https://m.example/users/zoe"));
      expect(stored).toMatchObject({ username: "zoe", domain: "m.example", displayName: "Zoe", noteHtml: "<p>hi</p>", locked: false, discoverable: true, inboxUrl: "https://m.example/users/zoe/inbox" });
      expect(told).toEqual([]);
      expect(await remote.byUri("https://m.example/users/zoe")).toEqual(stored!);
      expect(await remote.lookup("ZOE", "M.Example.")).toEqual(stored!);
      expect(await remote.byUri("https://m.example/users/nobody")).toBeUndefined();
      expect(await remote.lookup("nobody", "m.example")).toBeNull();

      a.t.clock.advance(1000);
      const updated = await remote.upsert(actor("https://m.example/users/zoe", { displayName: "Zoe Two", locked: true }));
      expect(updated).toMatchObject({ id: stored!.id, displayName: "Zoe Two", locked: true, fetchedAt: a.t.clock.now() });
      expect(told).toEqual([{ type: "account.updated", accountId: stored!.id }]);

      // Not an http(s) IRI, no inbox, a name Mastodon would not take: refused, nothing stored.
      expect(await remote.upsert(actor("ftp://m.example/users/eve"))).toBeNull();
      expect(await remote.upsert(actor("https://m.example/users/eve", { inboxUrl: null }))).toBeNull();
      expect(await remote.upsert(actor("https://m.example/users/eve", { username: "e\u200bve" }))).toBeNull();
      expect(await count(a, "accounts")).toBe(before + 1);
    });

    test("remote accounts: a stored status is found by its IRI with its author's", async () => {
      const a = await arm.open();
      const { remote } = await servicesOn(a);
      const zoe = (await remote.upsert(actor("https://m.example/users/zoe")))!;
      const id = await aStatus(a, zoe, { uri: "https://m.example/users/zoe/statuses/1" });
      expect(await remote.statusByUri("https://m.example/users/zoe/statuses/1")).toEqual({ id, authorUri: zoe.uri });
      expect(await remote.statusByUri("https://m.example/users/zoe/statuses/2")).toBeUndefined();
    });

    test("local actors: found by name, their outbox and replies paged, followers, pins and blocks read", async () => {
      const a = await arm.open();
      const { actors } = await servicesOn(a);
      const ann = await a.mirror(await a.t.local("ann"));
      const zoe = await a.mirror(await a.t.remote("zoe", "m.example"));
      expect((await actors.localAccount("ANN"))?.id).toBe(ann.id);
      expect(await actors.localAccount("zoe")).toBeUndefined();
      expect(await actors.deletedLocally(ann)).toBe(false);

      const published = [await aStatus(a, ann), await aStatus(a, ann, { visibility: "unlisted" }), await aStatus(a, ann)];
      const hidden = await aStatus(a, ann, { visibility: "private" });
      const first = await actors.outbox(ann.id, null, 2);
      expect(first.items.map((s) => s.id)).toEqual([published[2]!, published[1]!]);
      const second = await actors.outbox(ann.id, first.next, 2);
      expect([second.items.map((s) => s.id), second.next]).toEqual([[published[0]!], null]);
      expect(await actors.outboxCount(ann.id)).toBe(3);
      expect(await actors.publishedStatus(ann.id, hidden)).toBeUndefined();
      expect((await actors.ownStatus(ann.id, hidden))?.visibility).toBe("private");

      const reply = await aStatus(a, zoe, { uri: "https://m.example/users/zoe/statuses/9", inReplyToId: published[0]!, conversationId: published[0]! });
      expect((await actors.replies(published[0]!, null, 10)).items.map((s) => s.id)).toEqual([reply]);
      expect((await actors.conversation(published[0]!, null, 10)).items.map((s) => s.id)).toEqual([published[0]!, reply]);
      expect((await actors.replies(published[0]!, String(reply), 10)).items).toEqual([]);

      expect(await actors.hasLocalFollowers(zoe.id)).toBe(false);
      expect(await actors.remoteFollowers(ann.id)).toEqual([]);
      await a.port.run("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)", [a.t.ids.next(), ann.id, zoe.id, a.t.clock.now()]);
      await a.port.run("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)", [a.t.ids.next(), zoe.id, ann.id, a.t.clock.now()]);
      expect(await actors.hasLocalFollowers(zoe.id)).toBe(true);
      expect(await actors.localFollowed(zoe.id)).toEqual([ann.id]);
      expect((await actors.followers(ann.id, null, 10)).items.map((f) => f.id)).toEqual([zoe.id]);
      // The outbound recipients: remote followers alone, as whole rows (their inboxes).
      expect((await actors.remoteFollowers(ann.id)).map((f) => [f.id, f.inboxUrl])).toEqual([[zoe.id, zoe.inboxUrl]]);
      expect(await actors.remoteFollowers(zoe.id)).toEqual([]);

      await a.port.run("INSERT INTO status_pins (id, account_id, status_id, created_at) VALUES (?, ?, ?, ?)", [a.t.ids.next(), ann.id, published[1]!, a.t.clock.now()]);
      await a.port.run("INSERT INTO status_pins (id, account_id, status_id, created_at) VALUES (?, ?, ?, ?)", [a.t.ids.next(), ann.id, hidden, a.t.clock.now()]);
      expect((await actors.pinned(ann.id)).map((s) => s.id)).toEqual([published[1]!]);

      expect(await actors.hidesFrom(ann.id, { accountId: zoe.id, host: "m.example" })).toBe(false);
      await a.port.run("INSERT INTO account_domain_blocks (id, account_id, domain, created_at) VALUES (?, ?, ?, ?)", [a.t.ids.next(), ann.id, "m.example", a.t.clock.now()]);
      expect(await actors.hidesFrom(ann.id, { accountId: null, host: "m.example" })).toBe(true);
      expect(await actors.hidesFrom(ann.id, { accountId: null, host: "other.example" })).toBe(false);
    });

    test("domain rules: blocked (its accounts removed), allowed, listed, lifted; a bad domain throws Mastodon's error and changes nothing", async () => {
      const a = await arm.open();
      const { domains, remote, told } = await servicesOn(a);
      const zoe = (await remote.upsert(actor("https://sub.m.example/users/zoe")))!;
      const kept = (await remote.upsert(actor("https://notm.example/users/kim")))!;
      expect(await domains.block("M.Example.")).toEqual({ domain: "m.example", created: true, removedAccounts: 1 });
      expect(await domains.block("m.example")).toEqual({ domain: "m.example", created: false, removedAccounts: 0 });
      expect(await remote.byUri(zoe.uri!)).toBeUndefined();
      expect((await remote.byUri(kept.uri!))?.id).toBe(kept.id);
      expect(await domains.allow("friendly.example")).toEqual({ domain: "friendly.example", created: true });
      expect(await domains.list()).toEqual({ blocked: [{ domain: "m.example", createdAt: a.t.clock.now() }], allowed: [{ domain: "friendly.example", createdAt: a.t.clock.now() }] });

      const before = await domains.list();
      expect(() => domains.block("  ")).toThrow("Validation failed: Domain can't be blank");
      expect(() => domains.allow("https://x.example/")).toThrow("Validation failed: Domain is invalid");
      expect(await domains.list()).toEqual(before);

      expect(await domains.unblock("m.example")).toEqual({ domain: "m.example", removed: true });
      expect(await domains.unblock("m.example")).toEqual({ domain: "m.example", removed: false });
      expect(await domains.disallow("friendly.example")).toEqual({ domain: "friendly.example", removed: true });
      expect(await domains.list()).toEqual({ blocked: [], allowed: [] });
      // Other processes are told of each rule that changed (the allow list is read only under WHITELIST_MODE).
      expect(told.filter((e) => e.type === "federation.rules_changed").length).toBe(2);
    });

    test("refuses answers from the rules kept in memory, read through the port: a block holds at once for the domain and its subdomains, and lifts at once; a rolled-back block never held", async () => {
      const a = await arm.open();
      const { domains } = await servicesOn(a);
      expect(domains.refuses("https://sub.spam.example/inbox")).toBe(false);
      await domains.block("spam.example");
      for (const url of ["https://spam.example/inbox", "https://sub.spam.example/users/x", "SPAM.EXAMPLE.", "spam.example:8443"]) expect(domains.refuses(url)).toBe(true);
      expect(domains.refuses("https://notspam.example/inbox")).toBe(false);
      expect(domains.refuses(PUBLIC_URL)).toBe(false);
      expect(domains.refuses("not a url")).toBe(true);
      // An admin's block is written beside its audit line: it holds once both committed, never if they rolled back.
      const rolledBack = a.port.transaction(async () => {
        await domains.block("held.example");
        expect(domains.refuses("held.example")).toBe(false);
        throw new Error("rolled back");
      });
      await expect(rolledBack).rejects.toThrow("rolled back");
      expect(domains.refuses("held.example")).toBe(false);
      await a.port.transaction(() => domains.block("held.example"));
      expect(domains.refuses("held.example")).toBe(true);
      await domains.unblock("spam.example");
      expect(domains.refuses("https://sub.spam.example/inbox")).toBe(false);

      // Written by another process (or the command line): read again when told.
      await a.port.run("INSERT INTO domain_blocks (id, domain, created_at) VALUES (?, ?, ?)", [a.t.ids.next(), "elsewhere.example", a.t.clock.now()]);
      expect(domains.refuses("elsewhere.example")).toBe(false);
      await domains.load();
      expect(domains.refuses("elsewhere.example")).toBe(true);
    });

    test("under WHITELIST_MODE only allowed domains are not refused, matched exactly; a domain disallowed is refused at once", async () => {
      const a = await arm.open();
      const { gone, events } = await servicesOn(a);
      const domains = new FederationDomains(a.port, a.t.ids, a.t.clock, events, true, new URL(PUBLIC_URL).hostname, gone);
      expect(domains.refuses("friends.example")).toBe(true);
      await domains.load();
      expect(domains.refuses("friends.example")).toBe(true);
      await domains.allow("friends.example");
      expect(domains.refuses("https://friends.example/inbox")).toBe(false);
      expect(domains.refuses("sub.friends.example")).toBe(true);
      await domains.disallow("friends.example");
      expect(domains.refuses("https://friends.example/inbox")).toBe(true);
    });

    test("a gone account is removed; a local account, or one not stored, is left alone", async () => {
      const a = await arm.open();
      const { gone, remote } = await servicesOn(a);
      const zoe = (await remote.upsert(actor("https://m.example/users/zoe")))!;
      const ann = await a.mirror(await a.t.local("ann"));
      const before = await count(a, "accounts");
      await gone.remove(ann.id);
      await gone.remove(zoe.id + 1000);
      expect(await count(a, "accounts")).toBe(before);
      await gone.remove(zoe.id);
      expect(await remote.byUri(zoe.uri!)).toBeUndefined();
      expect(await count(a, "accounts")).toBe(before - 1);
    });
  });
}
