/**
 * JSON answers that are the same for every caller until the database changes (the instance
 * documents; an account's own verify_credentials), kept as bytes with an ETag per generation, as
 * status pages keep theirs: serializing them again on every client start was most of their cost.
 */
export type Kept = { generation: string; body: string; etag: string };

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
