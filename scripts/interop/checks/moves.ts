/**
 * Account moves both ways (issue 27), with accounts of their own so that the other checks'
 * follows stay as they are:
 * - GoToSocial → Rookery: alice follows carol@GoToSocial; carol on Rookery names her as alias;
 *   carol moves there on GoToSocial; alice ends up following carol on Rookery.
 * - Rookery → GoToSocial: bob follows dan@Rookery; dan on GoToSocial names him as alias; dan
 *   moves there on Rookery; bob ends up following dan on GoToSocial.
 * GoToSocial's only rule against moving a fresh account is a cooldown between Moves involving
 * the same accounts (5 minutes after an attempt, 7 days after a success); each run has new
 * databases, so it never applies here.
 */
import { G2R, R2G } from "../report.ts";
import { waitFor, type ApiClient } from "../support.ts";
import { expectStatus, type Session } from "./session.ts";

export interface MoveAccounts {
  /** carol on GoToSocial (moves out) and carol on Rookery (where she moves to). */
  carolThere: ApiClient;
  carolHere: ApiClient;
  carolPassword: string;
  /** dan on Rookery (moves out) and dan on GoToSocial (where he moves to). */
  danHere: ApiClient;
  danThere: ApiClient;
  danPassword: string;
  rookeryDomain: string;
  gtsDomain: string;
}

/** The account a handle names, as `client`'s server resolves it (WebFinger, actor). */
async function resolve(client: ApiClient, acct: string): Promise<any> {
  const res = await client.get("/api/v2/search", { query: { q: `@${acct}`, resolve: "true", type: "accounts" } });
  const found = (expectStatus(res, 200, `search of @${acct}`).accounts as any[]).find((a) => a.acct === acct);
  if (!found) throw new Error(`search of @${acct} found ${res.text.slice(0, 200)}`);
  return found;
}

/** An account's actor IRI from its server's WebFinger (the `self` link). */
async function actorUri(client: ApiClient, acct: string): Promise<string> {
  const res = await client.get("/.well-known/webfinger", { query: { resource: `acct:${acct}` }, headers: { accept: "application/jrd+json" } });
  const body = typeof res.body === "string" ? JSON.parse(res.body) : res.body;
  const self = (expectStatus({ ...res, body }, 200, `WebFinger of ${acct}`).links as any[])?.find((l) => l.rel === "self")?.href;
  if (!self) throw new Error(`WebFinger of ${acct} names no actor: ${res.text.slice(0, 200)}`);
  return self;
}

async function relationship(client: ApiClient, id: string): Promise<any> {
  return (expectStatus(await client.get("/api/v1/accounts/relationships", { query: { "id[]": id } }), 200, "relationships") as any[])[0];
}

/**
 * Waits until `follower` follows account `id`; when the follow is a request (GoToSocial's
 * accounts are locked by default, and a redirected follow is a new follow), `followed`
 * authorizes it, as a person would. `followerAcct` is the follower's acct as `followed`'s
 * server shows it (a bare username when both are on one server).
 */
async function followingUntil(s: Session, what: string, follower: ApiClient, id: string, followed: ApiClient, followerAcct: string) {
  let authorized = "";
  const r = await waitFor(
    what,
    async (seen) => {
      const rel = await relationship(follower, id);
      seen.last = `following ${rel.following}, requested ${rel.requested}`;
      if (rel.requested && !authorized) {
        const requests = (await followed.get("/api/v1/follow_requests")).body as any[];
        const request = requests.find?.((a) => a.acct === followerAcct);
        if (request) {
          expectStatus(await followed.post(`/api/v1/follow_requests/${request.id}/authorize`), 200, "authorize");
          authorized = " (a request, authorized)";
        }
      }
      return rel.following ? rel : null;
    },
    s.timeout,
  );
  return { rel: r, authorized };
}

export async function moves(s: Session, m: MoveAccounts) {
  await s.report.check("account move (Move, followers follow the new account)", G2R, async () => {
    const carolAcct = `carol@${m.gtsDomain}`;
    // alice follows the old account.
    const old = await resolve(s.alice, carolAcct);
    expectStatus(await s.alice.post(`/api/v1/accounts/${old.id}/follow`), 200, "follow of the old account");
    await followingUntil(s, `alice to follow ${carolAcct}`, s.alice, old.id, m.carolThere, s.aliceAcct);
    // The new account names the old one; then the old one moves.
    expectStatus(await m.carolHere.post("/api/v1/accounts/alias", { json: { also_known_as_uris: [old.uri] } }), 200, "alias on Rookery");
    const target = expectStatus(await m.carolHere.get("/api/v1/accounts/verify_credentials"), 200, "verify_credentials");
    expectStatus(await m.carolThere.post("/api/v1/accounts/move", { json: { password: m.carolPassword, moved_to_uri: target.uri } }), [200, 202], "move on GoToSocial");
    const { authorized } = await followingUntil(s, "alice to follow carol on Rookery", s.alice, target.id, m.carolHere, "alice");
    const oldRel = await waitFor(
      "alice to stop following the old account",
      async (seen) => {
        const rel = await relationship(s.alice, old.id);
        seen.last = `following ${rel.following}, requested ${rel.requested}`;
        return rel.following || rel.requested ? null : rel;
      },
      s.timeout,
    );
    const oldHere = expectStatus(await s.alice.get(`/api/v1/accounts/${old.id}`), 200, "the old account");
    return `Rookery: alice follows carol@${m.rookeryDomain}${authorized}, not ${carolAcct} (following ${oldRel.following}); the old account shows moved ${oldHere.moved?.acct ?? "(none)"}`;
  });

  await s.report.check("account move (Move, followers follow the new account)", R2G, async () => {
    const danAcct = `dan@${m.rookeryDomain}`;
    const old = await resolve(s.bob, danAcct);
    expectStatus(await s.bob.post(`/api/v1/accounts/${old.id}/follow`), 200, "follow of the old account");
    await followingUntil(s, `bob to follow ${danAcct}`, s.bob, old.id, m.danHere, s.bobAcct);
    // GoToSocial's accounts carry no `uri`: the old one's comes from Rookery, the new one's from WebFinger.
    const oldUri = expectStatus(await m.danHere.get("/api/v1/accounts/verify_credentials"), 200, "verify_credentials").uri;
    expectStatus(await m.danThere.post("/api/v1/accounts/alias", { json: { also_known_as_uris: [oldUri] } }), 200, "alias on GoToSocial");
    const target = expectStatus(await m.danThere.get("/api/v1/accounts/verify_credentials"), 200, "verify_credentials");
    const targetUri = await actorUri(m.danThere, `dan@${m.gtsDomain}`);
    expectStatus(await m.danHere.post("/api/v1/accounts/move", { json: { password: m.danPassword, moved_to_uri: targetUri } }), [200, 202], "move on Rookery");
    const { authorized } = await followingUntil(s, "bob to follow dan on GoToSocial", s.bob, target.id, m.danThere, "bob");
    const oldRel = await waitFor(
      "bob to stop following the old account",
      async (seen) => {
        const rel = await relationship(s.bob, old.id);
        seen.last = `following ${rel.following}, requested ${rel.requested}`;
        return rel.following || rel.requested ? null : rel;
      },
      s.timeout,
    );
    const oldThere = expectStatus(await s.bob.get(`/api/v1/accounts/${old.id}`), 200, "the old account");
    return `GoToSocial: bob follows dan@${m.gtsDomain}${authorized}, not ${danAcct} (following ${oldRel.following}); the old account shows moved ${oldThere.moved?.acct ?? "(none)"}`;
  });
}
