import type { Db } from "../db/connection.ts";
import type { DatabasePort } from "../db/port.ts";

/**
 * JSON answers that are the same for every caller until the database changes (the instance
 * documents; an account's own verify_credentials), kept as bytes with an ETag per generation, as
 * status pages keep theirs: serializing them again on every client start was most of their cost.
 */
export type Kept = { generation: string; body: string; etag: string };

/**
 * The database's generation: it moves on every write, so a kept answer is never served after a
 * write the user made. total_changes() counts this connection's writes (every row inserted,
 * updated or deleted, even in a transaction rolled back: only an extra rebuild); data_version
 * moves when another connection (a CLI command, another process) commits. Two trivial statements
 * in place of the counts and the serialization.
 */
export function databaseGeneration(db: Db, port: DatabasePort): () => string | Promise<string> {
  // On PostgreSQL the snapshot (xmin:xmax:the transaction ids in progress) moves whenever a
  // transaction that writes begins or ends, in this process or another (a command, another
  // server): one round trip, and what the kept bytes were built from is never older than it.
  if (port.dialect === "postgres") return async () => (await port.get<{ s: string }>("SELECT pg_current_snapshot()::text AS s"))!.s;
  const statement = db.$client.query<{ c: number }, []>("SELECT total_changes() AS c");
  const version = db.$client.query<{ data_version: number }, []>("PRAGMA data_version");
  return () => `${version.get()!.data_version}.${statement.get()!.c}`;
}

/** Bytes for this generation: the kept ones if `kept` is of it, else `build`'s serialized. */
export function keep(kept: Kept | undefined, generation: string, build: () => unknown): Kept {
  if (kept !== undefined && kept.generation === generation) return kept;
  const body = JSON.stringify(build());
  return { generation, body, etag: `W/"${Bun.hash(body).toString(36)}"` };
}

/** `keep`, for a document built from asynchronous reads: they run only when the generation moved. */
export async function keepAsync(kept: Kept | undefined, generation: string, build: () => Promise<unknown>): Promise<Kept> {
  if (kept !== undefined && kept.generation === generation) return kept;
  const built = await build();
  return keep(undefined, generation, () => built);
}

/**
 * 304 and no body when the client already holds these bytes (If-None-Match), else 200 and them.
 * Without `cacheControl`, the edge's no-store for the API applies.
 */
export function answerKept(request: Request, kept: Kept, cacheControl?: string): Response {
  const matched = request.headers.get("if-none-match")?.split(",").some((t) => t.trim() === kept.etag || t.trim() === "*") ?? false;
  return new Response(matched ? null : kept.body, {
    status: matched ? 304 : 200,
    headers: { "content-type": "application/json; charset=utf-8", etag: kept.etag, ...(cacheControl ? { "cache-control": cacheControl } : {}) },
  });
}
