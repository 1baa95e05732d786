import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { serializeApplication, serializeCredentialApplication } from "../presenters/application.ts";
import { requireToken } from "./auth.ts";
import { input } from "./input.ts";
import { str, strArray } from "./params.ts";

export function appRoutes(ctx: AppContext) {
  const { services, keys } = ctx;
  return new Elysia()
    .post("/api/v1/apps", async (c) => {
      const p = input(c);
      const { app, clientSecret } = await services.applications.register({
        name: str(p.client_name, "client_name"),
        redirectUris: Array.isArray(p.redirect_uris) ? strArray(p.redirect_uris, "redirect_uris") : str(p.redirect_uris, "redirect_uris"),
        // Mastodon ignores an array here (it only permits a string); a list of scopes is too
        // useful to refuse, so it is read as the space-separated string it stands for.
        scopes: Array.isArray(p.scopes) ? strArray(p.scopes, "scopes")?.join(" ") : str(p.scopes, "scopes"),
        website: str(p.website, "website"),
      });
      return serializeCredentialApplication(app, clientSecret, keys.vapidPublicKey);
    })
    .get("/api/v1/apps/verify_credentials", async (c) => {
      const auth = requireToken(ctx, c.request);
      const app = await services.applications.findById(auth.applicationId);
      if (!app) throw notFound();
      return serializeApplication(app, keys.vapidPublicKey);
    });
}
