import { afterAll, beforeAll, expect, test } from "bun:test";
import { Create, Document, Image, Mention, Note } from "@fedify/fedify/vocab";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/wait.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A remote reply in a local thread: the page shows it, and makes the browser fetch nothing from
// its server (no third-party requests): the default avatar, the media as a link.
let a: TestServer;
let alice: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  receiver = await startReceiver("127.0.0.18");
  receiver.profile = { name: "Carol", icon: new Image({ url: new URL("https://files.example/carol.png"), mediaType: "image/png" }) };
});
afterAll(async () => {
  await a?.close();
  receiver?.stop();
});

test("a remote reply with a picture: in the thread, with the default avatar and its picture as a link; the CSP allows nothing elsewhere", async () => {
  const post = await postStatus(alice, { status: "what do you think?", visibility: "public" });
  const id = new URL(`${receiver.base}/notes/reply`);
  const to = new URL(`${a.base}/users/alice`);
  const note = new Note({
    id,
    attribution: new URL(receiver.actor),
    content: "<p>a remote answer</p>",
    replyTarget: new URL(post.uri),
    to: new URL("https://www.w3.org/ns/activitystreams#Public"),
    ccs: [to],
    tags: [new Mention({ href: to })],
    attachments: [new Document({ mediaType: "image/jpeg", url: new URL("https://files.example/cat.jpg"), name: "a cat" })],
  });
  await receiver.send({ id: to.href, inbox: `${to.href}/inbox` }, new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to: new URL("https://www.w3.org/ns/activitystreams#Public"), ccs: [to] }));
  await eventually(() => a.database.port.get("SELECT id FROM statuses WHERE uri = ?", [id.href]), "the reply stored");

  const res = await fetch(`${a.base}/@alice/${post.id}`, { headers: { accept: "text/html" } });
  const body = await res.text();
  expect(body).toContain("<p>a remote answer</p>");
  expect(body).toContain('<a href="https://files.example/cat.jpg">a cat (at its own server)</a>');
  expect(body).not.toMatch(/(src|poster)="https:\/\/files\.example/);
  expect(body).toContain(`<img src="${a.base}/avatars/original/missing.png" alt="">`);
  const csp = res.headers.get("content-security-policy")!;
  expect(csp).toContain("img-src 'self' data:;");
  expect(csp).toContain("media-src 'self';");
});
