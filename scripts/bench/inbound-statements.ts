/**
 * SQL statements per incoming signed Create: a server in-process with a counting query hook,
 * a simulated author (a plain Bun server on loopback serving its actor) followed by a local
 * reader, and Creates of public Notes posted at the shared inbox one at a time. Prints the
 * statements of one Create (after a warm-up one that fetched the author and cached its key).
 *
 *   bun scripts/bench/inbound-statements.ts [--list]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateCryptoKeyPair, signRequest } from "@fedify/fedify";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";

const AP = "application/activity+json";
const list = process.argv.includes("--list");
const dataDir = mkdtempSync(join(tmpdir(), "rookery-inbound-statements-"));
const pair = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
const spki = Buffer.from(await crypto.subtle.exportKey("spki", pair.publicKey)).toString("base64");
const publicKeyPem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join("\n")}\n-----END PUBLIC KEY-----\n`;
// The author's actor IRI, known once its server listens.
let actor = "";
const remote = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (request): Response =>
    new URL(request.url).pathname === "/users/author"
      ? Response.json(
          {
            "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
            id: actor,
            type: "Person",
            preferredUsername: "author",
            inbox: `${actor}/inbox`,
            followers: `${actor}/followers`,
            publicKey: { id: `${actor}#main-key`, owner: actor, publicKeyPem },
          },
          { headers: { "content-type": AP } },
        )
      : new Response(null, { status: request.method === "POST" ? 202 : 404 }),
});
actor = `http://127.0.0.1:${remote.port}/users/author`;

let statements: string[] = [];
const server = await startServer(loadConfig({ DATA_DIR: dataDir, PORT: "0", LOG_REQUESTS: "false", RATE_LIMITS: "off", ALLOW_PRIVATE_ADDRESSES: "true" }), {
  derivePublicUrl: true,
  onQuery: (sql) => statements.push(sql),
});
const base = server.ctx.config.publicUrl;
try {
  const reader = await server.ctx.services.accounts.create({ username: "reader", email: "r@q.test", password: "statement counting" }, { api: false });
  let n = 0;
  const post = async () => {
    n++;
    const id = `${actor}/notes/${n}`;
    const body = JSON.stringify({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${id}/activity`,
      type: "Create",
      actor,
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      cc: [`${actor}/followers`],
      object: { id, type: "Note", attributedTo: actor, to: ["https://www.w3.org/ns/activitystreams#Public"], cc: [`${actor}/followers`], content: `<p>note ${n}, with <b>some</b> markup</p>`, published: new Date().toISOString() },
    });
    const request = new Request(`${base}/inbox`, { method: "POST", headers: { "content-type": AP, accept: AP }, body });
    const res = await fetch(await signRequest(request, pair.privateKey, new URL(`${actor}#main-key`)));
    if (res.status !== 202) throw new Error(`inbox: ${res.status} ${await res.text()}`);
  };
  // The author becomes known (fetched with its key), then the reader follows it, as a row: its
  // Creates are kept from then on.
  await post();
  // The benchmark counts SQLite's statements: it runs on the embedded default.
  const sqlite = server.database.sqlite!;
  const authorId = (sqlite.query("SELECT id FROM accounts WHERE uri = ?").get(actor) as { id: number }).id;
  sqlite.query("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)").run(Date.now() * 65536, reader.id, authorId, Date.now());
  await post();
  statements = [];
  await post();
  const counted = [...statements];
  const stored = (sqlite.query("SELECT count(*) AS n FROM statuses WHERE uri LIKE ?").get(`${actor}/notes/%`) as { n: number }).n;
  console.log(`SQL statements for one signed Create of a followed author (stored: ${stored} of ${n}): ${counted.length}`);
  if (list) for (const s of counted) console.log(" ", s.replace(/\s+/g, " ").slice(0, 160));
} finally {
  await server.stop();
  remote.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
}
