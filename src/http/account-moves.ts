import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { badRequest, notFound } from "../errors.ts";
import { serializeCredentialAccount } from "../presenters/account.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { bool, str, strArray } from "./params.ts";

/**
 * Moving an account, as GoToSocial's API has it: POST /api/v1/accounts/alias sets the accounts
 * this one comes from (alsoKnownAs), POST /api/v1/accounts/move moves it to another account
 * that names it among its aliases. (Mastodon does both in its settings pages, not its API.)
 */
export function accountMoveRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  return new Elysia()
    .post("/api/v1/accounts/alias", async (c) => {
      const auth = requireUser(ctx, c.request, "write:accounts");
      const given = strArray(input(c).also_known_as_uris, "also_known_as_uris");
      // Absent is refused rather than read as "clear them all"; an empty list (or one blank entry, as a form sends it) clears them.
      if (given === undefined) throw badRequest("no also_known_as_uris provided in account alias request");
      const account = await services.accountAliases.set(auth.accountId, given.filter((uri) => uri.trim() !== ""));
      const user = await services.accounts.getUser(auth.accountId);
      if (!user) throw notFound();
      return serializeCredentialAccount(urls, await services.accounts.show(account), user, await services.follows.pendingRequestCount(auth.accountId, 40));
    })
    .post("/api/v1/accounts/move", async (c) => {
      const auth = requireUser(ctx, c.request, "write:accounts");
      const p = input(c);
      // redirect_only (Rookery's, as Mastodon's redirect in its settings): the profile points there, nobody moves.
      const redirectOnly = bool(p.redirect_only, "redirect_only") ?? false;
      await services.accountMoving.move(auth.accountId, { target: str(p.moved_to_uri, "moved_to_uri"), password: str(p.password, "password") }, { checkPassword: true, redirectOnly });
      return new Response(JSON.stringify({ message: "accepted" }), { status: 202, headers: { "content-type": "application/json; charset=utf-8" } });
    });
}
