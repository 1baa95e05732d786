import { afterEach, describe, expect, test } from "bun:test";
import { createFederation, MemoryKvStore } from "@fedify/fedify";
import { Note, Question } from "@fedify/fedify/vocab";
import { eq } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AccountRow, StatusRow } from "../../src/db/schema.ts";
import { noteOf, type NoteLookups } from "../../src/federation/vocab.ts";
import { EventBus } from "../../src/infra/events.ts";
import { MediaStorage } from "../../src/media-files/storage.ts";
import { AccountService } from "../../src/services/accounts/accounts.ts";
import { ProfileImageService } from "../../src/services/accounts/profile-images.ts";
import { InstanceInfo } from "../../src/services/instance-info.ts";
import { StatusMedia } from "../../src/services/media/status-media.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";
import { statusesOnPort } from "../support/statuses-on-port.ts";

// What a Note is rendered from, and the instance's counts, read through the database port
// (issue 31) on SQLite and on PostgreSQL: the renderers' lookups are the services' awaited reads.

const PUBLIC_URL = "http://rookery.test";
const folders: string[] = [];
afterEach(async () => {
  await closePortArms();
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The rows the Note points at are written to the arm's database as they would be stored. */
async function seed(arm: PortArm) {
  const { t, port } = arm;
  const alice = await arm.mirror(await t.local("alice"));
  const bob = await arm.mirror(await t.remote("bob", "remote.example"));
  const now = t.clock.now();
  const status = (id: number, accountId: number, fields: Partial<StatusRow>) => ({ id, accountId, visibility: "public", conversationId: id, createdAt: now, ...fields });
  const quotedId = t.ids.next();
  const pollId = t.ids.next();
  const quotingId = t.ids.next();
  await port.orm.insert(port.tables.statuses).values([
    status(quotedId, bob.id, { uri: "https://remote.example/notes/1", text: "quoted" }),
    status(pollId, alice.id, { text: "which?", contentHtml: "<p>which?</p>", hasPoll: true, hasMedia: true }),
    status(quotingId, alice.id, { text: "look", contentHtml: "<p>look</p>", mentions: JSON.stringify([{ id: bob.id, username: "bob", acct: "bob@remote.example", url: "https://remote.example/@bob" }]) }),
  ] as never);
  await port.orm.insert(port.tables.mediaAttachments).values({ id: t.ids.next(), accountId: alice.id, statusId: pollId, position: 0, type: "image", processing: "done", file: "media_attachments/a.png", description: "a square", meta: JSON.stringify({ original: { width: 4, height: 4 } }), createdAt: now } as never);
  await port.orm.insert(port.tables.polls).values({ id: t.ids.next(), statusId: pollId, accountId: alice.id, options: JSON.stringify(["yes", "no"]), tallies: JSON.stringify([2, 1]), multiple: false, votesCount: 3, votersCount: 3, expiresAt: now + 86_400_000, createdAt: now } as never);
  await port.orm.insert(port.tables.quotes).values({ id: t.ids.next(), accountId: alice.id, statusId: quotingId, quotedStatusId: quotedId, quotedAccountId: bob.id, quotedUri: "https://remote.example/notes/1", state: "accepted", approvalUri: "https://remote.example/stamps/1", createdAt: now, updatedAt: now } as never);
  const row = async (id: number) => (await port.orm.select().from(port.tables.statuses).where(eq(port.tables.statuses.id, id)))[0] as StatusRow;
  return { alice, bob, polled: await row(pollId), quoting: await row(quotingId) };
}

/** The lookups federation wires (src/federation/index.ts), over the arm's port. */
function lookupsOn(arm: PortArm): NoteLookups {
  const dir = mkdtempSync(join(tmpdir(), "rookery-note-port-"));
  folders.push(dir);
  const accounts = new AccountService(arm.port, arm.t.ids, arm.t.clock, PUBLIC_URL, new ProfileImageService(new MediaStorage(dir, PUBLIC_URL)), new EventBus(arm.port), async () => []);
  const statusMedia = new StatusMedia(arm.port, arm.t.clock);
  const { polls, quotes } = statusesOnPort(arm);
  const { statuses } = arm.port.tables;
  return {
    account: (id) => accounts.get(id),
    status: async (id) => (await arm.port.orm.select().from(statuses).where(eq(statuses.id, id)))[0] as StatusRow | undefined,
    media: async (statusId) => (await statusMedia.forStatuses([statusId])).get(statusId) ?? [],
    poll: (statusId) => polls.pollOf(statusId),
    quote: (statusId) => quotes.forStatus(statusId),
  };
}

function context() {
  const federation = createFederation<void>({ kv: new MemoryKvStore(), origin: PUBLIC_URL });
  federation.setActorDispatcher("/users/{identifier}", () => null);
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox");
  federation.setOutboxDispatcher("/users/{identifier}/outbox", () => null);
  federation.setFollowersDispatcher("/users/{identifier}/followers", () => null);
  federation.setFollowingDispatcher("/users/{identifier}/following", () => null);
  federation.setFeaturedDispatcher("/users/{identifier}/featured", () => null);
  federation.setObjectDispatcher(Note, "/users/{identifier}/statuses/{id}", () => null);
  return federation.createContext(new URL(PUBLIC_URL), undefined);
}

const urls = { publicUrl: PUBLIC_URL, media: (file: string) => `${PUBLIC_URL}/system/${file}` } as never;

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`rendering for federation on ${arm.name}`, () => {
    test("a Note with a poll and media, and one that quotes and mentions, read through the port", async () => {
      const a = await arm.open();
      const { alice, polled, quoting } = await seed(a);
      const lookups = lookupsOn(a);
      const ctx = context();

      const question = await noteOf(ctx, urls, alice as AccountRow, polled, lookups);
      expect(question).toBeInstanceOf(Question);
      const poll = (await question.toJsonLd({ format: "compact" })) as Record<string, unknown>;
      expect((poll.oneOf as { name: string; replies: { totalItems: number } }[]).map((o) => [o.name, o.replies.totalItems])).toEqual([["yes", 2], ["no", 1]]);
      expect(poll.attachment).toMatchObject({ type: "Document", url: `${PUBLIC_URL}/system/media_attachments/a.png`, name: "a square", width: 4, height: 4 });

      const note = (await (await noteOf(ctx, urls, alice as AccountRow, quoting, lookups)).toJsonLd({ format: "compact" })) as Record<string, unknown>;
      expect(note.quote).toBe("https://remote.example/notes/1");
      expect(note.quoteAuthorization).toBe("https://remote.example/stamps/1");
      expect(note.tag).toMatchObject({ type: "Mention", href: "https://remote.example/users/bob", name: "@bob@remote.example" });
      expect(note.cc).toContain("https://remote.example/users/bob");
    });

    test("the instance's counts and peers: local accounts and their statuses, the servers known by host", async () => {
      const a = await arm.open();
      const { t, port } = a;
      const info = new InstanceInfo(port, t.ids, t.clock, PUBLIC_URL, "open");
      expect(await info.stats()).toEqual({ userCount: 0, statusCount: 0, domainCount: 0 });
      const alice = await a.mirror(await t.local("alice"));
      await port.run("UPDATE accounts SET statuses_count = 3 WHERE id = ?", [alice.id]);
      await a.mirror(await t.remote("bob", "remote.example"));
      await a.mirror(await t.remote("carol", "Remote.example:8443"));
      await a.mirror(await t.remote("dan", "other.example"));
      expect(await info.stats()).toEqual({ userCount: 1, statusCount: 3, domainCount: 2 });
      expect(await info.peers()).toEqual(["other.example", "remote.example"]);
    });
  });
}
