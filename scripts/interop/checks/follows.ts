/** Accounts found by handle, follows both ways (each Accepted by the other side), unfollows. */
import { G2R, R2G } from "../report.ts";
import { waitFor } from "../support.ts";
import { expectStatus, need, relationshipUntil, rookeryRel, type Session } from "./session.ts";

/**
 * alice follows bob. GoToSocial makes accounts locked by default, so bob authorizes the
 * request on his side when it shows up there; answers whether he had to.
 */
export async function followGtsFromRookery(s: Session): Promise<string> {
  const bobHere = need(s.bobHere, "bob's account on Rookery");
  expectStatus(await s.alice.post(`/api/v1/accounts/${bobHere}/follow`), 200, "follow");
  let authorized = "";
  await waitFor(
    "alice's follow of bob to be accepted",
    async (seen) => {
      const r = await rookeryRel(s);
      seen.last = `following ${r.following}, requested ${r.requested}`;
      if (r.requested && !authorized) {
        const requests = await s.bob.get("/api/v1/follow_requests");
        const request = (requests.body as any[]).find?.((a) => a.acct === s.aliceAcct);
        if (request) {
          expectStatus(await s.bob.post(`/api/v1/follow_requests/${request.id}/authorize`), 200, "authorize");
          authorized = " after bob authorized the request";
        }
      }
      return r.following;
    },
    s.timeout,
  );
  return authorized;
}

/** bob follows alice (not locked: Rookery accepts at once). */
export async function followRookeryFromGts(s: Session) {
  const aliceThere = need(s.aliceThere, "alice's account on GoToSocial");
  expectStatus(await s.bob.post(`/api/v1/accounts/${aliceThere}/follow`), 200, "follow");
  return relationshipUntil(s, "gts", "bob's follow of alice to be accepted", (r) => r.following);
}

export async function lookupsAndFollows(s: Session) {
  const { report, alice, bob, aliceAcct, bobAcct } = s;
  await report.check("account lookup by handle (WebFinger, actor)", R2G, async () => {
    const account = expectStatus(await alice.get("/api/v1/accounts/lookup", { query: { acct: bobAcct } }), 200, `lookup of ${bobAcct}`);
    if (account.acct !== bobAcct) throw new Error(`acct ${account.acct}`);
    s.bobHere = account.id;
    return `${bobAcct} found: uri ${account.uri}, locked ${account.locked}`;
  });
  await report.check("account lookup by handle (WebFinger, actor)", G2R, async () => {
    const res = await bob.get("/api/v2/search", { query: { q: `@${aliceAcct}`, resolve: "true", type: "accounts" } });
    const found = expectStatus(res, 200, `search of @${aliceAcct}`).accounts?.[0];
    if (!found || found.acct !== aliceAcct) throw new Error(`search found ${JSON.stringify(res.body).slice(0, 200)}`);
    s.aliceThere = found.id;
    return `@${aliceAcct} found: url ${found.url}, display name "${found.display_name}"`;
  });

  await report.check("follow + Accept", R2G, async () => {
    const authorized = await followGtsFromRookery(s);
    const there = await relationshipUntil(s, "gts", "bob to see alice as follower", (r) => r.followed_by);
    return `Rookery: alice follows bob (Accept received${authorized}); GoToSocial: followed_by ${there.followed_by}`;
  });
  await report.check("follow + Accept", G2R, async () => {
    await followRookeryFromGts(s);
    const here = await relationshipUntil(s, "rookery", "alice to see bob as follower", (r) => r.followed_by);
    return `GoToSocial: bob follows alice (Accept received); Rookery: followed_by ${here.followed_by}`;
  });
}

/** Unfollows both ways (Undo of the Follow); run late, the block checks follow again. */
export async function unfollows(s: Session) {
  const { report, alice, bob } = s;
  await report.check("unfollow (Undo Follow)", R2G, async () => {
    expectStatus(await alice.post(`/api/v1/accounts/${need(s.bobHere, "bob on Rookery")}/unfollow`), 200, "unfollow");
    const there = await relationshipUntil(s, "gts", "bob to lose alice as follower", (r) => !r.followed_by);
    return `GoToSocial: followed_by ${there.followed_by}`;
  });
  await report.check("unfollow (Undo Follow)", G2R, async () => {
    expectStatus(await bob.post(`/api/v1/accounts/${need(s.aliceThere, "alice on GoToSocial")}/unfollow`), 200, "unfollow");
    const here = await relationshipUntil(s, "rookery", "alice to lose bob as follower", (r) => !r.followed_by);
    return `Rookery: followed_by ${here.followed_by}`;
  });
}
