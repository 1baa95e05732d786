import { expect, test } from "bun:test";
import { createUser } from "./support/fixtures.ts";
import { Client } from "./support/http.ts";
import { startTestServer } from "./support/server.ts";

test("a restart keeps accounts, apps and tokens", async () => {
  const first = await startTestServer();
  const user = await createUser(first, "persistent");
  const http = new Client(first.base);
  const app = await http.post("/api/v1/apps", { json: { client_name: "Keeper", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" } });
  const token = await http.post("/oauth/token", {
    json: { grant_type: "client_credentials", client_id: app.body.client_id, client_secret: app.body.client_secret, scope: "read" },
  });
  await user.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Still here" } });
  const vapidKey = (await http.get("/api/v2/instance")).body.configuration.vapid.public_key;

  const second = await first.restart();
  try {
    const again = new Client(second.base);
    const me = await again.get("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(me.status).toBe(200);
    expect(me.body.display_name).toBe("Still here");
    const appMe = await again.get("/api/v1/apps/verify_credentials", { token: token.body.access_token });
    expect(appMe.body.name).toBe("Keeper");
    const stillClient = await again.post("/oauth/token", {
      json: { grant_type: "client_credentials", client_id: app.body.client_id, client_secret: app.body.client_secret },
    });
    expect(stillClient.status).toBe(200);
    expect((await again.get("/api/v2/instance")).body.configuration.vapid.public_key).toBe(vapidKey);
  } finally {
    await second.close();
  }
});
