import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import avatarMissing from "../assets/avatar-missing.png" with { type: "file" };
import headerMissing from "../assets/header-missing.png" with { type: "file" };
import favicon from "../assets/favicon.png" with { type: "file" };
import { notFound } from "../errors.ts";

const TYPES: Record<string, string> = {
  webp: "image/webp",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  avif: "image/avif",
  bin: "application/octet-stream",
};

const IMMUTABLE = "public, max-age=31536000, immutable";
/**
 * Uploaded files are public: web clients load them with crossorigin="anonymous" (to read
 * pixels, or because their CSP asks it), which needs this header on the file and its redirect.
 */
const ANY_ORIGIN = "*";

/**
 * Stored media under /system/ and the default pictures. Paths are checked against the
 * shape the server gives its own files, so no request can reach outside DATA_DIR/media.
 */
export function fileRoutes(ctx: AppContext) {
  const serve = async (path: string | null, type: string | undefined) => {
    if (!path || !type) throw notFound();
    const file = Bun.file(path);
    if (!(await file.exists())) throw notFound();
    return new Response(file, {
      headers: { "content-type": type, "cache-control": IMMUTABLE, "access-control-allow-origin": ANY_ORIGIN, "x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'; sandbox" },
    });
  };
  return new Elysia()
    .get("/system/*", ({ params }) => {
      const rel = (params as { "*": string })["*"];
      // Raw uploads wait for processing with their metadata still in: never served.
      if (rel.startsWith("media_uploads/")) throw notFound();
      return serve(ctx.storage.resolve(rel), TYPES[rel.slice(rel.lastIndexOf(".") + 1)]);
    })
    // A status's short media link (the attachment's text_url) leads to the original file.
    .get("/media/:shortcode", ({ params }) => {
      const file = /^[A-Za-z0-9_-]{1,64}$/.test(params.shortcode) ? ctx.services.statusMedia.publicFileByShortcode(params.shortcode) : null;
      if (!file) throw notFound();
      return new Response(null, { status: 302, headers: { location: ctx.urls.media(file), "access-control-allow-origin": ANY_ORIGIN } });
    })
    .get("/avatars/original/missing.png", () => serve(avatarMissing, "image/png"))
    .get("/headers/original/missing.png", () => serve(headerMissing, "image/png"))
    // Browsers ask for it on every page of ours (the OAuth pages too); a PNG, which they all read.
    .get("/favicon.ico", () => serve(favicon, "image/png"));
}
