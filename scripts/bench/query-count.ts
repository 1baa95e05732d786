import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";
import { parseScopes } from "../../src/auth/scopes.ts";

/** Starts a server in-process with a counting query hook and counts one request of each kind. */
export async function countQueries(): Promise<[string, number][]> {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-queries-"));
  let count = 0;
  const server = await startServer(loadConfig({ DATA_DIR: dataDir, PORT: "0", LOG_REQUESTS: "false", RATE_LIMITS: "off" }), {
    derivePublicUrl: true,
    onQuery: () => count++,
  });
  const base = server.ctx.config.publicUrl;
  const { services } = server.ctx;
  try {
    const author = await services.accounts.create({ username: "author", email: "a@q.test", password: "query counting" }, { api: false });
    const reader = await services.accounts.create({ username: "reader", email: "r@q.test", password: "query counting" }, { api: false });
    const { app } = services.applications.register({ name: "q", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow" });
    const authorToken = services.tokens.issue(app.id, author.id, parseScopes("read write follow")).accessToken;
    const readerToken = services.tokens.issue(app.id, reader.id, parseScopes("read write follow")).accessToken;
    const h = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
    await fetch(`${base}/api/v1/accounts/${author.id}/follow`, { method: "POST", headers: h(readerToken) });
    let id = "";
    for (let i = 0; i < 25; i++) {
      const res = await fetch(`${base}/api/v1/statuses`, { method: "POST", headers: h(authorToken), body: JSON.stringify({ status: `status ${i} #tag` }) });
      id = ((await res.json()) as { id: string }).id;
    }
    const measure = async (label: string, url: string, init: RequestInit = {}): Promise<[string, number]> => {
      await fetch(url, init); // warm caches (token lookup, app names)
      count = 0;
      const res = await fetch(url, init);
      await res.arrayBuffer();
      return [label, count];
    };
    return [
      await measure("GET /api/v1/statuses/:id (anon)", `${base}/api/v1/statuses/${id}`),
      await measure("GET /api/v1/statuses/:id (signed in)", `${base}/api/v1/statuses/${id}`, { headers: h(readerToken) }),
      await measure("GET /api/v1/timelines/home?limit=20", `${base}/api/v1/timelines/home?limit=20`, { headers: h(readerToken) }),
      await measure("POST /api/v1/statuses", `${base}/api/v1/statuses`, { method: "POST", headers: h(authorToken), body: JSON.stringify({ status: "counted" }) }),
    ];
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
