import { ApiError } from "../errors.ts";
import { paramsFromEntries, paramsFromJson, paramsFromQuery, type Params } from "./params.ts";
import { getMeta } from "./request-meta.ts";

export const MAX_FORM_BYTES = 1024 * 1024;

const malformed = () => new ApiError(400, "Error occurred while parsing request parameters");

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
  const text = await request.text();
  if (text.length > MAX_FORM_BYTES) throw new ApiError(413, "Request body is too large");
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
  if (meta.params) return meta.params as Params;
  const body = c.body && typeof c.body === "object" && !Array.isArray(c.body) ? (c.body as Params) : {};
  const params = { ...paramsFromQuery(c.request.url), ...body };
  meta.params = params;
  return params;
}
