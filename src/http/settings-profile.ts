import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { POLICY_FIELDS, type PolicyField } from "../services/notifications/policy.ts";
import { notificationPolicyPage } from "../web/settings/notifications.ts";
import { preferencesPage, profilePage } from "../web/settings/profile.ts";
import { field, type MemberPages, type PageRequest } from "./member-pages.ts";
import { bool } from "./params.ts";

/**
 * /settings/profile (who finds the account), /settings/preferences (posting defaults) and
 * /settings/notifications (Mastodon's notification policy): the same services as the API's
 * update_credentials and PATCH /api/v2/notifications/policy, so the same rules and words.
 */
export function settingsProfileRoutes(ctx: AppContext, pages: MemberPages) {
  const { services } = ctx;
  const profile = async ({ viewer, csrf }: PageRequest) => {
    const account = (await services.accounts.get(viewer.account.id)) ?? viewer.account;
    return profilePage(account, csrf);
  };
  const preferences = async ({ viewer, csrf }: PageRequest) => {
    const user = (await services.accounts.getUser(viewer.account.id)) ?? viewer.user;
    return preferencesPage({ privacy: user.defaultPrivacy, quotePolicy: user.defaultQuotePolicy, language: user.defaultLanguage, sensitive: user.defaultSensitive }, csrf);
  };
  const policy = async ({ viewer, csrf }: PageRequest) => notificationPolicyPage(await services.notificationPolicies.get(viewer.account.id), csrf);

  return new Elysia()
    .get("/settings/profile", (c) => pages.show(c, profile))
    .post("/settings/profile", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          await services.accounts.updateCredentials(viewer.account.id, {
            discoverable: bool(params.discoverable, "discoverable"),
            indexable: bool(params.indexable, "indexable"),
            hideCollections: bool(params.hide_collections, "hide_collections"),
            locked: bool(params.locked, "locked"),
            bot: bool(params.bot, "bot"),
          });
          return { notice: "Changes successfully saved!" };
        },
        profile,
      ),
    )
    .get("/settings/preferences", (c) => pages.show(c, preferences))
    .post("/settings/preferences", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          await services.accounts.updateCredentials(viewer.account.id, {
            privacy: field(params, "privacy"),
            quotePolicy: field(params, "quote_policy"),
            language: field(params, "language"),
            sensitive: bool(params.sensitive, "sensitive"),
          });
          return { notice: "Changes successfully saved!" };
        },
        preferences,
      ),
    )
    .get("/settings/notifications", (c) => pages.show(c, policy))
    .post("/settings/notifications", (c) =>
      pages.act(
        c,
        async ({ viewer, params }) => {
          const changes: Partial<Record<PolicyField, string>> = {};
          for (const name of POLICY_FIELDS) changes[name] = field(params, name);
          await services.notificationPolicies.update(viewer.account.id, changes);
          return { notice: "Changes successfully saved!" };
        },
        policy,
      ),
    );
}
