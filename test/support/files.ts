import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "bun:test";
import type { Client } from "./http.ts";
import type { TestServer } from "./server.ts";

/** Every file under the server's media folder: what uploads left behind. */
export function mediaFiles(server: TestServer): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else out.push(join(dir, entry.name));
    }
  };
  walk(join(server.dataDir, "media"));
  return out;
}

/**
 * A v2 upload whose job is held at "rendered" (the hold taken before the upload): GET says 206
 * with no url while it is held; released and the queue idle, GET's 200 answer.
 */
export async function processedAfterHold(server: TestServer, client: Client, id: string, hold: { reached: Promise<void>; release: () => void }) {
  await hold.reached;
  const during = await client.get(`/api/v1/media/${id}`);
  expect(during.status).toBe(206);
  expect(during.body.url).toBeNull();
  hold.release();
  await server.ctx.services.media.queue.idle();
  const after = await client.get(`/api/v1/media/${id}`);
  expect(after.status).toBe(200);
  return after;
}

/** How many media attachments the server's database holds, read through its port (SQLite or PostgreSQL). */
export async function mediaRows(server: TestServer): Promise<number> {
  return (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM media_attachments"))!.n;
}
