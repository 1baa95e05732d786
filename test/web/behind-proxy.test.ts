import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * A server behind a TLS proxy, as every real deployment is: PUBLIC_URL is https, and the proxy
 * asks the server over plain http at its own address, with the public Host and the forwarding
 * headers. The actor's and the Note's IRIs opened in a browser still lead to their pages.
 */
for (const publicUrl of ["https://social.example", "https://social.example:8443"]) {
  describe(`PUBLIC_URL=${publicUrl}`, () => {
    let server: TestServer;
    let alice: TestUser;
    let local: string;
    const host = new URL(publicUrl).host;

    beforeAll(async () => {
      server = await startTestServer({ PUBLIC_URL: publicUrl, TRUSTED_PROXIES: "127.0.0.1/32" });
      local = `http://127.0.0.1:${server.server.port}`;
      // PUBLIC_URL names no reachable host here: the API is called at the server's own address.
      const user = await createUser(server, "alice");
      alice = { ...user, client: new Client(local, user.token) };
    });
    afterAll(() => server.close());

    /** A request as the proxy forwards it. */
    const viaProxy = (path: string, accept: string) =>
      fetch(`${local}${path}`, { headers: { accept, host, "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.9" }, redirect: "manual" });

    test("the actor's and a Note's IRIs asked for HTML redirect to their pages at PUBLIC_URL", async () => {
      const post = await postStatus(alice, { status: "behind the proxy", visibility: "public" });
      expect(post.uri).toBe(`${publicUrl}/users/alice/statuses/${post.id}`);
      for (const [path, to] of [
        ["/users/alice", `${publicUrl}/@alice`],
        [`/users/alice/statuses/${post.id}`, `${publicUrl}/@alice/${post.id}`],
      ]) {
        for (const accept of ["text/html", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"]) {
          const res = await viaProxy(path!, accept);
          expect([path, accept, res.status, res.headers.get("location")]).toEqual([path, accept, 302, to]);
        }
      }
      // The page it leads to is there, behind the same proxy.
      const page = await viaProxy(`/@alice/${post.id}`, "text/html");
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("behind the proxy");
    });

    test("ActivityPub clients still get the actor and the Note at their public IRIs", async () => {
      const post = await postStatus(alice, { status: "as a Note", visibility: "public" });
      const actor = await viaProxy("/users/alice", "application/activity+json");
      expect(actor.status).toBe(200);
      expect((await actor.json()).id).toBe(`${publicUrl}/users/alice`);
      const note = await viaProxy(`/@alice/${post.id}`, "application/activity+json");
      expect(note.status).toBe(200);
      expect((await note.json()).id).toBe(`${publicUrl}/users/alice/statuses/${post.id}`);
    });

    test("what is not there stays 404: another case of the name, an unknown account, a private Note asked for ActivityPub", async () => {
      const hidden = await postStatus(alice, { status: "followers only", visibility: "private" });
      const cases: [string, string][] = [
        ["/users/Alice", "text/html"],
        ["/users/nobody", "text/html"],
        ["/users/nobody/statuses/1", "text/html"],
        [`/users/alice/statuses/${hidden.id}`, "application/activity+json"],
        [`/@alice/${hidden.id}`, "application/activity+json"],
        ["/@nobody", "application/activity+json"],
      ];
      for (const [path, accept] of cases) {
        const res = await viaProxy(path, accept);
        expect([path, accept, res.status, await res.json()]).toEqual([path, accept, 404, { error: "Record not found" }]);
      }
    });
  });
}
