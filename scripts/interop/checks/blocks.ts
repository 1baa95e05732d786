/** Blocks: each ends the follows both ways and shows as blocked_by on the other side; unblock lifts it. */
import { G2R, R2G } from "../report.ts";
import { expectStatus, need, relationshipUntil, type Session } from "./session.ts";
import { followGtsFromRookery, followRookeryFromGts } from "./follows.ts";

const ended = (r: any) => r.blocked_by && !r.following && !r.followed_by && !r.requested;
const summary = (r: any) => `blocked_by ${r.blocked_by}, following ${r.following}, followed_by ${r.followed_by}`;

export async function blocks(s: Session) {
  const { report, alice, bob } = s;
  // Follows both ways first, so that each block has something to end.
  const followBothWays = async () => {
    await followRookeryFromGts(s);
    await followGtsFromRookery(s);
  };
  await report.check("block ends follows both ways; unblock", R2G, async () => {
    const bobHere = need(s.bobHere, "bob's account on Rookery");
    await followBothWays();
    expectStatus(await alice.post(`/api/v1/accounts/${bobHere}/block`), 200, "block");
    const r = await relationshipUntil(s, "gts", "GoToSocial to see the block", ended);
    expectStatus(await alice.post(`/api/v1/accounts/${bobHere}/unblock`), 200, "unblock");
    await relationshipUntil(s, "gts", "GoToSocial to see the unblock", (r) => r.blocked_by === false);
    return `GoToSocial: ${summary(r)}; after the unblock (Undo Block) blocked_by false`;
  });
  await report.check("block ends follows both ways; unblock", G2R, async () => {
    const aliceThere = need(s.aliceThere, "alice's account on GoToSocial");
    await followBothWays();
    expectStatus(await bob.post(`/api/v1/accounts/${aliceThere}/block`), 200, "block");
    const r = await relationshipUntil(s, "rookery", "Rookery to see the block", ended);
    expectStatus(await bob.post(`/api/v1/accounts/${aliceThere}/unblock`), 200, "unblock");
    await relationshipUntil(s, "rookery", "Rookery to see the unblock", (r) => r.blocked_by === false);
    return `Rookery: ${summary(r)}; after the unblock (Undo Block) blocked_by false`;
  });
}
