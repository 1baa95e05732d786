import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import type { AsyncRefreshView } from "../services/async-refreshes.ts";
import { requireUser } from "./auth.ts";

/**
 * Mastodon's AsyncRefreshesConcern: the `Mastodon-Async-Refresh` header of a response whose
 * answer background work is still completing (`id="…", retry=3`, and `result_count=N` when the
 * work counts its results). The client asks the endpoint below, `retry` seconds apart, and
 * asks for the answer again once the work is finished.
 */
export function asyncRefreshHeader(refresh: AsyncRefreshView, retrySeconds = 3): string {
  const count = refresh.resultCount === null ? "" : `, result_count=${refresh.resultCount}`;
  return `id="${refresh.id}", retry=${retrySeconds}${count}`;
}

/** Mastodon's async refresh as JSON: {"async_refresh": {"id", "status", "result_count"}}. */
const asyncRefreshJson = (r: AsyncRefreshView) => ({ async_refresh: { id: r.id, status: r.status, result_count: r.resultCount } });

/** GET /api/v1_alpha/async_refreshes/:id (Api::V1Alpha::AsyncRefreshesController): a user's token with `read`. */
export function asyncRefreshRoutes(ctx: AppContext) {
  return new Elysia().get("/api/v1_alpha/async_refreshes/:id", (c) => {
    requireUser(ctx, c.request, "read");
    const refresh = ctx.services.asyncRefreshes.byPublicId(c.params.id);
    if (!refresh) throw notFound();
    return asyncRefreshJson(refresh);
  });
}
