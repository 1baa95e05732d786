import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AccountRow } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { MOVE_COOLDOWN_MS } from "../services/accounts/moving.ts";
import { aliasesPage, migrationPage } from "../web/settings/moving.ts";
import { field, secret, type MemberPages, type PageRequest } from "./member-pages.ts";
import { bool } from "./params.ts";

/**
 * Moving: the aliases this account comes from (Mastodon's /settings/aliases) and the move to
 * another account or the redirect to it (/settings/migration), over the services the API and
 * the CLI use (GoToSocial's rules and words).
 */
export function settingsMovingRoutes(ctx: AppContext, pages: MemberPages) {
  const { services, config } = ctx;
  const handle = (a: AccountRow) => `@${a.username}@${a.domain ?? config.domain}`;
  const aliases = async ({ viewer, csrf }: PageRequest) => aliasesPage(await services.accountAliases.list(viewer.account.id), handle(viewer.account), csrf);
  const migration = async ({ viewer, csrf }: PageRequest) => {
    const account = (await services.accounts.get(viewer.account.id)) ?? viewer.account;
    const target = account.movedToAccountId === null ? undefined : await services.accounts.get(account.movedToAccountId);
    const until = account.movedAt === null ? null : account.movedAt + MOVE_COOLDOWN_MS;
    return migrationPage(
      { movedTo: target ? handle(target) : null, movedAt: account.movedAt, cooldownUntil: until !== null && until > ctx.clock.now() ? until : null, self: handle(account) },
      csrf,
    );
  };

  return new Elysia()
    .get("/settings/aliases", (c) => pages.show(c, aliases))
    .post("/settings/aliases", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          const given = field(params, "alias") ?? "";
          if (given === "") throw badRequest("Enter the handle or address of the old account.");
          const uri = await services.accountAliases.add(viewer.account.id, given);
          return { notice: `Alias ${uri} added.` };
        },
        aliases,
      ),
    )
    .post("/settings/aliases/remove", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          const removed = await services.accountAliases.remove(viewer.account.id, field(params, "alias") ?? "");
          if (removed === null) throw badRequest("That account is not one of your aliases.");
          return { notice: `Alias ${removed} removed.`, to: "/settings/aliases" };
        },
        aliases,
      ),
    )
    .get("/settings/migration", (c) => pages.show(c, migration))
    .post("/settings/migration", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          const redirectOnly = bool(params.redirect_only, "redirect_only") ?? false;
          const target = await services.accountMoving.move(
            viewer.account.id,
            { target: field(params, "acct"), password: secret(params, "current_password") },
            { checkPassword: true, redirectOnly },
          );
          const to = handle(target);
          return { notice: redirectOnly ? `Your profile now points to ${to}.` : `Your account has moved to ${to}; your followers are being moved.` };
        },
        migration,
      ),
    )
    .post("/settings/migration/cancel", (c) =>
      pages.act(
        c,
        async ({ viewer }) => ({ notice: (await services.accountMoving.cancel(viewer.account.id)) ? "The redirect is cancelled: your profile is yours again." : "Your account did not point anywhere.", to: "/settings/migration" }),
        migration,
      ),
    );
}

