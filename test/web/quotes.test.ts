import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Quote posts on the public pages: the quoted post inside the quoting one, on the status page
 * and the profile, only when an anonymous reader may see it; otherwise the reason it is not shown.
 */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const page = async (path: string) => {
  const res = await fetch(`${server.base}${path}`, { headers: { accept: "text/html" } });
  return { status: res.status, body: await res.text() };
};
const quoteBlocks = (body: string) => [...body.matchAll(/<blockquote class="quote">([\s\S]*?)<\/blockquote>/g)].map((m) => m[1]!);

describe("quote posts on the public pages", () => {
  test("the status page and the profile show the quoted post inside the quoting one, without the fallback link", async () => {
    const quoted = await postStatus(alice, { status: "The quoted words" });
    const quoting = await postStatus(bob, { status: "The quoting words", quoted_status_id: quoted.id });
    for (const path of [`/@bob/${quoting.id}`, "/@bob"]) {
      const res = await page(path);
      expect(res.status).toBe(200);
      const blocks = quoteBlocks(res.body);
      expect([path, blocks.length]).toEqual([path, 1]);
      expect(blocks[0]).toContain("The quoted words");
      expect(blocks[0]).toContain(`href="${server.base}/@alice"`);
      expect(res.body).toContain("The quoting words");
      expect(res.body).not.toContain("quote-inline");
    }
  });

  test("a quoted post the reader may not see, or one revoked or deleted, is named, not shown", async () => {
    const secret = await postStatus(alice, { status: "Only for followers", visibility: "private" });
    // Alice quotes her own private post in an unlisted one: narrowed to private, so not on a page either.
    const narrowed = await postStatus(alice, { status: "Quoting my secret", visibility: "unlisted", quoted_status_id: secret.id });
    expect(narrowed.visibility).toBe("private");
    expect((await page(`/@alice/${narrowed.id}`)).status).toBe(404);

    const revoked = await postStatus(alice, { status: "Soon revoked" });
    const quoting = await postStatus(bob, { status: "Quoting what goes", quoted_status_id: revoked.id });
    expect(quoteBlocks((await page(`/@bob/${quoting.id}`)).body)[0]).toContain("Soon revoked");
    await alice.client.post(`/api/v1/statuses/${revoked.id}/quotes/${quoting.id}/revoke`);
    const after = await page(`/@bob/${quoting.id}`);
    expect(quoteBlocks(after.body)).toEqual(['<p class="meta">Post removed by author.</p>']);
    expect(after.body).not.toContain("Soon revoked");

    const gone = await postStatus(alice, { status: "Soon deleted" });
    const orphan = await postStatus(bob, { status: "Quoting the deleted", quoted_status_id: gone.id });
    await alice.client.delete(`/api/v1/statuses/${gone.id}`);
    const deleted = await page(`/@bob/${orphan.id}`);
    expect(quoteBlocks(deleted.body)).toEqual(['<p class="meta">Post removed by author.</p>']);
    expect(deleted.body).not.toContain("Soon deleted");
  });

  test("a quote of a quote shows one level, then a placeholder", async () => {
    const first = await postStatus(alice, { status: "Level zero" });
    const second = await postStatus(bob, { status: "Level one", quoted_status_id: first.id });
    const third = await postStatus(alice, { status: "Level two", quoted_status_id: second.id });
    const blocks = quoteBlocks((await page(`/@alice/${third.id}`)).body);
    expect(blocks[0]).toContain("Level one");
    expect(blocks[0]).not.toContain("Level zero");
    expect(blocks[0]).toContain('<p class="meta">Quoted post</p>');
  });
});
