import { ApiError } from "../errors.ts";
import { bodyLimit, fileLimit, MAX_FORM_BYTES, pathOf } from "./body-limits.ts";
import { boundaryOf } from "./multipart.ts";
import { readMultipart, type UploadFolder } from "./multipart-body.ts";
import { routePath } from "../net/paths.ts";
import { paramsFromEntries, paramsFromJson, paramsFromQuery, type Params } from "./params.ts";
import { getMeta } from "./request-meta.ts";

const malformed = () => new ApiError(400, "Error occurred while parsing request parameters");

/**
 * The body's bytes, refusing it (413) once it passes `limit`, however it was sent: a body
 * without a Content-Length is counted as it arrives, so no more than the limit is ever held.
 * A declared length (checked against the limit at the edge) is filled in place, one copy.
 */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const declared = Number(request.headers.get("content-length") ?? "");
  let filled: Uint8Array | null = Number.isSafeInteger(declared) && declared > 0 && declared <= limit ? new Uint8Array(declared) : null;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > limit) {
      await reader.cancel();
      throw new ApiError(413, "Request body is too large");
    }
    if (filled && size + value.byteLength <= filled.length) {
      filled.set(value, size);
    } else {
      if (filled) chunks.push(filled.subarray(0, size));
      filled = null;
      chunks.push(value);
    }
    size += value.byteLength;
  }
  if (filled) return size === filled.length ? filled : filled.subarray(0, size);
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

/**
 * A file input left empty: browsers send a part with no filename and no bytes. Rack drops
 * such parts, so a file parameter sent that way is absent, not an (invalid) empty file.
 */
function isEmptyFilePart(value: string | File): boolean {
  return typeof value !== "string" && value.size === 0 && !value.name;
}

/** Elysia's parse hook: every body becomes one nested parameter bag, whatever its encoding. */
export async function parseBody(request: Request, contentType: string, uploads: UploadFolder): Promise<Params> {
  const type = contentType.toLowerCase();
  const limit = bodyLimit(request.method, routePath(pathOf(request.url)));
  if (type.startsWith("multipart/form-data")) {
    // Elysia hands over the media type alone; the boundary is in the header.
    const boundary = boundaryOf(request.headers.get("content-type") ?? contentType);
    if (!boundary || !request.body) throw new ApiError(400, "Malformed multipart body");
    // Files go to disk as they arrive (removed by the edge once the request is answered).
    const kept = (getMeta(request).uploads ??= []);
    const entries = await readMultipart(request.body, boundary, { body: limit, text: MAX_FORM_BYTES, file: fileLimit }, uploads, kept);
    return paramsFromEntries(entries.filter(([, v]) => !isEmptyFilePart(v)));
  }
  const bytes = await readLimited(request, limit);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  if (type.startsWith("application/json") || type.endsWith("+json")) {
    if (text.trim() === "") return {};
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw malformed();
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) throw malformed();
    return paramsFromJson(body);
  }
  if (type.startsWith("application/x-www-form-urlencoded")) return paramsFromEntries(new URLSearchParams(text));
  return {};
}

/**
 * Query and body parameters in one bag (body wins), as Rails' `params`. A GET route passes its
 * request alone (Elysia reads no body for GET): a route that hands its whole context to a
 * function is compiled by Elysia to build everything for it on every request (the headers as an
 * object, the cookies, the query, a server getter), 3-5 µs a request that no route here reads.
 */
export function input(c: Request | { request: Request; body?: unknown }): Params {
  const request = c instanceof Request ? c : c.request;
  const meta = getMeta(request);
  if (meta.params !== undefined) return meta.params as Params;
  const params = paramsFromQuery(request.url);
  const body = c instanceof Request ? undefined : c.body;
  if (body && typeof body === "object" && !Array.isArray(body)) Object.assign(params, body);
  meta.params = params;
  return params;
}
