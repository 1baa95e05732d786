import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import type { ArchiveFormat } from "../services/archive/export.ts";
import { requireUser } from "./auth.ts";

const TYPES: Record<ArchiveFormat, string> = { zip: "application/zip", "tar.gz": "application/gzip" };

/**
 * GET /api/v1/exports/archive.zip (and .tar.gz): the signed-in account's archive in Mastodon's
 * layout, streamed as it is written. Mastodon makes it in a background job behind its settings
 * page (/settings/export); here one request answers with it, beside the CSV exports of
 * /api/v1/exports/ (GoToSocial's). Scope `read`: it holds everything the account can read of
 * its own.
 */
export function archiveRoutes(ctx: AppContext) {
  const send = (request: Request, format: ArchiveFormat) => {
    const auth = requireUser(ctx, request, "read");
    return archiveResponse(ctx, auth.accountId, format);
  };
  return new Elysia().get("/api/v1/exports/archive.zip", (c) => send(c.request, "zip")).get("/api/v1/exports/archive.tar.gz", (c) => send(c.request, "tar.gz"));
}

/** The account's archive, streamed as it is written (also the settings' download). */
export async function archiveResponse(ctx: AppContext, accountId: number, format: ArchiveFormat): Promise<Response> {
  const exporter = ctx.services.archiveExport;
  const account = await ctx.services.accounts.get(accountId);
  if (!exporter || !account) throw new ApiError(503, "Archives cannot be written on this server");
  const chunks = exporter.write(account, format);
  // Pulled as the client reads: a slow download holds the writer back; a dropped one ends it.
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": TYPES[format],
      "content-disposition": `attachment; filename="${exporter.fileName(format)}"`,
      "cache-control": "private, no-store",
    },
  });
}
