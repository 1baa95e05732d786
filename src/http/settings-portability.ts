import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { ExportStats } from "../models/imports.ts";
import { EXPORT_FILES, type ExportKind } from "../services/portability/exports.ts";
import { IMPORT_TYPES } from "../services/portability/formats.ts";
import { exportPage, importPage, importReportPage } from "../web/settings/portability.ts";
import { archiveResponse } from "./archive.ts";
import { csvResponse, FILES } from "./exports.ts";
import { field, type MemberPages, type PageRequest } from "./member-pages.ts";
import { file, pathId } from "./params.ts";

const LABELS: Record<ExportKind, [label: string, count: keyof ExportStats]> = {
  following: ["Follows", "followingCount"],
  followers: ["Followers", "followersCount"],
  lists: ["Lists", "listsCount"],
  blocks: ["Blocks", "blocksCount"],
  mutes: ["Mutes", "mutesCount"],
  domain_blocks: ["Domain blocks", "domainBlocksCount"],
  bookmarks: ["Bookmarks", "bookmarksCount"],
};

/**
 * Importing and exporting (Mastodon's /settings/import and /settings/export): the CSV import
 * queued as POST /api/v1/import queues it, its progress as GET /api/v1/imports reads it, and
 * the same files and archive the export API streams, downloaded with the browser's session.
 */
export function settingsPortabilityRoutes(ctx: AppContext, pages: MemberPages) {
  const { services } = ctx;
  const imports = async ({ viewer, csrf }: PageRequest) => importPage(await services.imports.list(viewer.account.id), IMPORT_TYPES, csrf);
  const exports = async ({ viewer }: PageRequest) => {
    const stats = await services.exports.stats(viewer.account.id);
    const files = FILES.map(([path, kind]) => ({ href: `/settings/export/${path}`, label: LABELS[kind][0], count: stats[LABELS[kind][1]] }));
    return exportPage(files, services.archiveExport !== null, stats);
  };

  let app = new Elysia()
    .get("/settings/import", (c) => pages.show(c, imports))
    .post("/settings/import", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          const data = file(params.data, "data");
          const view = await services.imports.submit(viewer.account.id, {
            type: field(params, "type"),
            mode: field(params, "mode"),
            data: data ? new Uint8Array(await data.arrayBuffer()) : null,
          });
          return { notice: `Your file was uploaded: ${view.total === 1 ? "1 entry" : `${view.total} entries`} will be imported.`, to: "/settings/import" };
        },
        imports,
      ),
    )
    .get("/settings/imports/:id", (c) => pages.show(c, async ({ viewer }) => importReportPage(await services.imports.show(viewer.account.id, pathId(c.params.id)))))
    .get("/settings/export", (c) => pages.show(c, exports))
    .get("/settings/export/archive.zip", (c) => download(c.request, (accountId) => archiveResponse(ctx, accountId, "zip")))
    .get("/settings/export/archive.tar.gz", (c) => download(c.request, (accountId) => archiveResponse(ctx, accountId, "tar.gz"))) as unknown as Elysia;
  for (const [path, kind] of FILES) {
    app = app.get(`/settings/export/${path}`, (c) => download(c.request, (accountId) => csvResponse(services.exports.lines(accountId, kind), EXPORT_FILES[kind]))) as unknown as Elysia;
  }
  return app;

  /** A file of the signed-in member's (a GET: it changes nothing, so it needs no ticket). */
  async function download(request: Request, respond: (accountId: number) => Response | Promise<Response>): Promise<Response> {
    const viewer = await pages.guard(request);
    if (viewer instanceof Response) return viewer;
    return respond(viewer.account.id);
  }
}
