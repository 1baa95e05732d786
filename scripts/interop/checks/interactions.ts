/** Boosts and favourites (and their Undo) notified to the author, and poll votes counted by the author's side. */
import { G2R, R2G } from "../report.ts";
import { waitFor, type ApiClient } from "../support.ts";
import { expectStatus, inHome, need, notification, post, type Session } from "./session.ts";

export async function boostsAndFavourites(s: Session) {
  const { report, alice, bob } = s;
  // `copy`: the post as the actor's side has it; `original`: on its author's side.
  const act = async (kind: "reblog" | "favourite", actor: ApiClient, author: ApiClient, copy: any, original: any) => {
    expectStatus(await actor.post(`/api/v1/statuses/${copy.id}/${kind}`), 200, kind);
    const n = await notification(s, author, kind, (n) => n.status?.id === original.id, `the ${kind} notification`);
    const counter = kind === "reblog" ? "reblogs_count" : "favourites_count";
    const status = expectStatus(await author.get(`/api/v1/statuses/${original.id}`), 200, "status");
    return `notified (${kind}) by ${n.account.acct}; ${counter} ${status[counter]}`;
  };
  const undo = async (kind: "reblog" | "favourite", actor: ApiClient, author: ApiClient, copy: any, original: any) => {
    const counter = kind === "reblog" ? "reblogs_count" : "favourites_count";
    expectStatus(await actor.post(`/api/v1/statuses/${copy.id}/${kind === "reblog" ? "unreblog" : "unfavourite"}`), 200, `un${kind}`);
    await waitFor(
      `${counter} back to 0 on the author's side`,
      async (seen) => {
        const status = expectStatus(await author.get(`/api/v1/statuses/${original.id}`), 200, "status");
        seen.last = `${counter} ${status[counter]}`;
        return status[counter] === 0;
      },
      s.timeout,
    );
    return `${counter} 0`;
  };
  const there = () => need(s.alicePostThere, "alice's post on GoToSocial");
  const here = () => need(s.bobPostHere, "bob's post on Rookery");
  // Direction: where the boost or favourite comes from.
  await report.check("boost + notification", R2G, () => act("reblog", alice, bob, here(), s.bobPost));
  await report.check("boost + notification", G2R, () => act("reblog", bob, alice, there(), s.alicePost));
  await report.check("favourite + notification", R2G, () => act("favourite", alice, bob, here(), s.bobPost));
  await report.check("favourite + notification", G2R, () => act("favourite", bob, alice, there(), s.alicePost));
  await report.check("unboost + unfavourite (Undo)", R2G, async () => `${await undo("reblog", alice, bob, here(), s.bobPost)}, ${await undo("favourite", alice, bob, here(), s.bobPost)}`);
  await report.check("unboost + unfavourite (Undo)", G2R, async () => `${await undo("reblog", bob, alice, there(), s.alicePost)}, ${await undo("favourite", bob, alice, there(), s.alicePost)}`);
}

export async function polls(s: Session) {
  // Direction: where the poll is posted; the vote comes from the other side.
  const poll = async (author: ApiClient, voter: ApiClient, name: string, options: string[], choice: number) => {
    const p = await post(author, { status: `${name} asks: which?`, poll: { options, expires_in: 3600 } });
    const copy = await inHome(s, voter, p.uri, "the poll in the voter's home timeline");
    if (!copy.poll) throw new Error("no poll on the voter's copy");
    const shown = copy.poll.options.map((o: any) => o.title).join("/");
    expectStatus(await voter.post(`/api/v1/polls/${copy.poll.id}/votes`, { json: { choices: [choice] } }), 200, "vote");
    const counted = await waitFor(
      "the vote counted on the author's side",
      async (seen) => {
        const r = expectStatus(await author.get(`/api/v1/polls/${p.poll.id}`), 200, "poll");
        seen.last = `votes_count ${r.votes_count}, options ${r.options.map((o: any) => o.votes_count).join("/")}`;
        return r.votes_count === 1 && r.options[choice].votes_count === 1 ? r : null;
      },
      s.timeout,
    );
    return `the voter sees ${shown}; its vote (${options[choice]}) counted by the author's side: ${counted.options.map((o: any) => `${o.title} ${o.votes_count}`).join(", ")}`;
  };
  await s.report.check("poll shown, vote counted by the author's side", R2G, () => poll(s.alice, s.bob, "Rookery", ["tea", "coffee"], 1));
  await s.report.check("poll shown, vote counted by the author's side", G2R, () => poll(s.bob, s.alice, "GoToSocial", ["red", "green", "blue"], 2));
}
