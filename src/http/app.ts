import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError, notFound, OwnersWork } from "../errors.ts";
import { log } from "../log.ts";
import { isReadOnlyRefusal } from "../db/errors.ts";
import { accountRoutes } from "./accounts.ts";
import { accountMoveRoutes } from "./account-moves.ts";
import { appRoutes } from "./apps.ts";
import { archiveRoutes } from "./archive.ts";
import { emptyCollectionRoutes } from "./empty-collections.ts";
import { fileRoutes } from "./files.ts";
import { conversationRoutes } from "./conversations.ts";
import { filterRoutes } from "./filters.ts";
import { followRequestRoutes } from "./follow-requests.ts";
import { listRoutes } from "./lists.ts";
import { parseBody } from "./input.ts";
import { UploadFolder } from "./multipart-body.ts";
import { InvalidParam } from "./params.ts";
import { instanceRoutes } from "./instance.ts";
import { oauthRoutes } from "./oauth.ts";
import { mediaRoutes } from "./media.ts";
import { moderationRoutes } from "./moderation.ts";
import { webRoutes } from "./web.ts";
import { pushRoutes } from "./push.ts";
import { directoryRoutes } from "./directory.ts";
import { endorsementRoutes } from "./endorsements.ts";
import { featuredTagRoutes } from "./featured-tags.ts";
import { reportRoutes } from "./reports.ts";
import { announcementRoutes } from "./announcements.ts";
import { trendRoutes } from "./trends.ts";
import { memberSignInRoutes } from "./member-sign-in.ts";
import { settingsRoutes } from "./settings.ts";
import { adminPageRoutes } from "./admin-pages.ts";
import { inviteRoutes } from "./invites.ts";
import { domainBlockRoutes } from "./domain-blocks.ts";
import { exportRoutes } from "./exports.ts";
import { importRoutes } from "./imports.ts";
import { notificationRoutes } from "./notifications.ts";
import { notificationV2Routes } from "./notifications-v2.ts";
import { notificationRequestRoutes } from "./notification-requests.ts";
import { pollRoutes } from "./polls.ts";
import { preferenceRoutes } from "./preferences.ts";
import { scheduledStatusRoutes } from "./scheduled-statuses.ts";
import { statusActionRoutes } from "./status-actions.ts";
import { statusRoutes } from "./statuses.ts";
import { asyncRefreshRoutes } from "./async-refreshes.ts";
import { searchRoutes } from "./search.ts";
import { statusEditRoutes } from "./status-edits.ts";
import { quoteRoutes } from "./quotes.ts";
import { timelineRoutes } from "./timelines.ts";
import { getMeta } from "./request-meta.ts";
import { pathOf } from "./body-limits.ts";
import { adminAccountRoutes } from "./admin-accounts.ts";
import { adminReportRoutes } from "./admin-reports.ts";
import { adminDomainRoutes } from "./admin-domains.ts";
import { NEEDS_OWNER, OWNERS_WORK } from "./read-routes.ts";

function errorResponse(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", ...headers } });
}

// Resources mounted as one plugin each, their route types erased: nothing reads them (no typed
// client), and one chain of every module's types is deeper than TypeScript will instantiate.
function startUpRoutes(ctx: AppContext) {
  return new Elysia()
    .use(endorsementRoutes(ctx))
    .use(featuredTagRoutes(ctx))
    .use(reportRoutes(ctx))
    .use(announcementRoutes(ctx))
    .use(trendRoutes(ctx))
    .use(exportRoutes(ctx))
    .use(importRoutes(ctx)) as unknown as Elysia;
}

/** Mastodon's admin API: accounts, reports, domain blocks and allows. */
function adminApi(ctx: AppContext) {
  return new Elysia().use(adminAccountRoutes(ctx)).use(adminReportRoutes(ctx)).use(adminDomainRoutes(ctx)) as unknown as Elysia;
}

/** The signed-in pages with their sign-in form: every account's /settings and staff's /admin (one use: Elysia's types grow with each). */
function memberPages(ctx: AppContext) {
  return new Elysia().use(settingsRoutes(ctx)).use(adminPageRoutes(ctx)).use(memberSignInRoutes(ctx)) as unknown as Elysia;
}

function notificationsApi(ctx: AppContext) {
  return new Elysia().use(notificationRequestRoutes(ctx)).use(notificationRoutes(ctx)).use(notificationV2Routes(ctx)) as unknown as Elysia;
}

/**
 * A path with an escape that is no UTF-8 (`%FF`, a lone `%`). The router hands a route such a
 * parameter as null instead of refusing it, which every route would have to guard against.
 */
function malformedEscape(url: string): boolean {
  const path = pathOf(url);
  if (!path.includes("%")) return false;
  try {
    decodeURIComponent(path);
    return false;
  } catch {
    return true;
  }
}

/** The router: every resource module, one body parser, one error renderer. */
export function createApp(ctx: AppContext) {
  const uploads = new UploadFolder(ctx.config.dataDir);
  // The path starts at the first slash after the host (not at index 11, Elysia's default):
  // with a Host shorter than four characters the router would otherwise route a later part
  // of the path than the one the edge classifies and rate-limits.
  return new Elysia({ handler: { standardHostname: false } })
    // Before routing and before any body is read: no record is named by such a path (as v1's
    // ids). The router decodes every parameter once; a route never decodes one again.
    .onRequest(({ request }) => {
      if (malformedEscape(request.url)) throw notFound();
    })
    .onParse(({ request, contentType }) => parseBody(request, contentType ?? "", uploads))
    .onError(({ error, code, request }) => {
      // Elysia wraps what the parse hook throws; our own refusals keep their words.
      const cause = code === "PARSE" ? (error as Error).cause : undefined;
      if (cause instanceof ApiError) return errorResponse(cause.status, cause.body, cause.headers);
      if (error instanceof InvalidParam && (request.method === "GET" || request.method === "HEAD")) {
        const refusal = error.forRead();
        return errorResponse(refusal.status, refusal.body);
      }
      if (error instanceof ApiError) return errorResponse(error.status, error.body, error.headers);
      if (code === "NOT_FOUND") return errorResponse(404, { error: "Record not found" });
      if (code === "PARSE") return errorResponse(400, { error: "Error occurred while parsing request parameters" });
      if (code === "VALIDATION") return errorResponse(422, { error: "Validation failed: invalid parameters" });
      // A read of a serving thread that tried to write (its connection is read-only): the
      // thread passes the request to the main thread (src/http/read-routes.ts).
      if (isReadOnlyRefusal(error)) return errorResponse(500, { error: "There was a problem processing your request" }, { [NEEDS_OWNER]: "1" });
      // A read that would set off the main thread's work (a thread's fill): passed on, as planned.
      if (error instanceof OwnersWork) return errorResponse(500, { error: "There was a problem processing your request" }, { [NEEDS_OWNER]: OWNERS_WORK });
      // First line only: driver errors append the statement's parameters (e-mails, hashes).
      const message = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).split("\n")[0];
      log("error", "unhandled error", {
        request_id: getMeta(request).id,
        error: message,
        stack: error instanceof Error ? error.stack?.split("\n").slice(1, 4).join(" | ") : undefined,
      });
      return errorResponse(500, { error: "There was a problem processing your request" });
    })
    .get("/api/v1/streaming/health", () => new Response("OK", { headers: { "content-type": "text/plain; charset=utf-8" } }))
    .use(oauthRoutes(ctx))
    .use(appRoutes(ctx))
    .use(accountRoutes(ctx))
    .use(accountMoveRoutes(ctx))
    .use(followRequestRoutes(ctx))
    .use(moderationRoutes(ctx))
    .use(domainBlockRoutes(ctx))
    .use(pushRoutes(ctx))
    .use(directoryRoutes(ctx))
    .use(startUpRoutes(ctx))
    .use(statusApi(ctx))
    .use(mediaRoutes(ctx))
    .use(scheduledStatusRoutes(ctx))
    .use(timelineRoutes(ctx))
    .use(searchRoutes(ctx))
    .use(listRoutes(ctx))
    .use(conversationRoutes(ctx))
    .use(filterRoutes(ctx))
    .use(notificationsApi(ctx))
    .use(adminApi(ctx))
    .use(preferenceRoutes(ctx))
    .use(archiveRoutes(ctx))
    .use(inviteRoutes(ctx))
    .use(instanceRoutes(ctx))
    .use(emptyCollectionRoutes(ctx))
    .use(fileRoutes(ctx))
    .use(memberPages(ctx))
    // Last: its /:handle routes answer only @name paths, after every fixed path above.
    .use(webRoutes(ctx));
}

/**
 * The status resources as one plugin: a chain of every route module in createApp grows past
 * TypeScript's instantiation depth (TS2589), so related modules are grouped.
 */
function statusApi(ctx: AppContext) {
  return new Elysia()
    .use(statusRoutes(ctx))
    .use(asyncRefreshRoutes(ctx))
    .use(statusEditRoutes(ctx))
    .use(statusActionRoutes(ctx))
    .use(quoteRoutes(ctx))
    .use(pollRoutes(ctx));
}

export type App = ReturnType<typeof createApp>;
