import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import avatarMissing from "../assets/avatar-missing.png" with { type: "file" };
import headerMissing from "../assets/header-missing.png" with { type: "file" };
import favicon from "../assets/favicon.png" with { type: "file" };
import { notFound } from "../errors.ts";
import { MEDIA_TYPES as TYPES } from "../media-files/s3-store.ts";

const IMMUTABLE = "public, max-age=31536000, immutable";
/**
 * Uploaded files are public: web clients load them with crossorigin="anonymous" (to read
 * pixels, or because their CSP asks it), which needs this header on the file and its redirect.
 */
const ANY_ORIGIN = "*";

/**
 * One `bytes=` range of a Range header (players ask for video in pieces, and Safari plays
 * nothing without them); null to send the whole file (several ranges, or a header not
 * understood, as RFC 9110 allows), "unsatisfiable" for a range that starts past the end.
 */
export function byteRange(header: string, size: number): { start: number; end: number } | "unsatisfiable" | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (size === 0) return "unsatisfiable";
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return "unsatisfiable";
  if (end < start) return null;
  return { start, end };
}

/**
 * Stored media under /system/ and the default pictures. Paths are checked against the
 * shape the server gives its own files, so no request can reach outside DATA_DIR/media.
 * With media in a bucket, /system/ redirects to the file there (its public URL, or a presigned
 * one for a private bucket): the URLs given out before a move to the bucket keep working.
 */
export function fileRoutes(ctx: AppContext) {
  const serve = async (path: string | null, type: string | undefined, range: string | null = null) => {
    if (!path || !type) throw notFound();
    const file = Bun.file(path);
    if (!(await file.exists())) throw notFound();
    const headers: Record<string, string> = { "content-type": type, "cache-control": IMMUTABLE, "access-control-allow-origin": ANY_ORIGIN, "x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'; sandbox", "accept-ranges": "bytes" };
    const part = range === null ? null : byteRange(range, file.size);
    if (part === "unsatisfiable") return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${file.size}` } });
    if (part) return new Response(file.slice(part.start, part.end + 1), { status: 206, headers: { ...headers, "content-range": `bytes ${part.start}-${part.end}/${file.size}` } });
    return new Response(file, { headers });
  };
  return new Elysia()
    .get("/system/*", ({ params, request }) => {
      const rel = (params as { "*": string })["*"];
      // Raw uploads wait for processing with their metadata still in: never served.
      if (rel.startsWith("media_uploads/")) throw notFound();
      const served = ctx.storage.served(rel);
      if (served && "redirect" in served) return new Response(null, { status: 302, headers: { location: served.redirect, "access-control-allow-origin": ANY_ORIGIN } });
      return serve(served?.file ?? null, TYPES[rel.slice(rel.lastIndexOf(".") + 1)], request.headers.get("range"));
    })
    // A status's short media link (the attachment's text_url) leads to the original file.
    .get("/media/:shortcode", async ({ params }) => {
      const file = /^[A-Za-z0-9_-]{1,64}$/.test(params.shortcode) ? await ctx.services.statusMedia.publicFileByShortcode(params.shortcode) : null;
      if (!file) throw notFound();
      return new Response(null, { status: 302, headers: { location: ctx.urls.media(file), "access-control-allow-origin": ANY_ORIGIN } });
    })
    .get("/avatars/original/missing.png", () => serve(avatarMissing, "image/png"))
    .get("/headers/original/missing.png", () => serve(headerMissing, "image/png"))
    // Browsers ask for it on every page of ours (the OAuth pages too); a PNG, which they all read.
    .get("/favicon.ico", () => serve(favicon, "image/png"));
}
