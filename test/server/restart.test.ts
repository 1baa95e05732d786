import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { cli, serveProcess } from "../support/serve-process.ts";
import { startTestServer } from "../support/server.ts";
import { databaseEnv, dropDatabase } from "../support/test-database.ts";

test("a restart keeps accounts, apps and tokens", async () => {
  const first = await startTestServer();
  const user = await createUser(first, "persistent");
  const http = new Client(first.base);
  const app = await http.post("/api/v1/apps", { json: { client_name: "Keeper", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" } });
  const token = await http.post("/oauth/token", {
    json: { grant_type: "client_credentials", client_id: app.body.client_id, client_secret: app.body.client_secret, scope: "read" },
  });
  await user.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Still here" } });
  const vapidKey = (await http.get("/api/v2/instance")).body.configuration.vapid.public_key;

  const second = await first.restart();
  try {
    const again = new Client(second.base);
    const me = await again.get("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(me.status).toBe(200);
    expect(me.body.display_name).toBe("Still here");
    const appMe = await again.get("/api/v1/apps/verify_credentials", { token: token.body.access_token });
    expect(appMe.body.name).toBe("Keeper");
    const stillClient = await again.post("/oauth/token", {
      json: { grant_type: "client_credentials", client_id: app.body.client_id, client_secret: app.body.client_secret },
    });
    expect(stillClient.status).toBe(200);
    expect((await again.get("/api/v2/instance")).body.configuration.vapid.public_key).toBe(vapidKey);
  } finally {
    await second.close();
  }
});

test("an Idempotency-Key survives a restart: the retry answers the first status as it is now, and posts nothing", async () => {
  const first = await startTestServer();
  const alice = await createUser(first, "alice");
  const bob = await createUser(first, "bob");
  const headers = { "idempotency-key": "K" };
  const posted = await alice.client.post("/api/v1/statuses", { json: { status: "posted once" }, headers });
  expect(posted.status).toBe(200);

  const second = await first.restart();
  try {
    const statuses = async () => (await second.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n;
    const before = await statuses();
    const again = new Client(second.base, alice.token);
    expect((await new Client(second.base, bob.token).post(`/api/v1/statuses/${posted.body.id}/favourite`)).status).toBe(200);
    const retried = await again.post("/api/v1/statuses", { json: { status: "posted once" }, headers });
    expect(retried.status).toBe(200);
    // The same JSON, with the one favourite given since (the test server's address changes with the restart).
    const firstAnswer = JSON.parse(JSON.stringify(posted.body).replaceAll(first.base, second.base));
    expect(retried.body).toEqual({ ...firstAnswer, favourites_count: 1 });
    expect(await statuses()).toBe(before);
    const timeline = await again.get(`/api/v1/accounts/${alice.id}/statuses`);
    expect(timeline.body.map((s: { id: string }) => s.id)).toEqual([posted.body.id]);
  } finally {
    await second.close();
  }
});

test("kill -9 right after a post: the retry with the same Idempotency-Key answers the first status", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-kill-"));
  // In the PostgreSQL test mode the directory's database is made first: the commands run before the server and are told it.
  await databaseEnv(dataDir);
  // A new data directory: the database is made by migrate (or the server), never by another command.
  cli(dataDir, ["migrate"]);
  cli(dataDir, ["accounts", "create", "kim", "--email", "kim@example.test", "--password", "kims password"]);
  let running = await serveProcess(dataDir);
  try {
    const http = new Client(running.base);
    const app = await http.post("/api/v1/apps", { json: { client_name: "retrier", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" } });
    const token = await http.post("/oauth/token", {
      json: { grant_type: "password", username: "kim", password: "kims password", client_id: app.body.client_id, client_secret: app.body.client_secret, scope: "read write" },
    });
    expect(token.status).toBe(200);
    const headers = { "idempotency-key": "retry-after-crash" };
    const posted = await new Client(running.base, token.body.access_token).post("/api/v1/statuses", { json: { status: "posted once" }, headers });
    expect(posted.status).toBe(200);

    running.proc.kill("SIGKILL");
    await running.proc.exited;
    running = await serveProcess(dataDir);

    const again = new Client(running.base, token.body.access_token);
    const retried = await again.post("/api/v1/statuses", { json: { status: "posted once" }, headers });
    expect(retried.status).toBe(200);
    expect(retried.body.id).toBe(posted.body.id);
    const mine = await again.get(`/api/v1/accounts/${posted.body.account.id}/statuses`);
    expect(mine.body.map((s: { id: string }) => s.id)).toEqual([posted.body.id]);
  } finally {
    running.proc.kill("SIGKILL");
    await running.proc.exited;
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabase(dataDir);
  }
}, 60_000);
