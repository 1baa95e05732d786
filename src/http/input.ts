import { ApiError } from "../errors.ts";
import { paramsFromEntries, paramsFromJson, paramsFromQuery, type Params } from "./params.ts";
import { getMeta } from "./request-meta.ts";

export const MAX_FORM_BYTES = 1024 * 1024;

const malformed = () => new ApiError(400, "Error occurred while parsing request parameters");

/** The body as text, refusing it (413) once it passes `limit` bytes, however it was sent. */
async function readLimited(request: Request, limit: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new ApiError(413, "Request body is too large");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Elysia's parse hook: every body becomes one nested parameter bag, whatever its encoding. */
export async function parseBody(request: Request, contentType: string): Promise<Params> {
  const type = contentType.toLowerCase();
  if (type.startsWith("multipart/form-data")) {
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      throw new ApiError(400, "Malformed multipart body");
    }
    return paramsFromEntries(form.entries() as Iterable<[string, string | File]>);
  }
  const text = await readLimited(request, MAX_FORM_BYTES);
  if (type.startsWith("application/json") || type.endsWith("+json")) {
    if (text.trim() === "") return {};
    try {
      const body = JSON.parse(text);
      if (body === null || typeof body !== "object" || Array.isArray(body)) throw malformed();
      return paramsFromJson(body);
    } catch {
      throw malformed();
    }
  }
  if (type.startsWith("application/x-www-form-urlencoded")) return paramsFromEntries(new URLSearchParams(text));
  return {};
}

/** Query and body parameters in one bag (body wins), as Rails' `params`. */
export function input(c: { request: Request; body?: unknown }): Params {
  const meta = getMeta(c.request);
  if (meta.params !== undefined) return meta.params as Params;
  const params = paramsFromQuery(c.request.url);
  if (c.body && typeof c.body === "object" && !Array.isArray(c.body)) Object.assign(params, c.body);
  meta.params = params;
  return params;
}
