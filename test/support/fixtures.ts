import type { AccountRow, ApplicationRow } from "../../src/db/schema.ts";
import { parseScopes } from "../../src/auth/scopes.ts";
import { Client } from "./http.ts";
import type { TestServer } from "./server.ts";

export const PASSWORD = "correct horse battery staple";

export interface TestUser {
  account: AccountRow;
  id: string;
  token: string;
  client: Client;
  app: ApplicationRow;
  /** The app's client secret (for /oauth/revoke and the like). */
  clientSecret: string;
}

/** An app registered through the service (the same code POST /api/v1/apps runs). */
export async function registerApp(server: TestServer, scopes = "read write follow push", redirectUris = "urn:ietf:wg:oauth:2.0:oob") {
  return await server.ctx.services.applications.register({ name: "Test client", redirectUris, scopes });
}

/** An account made as the admin CLI makes it, and a user token for it. */
export async function createUser(server: TestServer, username: string, options: { scopes?: string; locked?: boolean } = {}): Promise<TestUser> {
  const { services } = server.ctx;
  const account = await services.accounts.create({ username, email: `${username.toLowerCase()}@example.test`, password: PASSWORD }, { api: false });
  if (options.locked) await services.accounts.updateCredentials(account.id, { locked: true });
  const scopes = options.scopes ?? "read write follow push";
  const { app, clientSecret } = await registerApp(server, scopes);
  const { accessToken } = await services.tokens.issue(app.id, account.id, parseScopes(scopes));
  return { account, id: String(account.id), token: accessToken, client: new Client(server.base, accessToken), app, clientSecret };
}

/** A token of an app alone (client_credentials). */
export async function appToken(server: TestServer, scopes = "read write") {
  const { app, clientSecret } = await registerApp(server, scopes);
  const { accessToken } = await server.ctx.services.tokens.issue(app.id, null, parseScopes(scopes));
  return { app, clientSecret, token: accessToken };
}

/** Posts a status through the API and insists it worked. */
export async function postStatus(user: TestUser, body: Record<string, unknown>) {
  const res = await user.client.post("/api/v1/statuses", { json: body });
  if (res.status !== 200) throw new Error(`posting failed (${res.status}): ${JSON.stringify(res.body)}`);
  return res.body as { id: string; [key: string]: any };
}
