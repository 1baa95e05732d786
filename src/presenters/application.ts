import type { ApplicationRow } from "../db/schema.ts";
import { parseScopes } from "../auth/scopes.ts";
import { redirectUrisOf } from "../models/applications.ts";

/** REST::ApplicationSerializer (4.3), without client credentials. */
export function serializeApplication(app: ApplicationRow, vapidKey: string) {
  return {
    id: String(app.id),
    name: app.name,
    website: app.website,
    scopes: parseScopes(app.scopes),
    redirect_uris: redirectUrisOf(app),
    vapid_key: vapidKey,
    redirect_uri: app.redirectUris,
  };
}

/** REST::CredentialApplicationSerializer: the one time the secret is shown. */
export function serializeCredentialApplication(app: ApplicationRow, clientSecret: string, vapidKey: string) {
  return { ...serializeApplication(app, vapidKey), client_id: app.clientId, client_secret: clientSecret };
}
