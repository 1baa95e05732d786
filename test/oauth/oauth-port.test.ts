import { afterEach, describe, expect, test } from "bun:test";
import type { DomainEvent } from "../../src/infra/events.ts";
import { EventBus } from "../../src/infra/events.ts";
import { ApplicationService } from "../../src/services/oauth/applications.ts";
import { GrantService, OAuthError, type AuthorizationRequest } from "../../src/services/oauth/grants.ts";
import { TokenService } from "../../src/services/oauth/tokens.ts";
import { WebSessionService } from "../../src/services/oauth/web-sessions.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * OAuth on the database port (issue 31): applications, codes and grants, tokens and web sessions
 * run on SQLite and on PostgreSQL. The API's behaviour is tested over HTTP in oauth.test.ts,
 * oauth-pages.test.ts and the settings' security pages; this holds the family's SQL on both.
 * `authenticate` (asked by the edge before routing) and the sessions' `accountFor` are asked here too.
 */

afterEach(closePortArms);

const CALLBACK = "https://app.example/callback";

async function oauth(arm: PortArm) {
  const { t, port } = arm;
  // A bus of its own: the token.revoked event is heard here, not by the SQLite arm's listeners.
  const events = new EventBus(port);
  const revoked: number[] = [];
  events.within("token.revoked", (e: Extract<DomainEvent, { type: "token.revoked" }>) => void revoked.push(e.tokenId));
  const applications = new ApplicationService(port, t.ids, t.clock);
  const tokens = new TokenService(port, t.ids, t.clock, events);
  const grants = new GrantService(port, t.ids, t.clock, applications, tokens, t.services.accounts, () => false);
  const sessions = new WebSessionService(port, t.ids, t.clock);
  const alice = await arm.mirror(await t.local("alice"));
  const bob = await arm.mirror(await t.local("bob"));
  // Their users too, which a token's lookup reads (approval) on the arm's database.
  if (port !== t.database.port) {
    for (const id of [alice.id, bob.id]) await port.orm.insert(port.tables.users).values((await t.services.accounts.getUser(id))!);
  }
  return { port, applications, tokens, grants, sessions, revoked, alice, bob, clock: t.clock };
}

const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`OAuth on ${arm.name}`, () => {
    test("an app registers and is found by id and by client id; its secret authenticates it, another does not; a bad registration stores nothing", async () => {
      const a = await arm.open();
      const { applications } = await oauth(a);
      const { app, clientSecret } = await applications.register({ name: " Pocket ", redirectUris: [CALLBACK, "urn:ietf:wg:oauth:2.0:oob"], scopes: "read write", website: "https://pocket.example" });
      expect(app).toMatchObject({ name: "Pocket", redirectUris: `${CALLBACK}\nurn:ietf:wg:oauth:2.0:oob`, scopes: "read write", website: "https://pocket.example" });
      expect(await applications.findById(app.id)).toEqual(app);
      expect(await applications.findByClientId(app.clientId)).toEqual(app);
      expect(await applications.findByClientId("")).toBeUndefined();
      expect(await applications.authenticateClient(app.clientId, clientSecret)).toEqual(app);
      expect(await applications.authenticateClient(app.clientId, "wrong")).toBeUndefined();
      expect(await applications.findById(404)).toBeUndefined();

      const refused = await applications.register({ name: "", redirectUris: "javascript:alert(1)", scopes: "read" }).catch((e: Error) => e);
      expect((refused as Error).message).toBe("Validation failed: Application name can't be blank, Redirect URI is forbidden by the server.");
      expect(await count(a, "applications")).toBe(1);
    });

    test("a code is issued and redeemed once for a token; a replay takes the token back; the authorised apps list it and revoking the app ends its tokens and codes", async () => {
      const a = await arm.open();
      const { applications, grants, tokens, revoked, alice, bob } = await oauth(a);
      const { app, clientSecret } = await applications.register({ name: "Pocket", redirectUris: CALLBACK, scopes: "read write push" });
      const request: AuthorizationRequest = await grants.validateAuthorization({ client_id: app.clientId, redirect_uri: CALLBACK, response_type: "code", scope: "read write" });
      expect(request).toMatchObject({ redirectUri: CALLBACK, scopes: ["read", "write"] });
      const code = await grants.issueCode(request, alice.id);
      const redeem = () => grants.token({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: app.clientId, client_secret: clientSecret }, {});
      const token = await redeem();
      expect(token).toMatchObject({ token_type: "Bearer", scope: "read write" });

      // The same code again: refused, and the token it gave is revoked.
      const replay = await redeem().catch((e: OAuthError) => e);
      expect(replay).toBeInstanceOf(OAuthError);
      expect((replay as OAuthError).error).toBe("invalid_grant");
      expect(revoked).toHaveLength(1);
      expect(await tokens.revoke(token.access_token, app.id)).toBe("unknown");

      // Two live tokens of alice's, one of bob's, an unused code: the page lists alice's once.
      const first = await tokens.issue(app.id, alice.id, ["read"]);
      a.t.clock.advance(1000);
      const second = await tokens.issue(app.id, alice.id, ["read", "push"]);
      await tokens.issue(app.id, bob.id, ["read"]);
      await grants.issueCode(request, alice.id);
      expect(await tokens.authorizedApps(alice.id)).toEqual([
        { applicationId: app.id, name: "Pocket", website: null, scopes: ["read", "push"], authorizedAt: first.auth.createdAt, tokens: 2 },
      ]);
      expect(second.auth.createdAt).toBe(first.auth.createdAt + 1000);

      expect(await tokens.revokeApp(alice.id, app.id)).toBe(2);
      expect(await tokens.authorizedApps(alice.id)).toEqual([]);
      expect(await tokens.revokeApp(alice.id, app.id)).toBe(0);
      expect(await a.port.all("SELECT id FROM oauth_authorization_codes WHERE used_at IS NULL")).toEqual([]);
      expect((await tokens.authorizedApps(bob.id)).map((x) => x.tokens)).toEqual([1]);
    });

    test("client credentials give an app token; /oauth/revoke's rules: another app's token is foreign, a bad secret is refused and revokes nothing", async () => {
      const a = await arm.open();
      const { applications, grants, tokens, revoked, alice } = await oauth(a);
      const mine = await applications.register({ name: "Mine", redirectUris: CALLBACK, scopes: "read" });
      const theirs = await applications.register({ name: "Theirs", redirectUris: CALLBACK, scopes: "read" });
      const appToken = await grants.token({ grant_type: "client_credentials", client_id: mine.app.clientId, client_secret: mine.clientSecret }, {});
      expect(appToken.scope).toBe("read");
      const theirToken = (await tokens.issue(theirs.app.id, alice.id, ["read"])).accessToken;

      const wrongSecret = await grants.revoke(theirToken, { clientId: theirs.app.clientId, clientSecret: "nope" }, {}).catch((e: OAuthError) => e);
      expect((wrongSecret as OAuthError).error).toBe("unauthorized_client");
      const foreign = await grants.revoke(theirToken, { clientId: mine.app.clientId, clientSecret: mine.clientSecret }, {}).catch((e: OAuthError) => e);
      expect((foreign as OAuthError).error).toBe("unauthorized_client");
      expect(revoked).toEqual([]);
      expect(await a.port.all("SELECT id FROM oauth_access_tokens WHERE revoked_at IS NOT NULL")).toEqual([]);

      await grants.revoke(theirToken, { clientId: theirs.app.clientId, clientSecret: theirs.clientSecret }, {});
      expect(revoked).toHaveLength(1);
      expect(await tokens.revoke(theirToken, theirs.app.id)).toBe("unknown");
      const badClient = await grants.token({ grant_type: "client_credentials", client_id: mine.app.clientId, client_secret: "nope" }, {}).catch((e: OAuthError) => e);
      expect((badClient as OAuthError).error).toBe("invalid_client");
      expect(await count(a, "oauth_access_tokens")).toBe(2);
    });

    test("web sessions: created, listed newest first with the asking one marked, one revoked, another's refused, one signed out", async () => {
      const a = await arm.open();
      const { sessions, alice, bob, clock } = await oauth(a);
      const first = await sessions.create(alice.id, { userAgent: "Firefox", ip: "192.0.2.1" });
      clock.advance(1000);
      const second = await sessions.create(alice.id, { userAgent: "x".repeat(400) });
      const bobs = await sessions.create(bob.id);
      const listed = await sessions.list(alice.id, second);
      expect(listed.map((s) => [s.userAgent.length, s.ip, s.current])).toEqual([
        [300, null, true],
        [7, "192.0.2.1", false],
      ]);
      // Bob's session is not alice's to end.
      const bobsId = (await sessions.list(bob.id))[0]!.id;
      expect(await sessions.revoke(alice.id, bobsId)).toBe(false);
      expect(await sessions.list(bob.id, bobs)).toHaveLength(1);
      expect(await sessions.revoke(alice.id, listed[1]!.id)).toBe(true);
      expect((await sessions.list(alice.id)).map((s) => s.id)).toEqual([listed[0]!.id]);
      await sessions.destroy(second);
      await sessions.destroy(undefined);
      expect(await sessions.list(alice.id)).toEqual([]);
      expect(first).not.toBe(second);
      // A new sign-in clears the expired ones.
      clock.advance(15 * 24 * 60 * 60 * 1000);
      await sessions.create(alice.id);
      expect(await count(a, "web_sessions")).toBe(1);
    });

    test("a token is authenticated and kept; revoked, it is refused; a pending or suspended user's is refused with the reason; revokeAllFor ends every live one", async () => {
      const a = await arm.open();
      const { applications, tokens, revoked, alice, bob } = await oauth(a);
      const { app } = await applications.register({ name: "Pocket", redirectUris: CALLBACK, scopes: "read write" });
      const issued = await tokens.issue(app.id, alice.id, ["read", "write"]);
      const auth = await tokens.authenticate(issued.accessToken);
      expect(auth).toMatchObject({ tokenId: issued.auth.tokenId, applicationId: app.id, accountId: alice.id, scopes: ["read", "write"], refusal: null });
      expect(await tokens.authenticate(issued.accessToken)).toBe(auth!);
      // Kept: the edge's synchronous question answers it without a read.
      expect(tokens.known(issued.accessToken)).toBe(auth!);
      expect(tokens.known("not a token")).toBeUndefined();
      expect(await tokens.authenticate("not a token")).toBeNull();
      expect(await tokens.authenticate("")).toBeNull();
      expect(await tokens.authenticate("x".repeat(513))).toBeNull();

      // An app's own token speaks for no account, and nobody refuses it.
      const appOnly = await tokens.issue(app.id, null, ["read"]);
      expect(await tokens.authenticate(appOnly.accessToken)).toMatchObject({ accountId: null, refusal: null });

      // Standing, read with the token once the account's tokens are forgotten.
      await a.port.run("UPDATE users SET approved = ? WHERE account_id = ?", [false, alice.id]);
      tokens.forgetAccount(alice.id);
      expect(await tokens.authenticate(issued.accessToken)).toMatchObject({ refusal: "Your login is currently pending approval", pending: true });
      await a.port.run("UPDATE users SET approved = ? WHERE account_id = ?", [true, alice.id]);
      await a.port.run("UPDATE accounts SET suspended_at = ? WHERE id = ?", [1, alice.id]);
      tokens.forgetAccount(alice.id);
      expect(await tokens.authenticate(issued.accessToken)).toMatchObject({ refusal: "Your login is currently disabled" });
      await a.port.run("UPDATE accounts SET suspended_at = NULL WHERE id = ?", [alice.id]);
      tokens.forgetAccount(alice.id);
      expect((await tokens.authenticate(issued.accessToken))!.refusal).toBeNull();

      expect(await tokens.revoke(issued.accessToken, app.id)).toBe("revoked");
      expect(tokens.known(issued.accessToken)).toBeUndefined();
      expect(await tokens.authenticate(issued.accessToken)).toBeNull();

      const bobs = [await tokens.issue(app.id, bob.id, ["read"]), await tokens.issue(app.id, bob.id, ["write"])];
      for (const t of bobs) expect((await tokens.authenticate(t.accessToken))!.accountId).toBe(bob.id);
      revoked.length = 0;
      expect(await tokens.revokeAllFor(bob.id)).toBe(2);
      expect(revoked.sort()).toEqual(bobs.map((t) => t.auth.tokenId).sort());
      for (const t of bobs) expect(await tokens.authenticate(t.accessToken)).toBeNull();
      expect(await tokens.revokeAllFor(bob.id)).toBe(0);
      // The app's token was not bob's: still live.
      expect(await tokens.authenticate(appOnly.accessToken)).not.toBeNull();
    });

    test("web sessions: the cookie's account, unknown and expired ones none; the others signed out but the asking browser; every one ended", async () => {
      const a = await arm.open();
      const { sessions, alice, bob, clock } = await oauth(a);
      const first = await sessions.create(alice.id);
      const second = await sessions.create(alice.id);
      const bobs = await sessions.create(bob.id);
      expect(await sessions.accountFor(first)).toBe(alice.id);
      expect(await sessions.accountFor(bobs)).toBe(bob.id);
      expect(await sessions.accountFor("unknown")).toBeNull();
      expect(await sessions.accountFor(undefined)).toBeNull();
      expect(await sessions.accountFor("x".repeat(129))).toBeNull();

      expect(await sessions.revokeOthers(alice.id, second)).toBe(1);
      expect(await sessions.accountFor(first)).toBeNull();
      expect(await sessions.accountFor(second)).toBe(alice.id);
      expect(await sessions.accountFor(bobs)).toBe(bob.id);

      await sessions.destroyAllFor(alice.id);
      expect(await sessions.accountFor(second)).toBeNull();
      expect(await sessions.accountFor(bobs)).toBe(bob.id);
      clock.advance(15 * 24 * 60 * 60 * 1000);
      expect(await sessions.accountFor(bobs)).toBeNull();
    });
  });
}
