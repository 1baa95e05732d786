import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { optionalUser, requireUser } from "./auth.ts";

/**
 * Lists that clients fetch at start-up and that Rookery keeps empty: trending statuses and
 * links (it ranks neither), follow suggestions, identity proofs (gone from Mastodon). Clients
 * only fall back on 404, so these answer `[]`, checking the token as Mastodon does.
 */
export function emptyCollectionRoutes(ctx: AppContext) {
  const publicList = ({ request }: { request: Request }) => {
    optionalUser(ctx, request);
    return [];
  };
  const existingAccount = async ({ request, params }: { request: Request; params: { id?: string } }) => {
    optionalUser(ctx, request);
    const id = parseId(params.id);
    if (id === null || !(await ctx.services.accounts.get(id))) throw notFound();
    return [];
  };
  const userList = (scope: string) => ({ request }: { request: Request }) => {
    requireUser(ctx, request, scope);
    return [];
  };
  return new Elysia()
    .get("/api/v1/trends/statuses", publicList)
    .get("/api/v1/trends/links", publicList)
    .get("/api/v2/suggestions", userList("read"))
    .get("/api/v1/suggestions", userList("read"))
    .get("/api/v1/accounts/:id/identity_proofs", existingAccount);
}
