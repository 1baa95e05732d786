/** Public posts, replies, mentions, direct messages, edits and deletes, each way. */
import { G2R, R2G } from "../report.ts";
import { waitFor, type ApiClient } from "../support.ts";
import { expectStatus, inHome, need, notification, post, short, type Session } from "./session.ts";

const tags = (status: any) => status.tags?.map((t: any) => t.name).join(",");

export async function posts(s: Session) {
  const { report, alice, bob, aliceAcct, bobAcct } = s;
  await report.check("public post in the follower's home timeline", R2G, async () => {
    s.alicePost = await post(alice, { status: "Hello GoToSocial, this is Rookery #interop" });
    s.alicePostThere = await inHome(s, bob, s.alicePost.uri, "alice's post in bob's home timeline");
    return `"${short(s.alicePostThere.content)}", visibility ${s.alicePostThere.visibility}, tags ${tags(s.alicePostThere)}`;
  });
  await report.check("public post in the follower's home timeline", G2R, async () => {
    s.bobPost = await post(bob, { status: "Hello Rookery, this is GoToSocial #interop" });
    s.bobPostHere = await inHome(s, alice, s.bobPost.uri, "bob's post in alice's home timeline");
    return `"${short(s.bobPostHere.content)}", visibility ${s.bobPostHere.visibility}, tags ${tags(s.bobPostHere)}`;
  });

  // A reply from one side shows under the original in its author's context, on the author's side.
  const reply = async (from: ApiClient, to: ApiClient, acct: string, replyTo: any, original: any, what: string) => {
    const r = await post(from, { status: `@${acct} ${what}`, in_reply_to_id: replyTo.id });
    const found = await waitFor(
      "the reply in the context of the original, on its author's side",
      async (seen) => {
        const ctx = await to.get(`/api/v1/statuses/${original.id}/context`);
        seen.last = `context: HTTP ${ctx.status}, ${ctx.body?.descendants?.length} descendants`;
        return (ctx.body?.descendants as any[] | undefined)?.find((d) => d.uri === r.uri);
      },
      s.timeout,
    );
    if (found.in_reply_to_id !== original.id) throw new Error(`in_reply_to_id ${found.in_reply_to_id}, expected ${original.id}`);
    const toAuthor = found.in_reply_to_account_id === original.account.id;
    return `a descendant of the original, in_reply_to_id = its id, in_reply_to_account_id ${toAuthor ? "= its author" : found.in_reply_to_account_id}`;
  };
  await report.check("reply, threaded under the original", R2G, async () =>
    reply(alice, bob, bobAcct, need(s.bobPostHere, "bob's post on Rookery"), s.bobPost, "a reply from Rookery"),
  );
  await report.check("reply, threaded under the original", G2R, async () =>
    reply(bob, alice, aliceAcct, need(s.alicePostThere, "alice's post on GoToSocial"), s.alicePost, "a reply from GoToSocial"),
  );

  // A mention (public, then direct) is a mention notification of the mentioned account.
  const mention = async (from: ApiClient, to: ApiClient, acct: string, visibility: string, text: string) => {
    const p = await post(from, { status: `Hi @${acct}, ${text}`, visibility });
    const mentions = p.mentions?.map((m: any) => m.acct).join(",");
    if (mentions !== acct) throw new Error(`the post's mentions on its own side: ${mentions}`);
    const n = await notification(s, to, "mention", (n) => n.status?.uri === p.uri, "the mention notification");
    if (n.status.visibility !== visibility) throw new Error(`visibility ${n.status.visibility} on the other side`);
    return `notified by ${n.account.acct}, visibility ${n.status.visibility}, mentions ${n.status.mentions.map((m: any) => m.acct).join(",")}`;
  };
  await report.check("mention + notification", R2G, () => mention(alice, bob, bobAcct, "public", "a mention from Rookery"));
  await report.check("mention + notification", G2R, () => mention(bob, alice, aliceAcct, "public", "a mention from GoToSocial"));
  await report.check("direct message", R2G, () => mention(alice, bob, bobAcct, "direct", "a direct message from Rookery"));
  await report.check("direct message", G2R, () => mention(bob, alice, aliceAcct, "direct", "a direct message from GoToSocial"));
}

/** An edited post (Update of the Note) shows its new text on the other side. */
export async function edits(s: Session) {
  const edit = async (from: ApiClient, to: ApiClient, name: string) => {
    const p = await post(from, { status: `${name}: before the edit` });
    const copy = await inHome(s, to, p.uri, "the post in the follower's home timeline");
    expectStatus(await from.put(`/api/v1/statuses/${p.id}`, { json: { status: `${name}: after the edit` } }), 200, "edit");
    const edited = await waitFor(
      "the edit on the other side",
      async (seen) => {
        const r = await to.get(`/api/v1/statuses/${copy.id}`);
        seen.last = `HTTP ${r.status} "${short(r.body?.content)}" edited_at ${r.body?.edited_at}`;
        return r.status === 200 && short(r.body.content).includes("after the edit") ? r.body : null;
      },
      s.timeout,
    );
    return `"${short(edited.content)}", edited_at ${edited.edited_at ? "set" : "null"}`;
  };
  await s.report.check("edit (Update of the post)", R2G, () => edit(s.alice, s.bob, "Rookery"));
  await s.report.check("edit (Update of the post)", G2R, () => edit(s.bob, s.alice, "GoToSocial"));
}

/** A post deleted on its side answers 404 on the other. */
export async function deletes(s: Session) {
  const remove = async (from: ApiClient, to: ApiClient, name: string) => {
    const p = await post(from, { status: `${name}: this one will be deleted` });
    const copy = await inHome(s, to, p.uri, "the post in the follower's home timeline");
    expectStatus(await from.delete(`/api/v1/statuses/${p.id}`), 200, "delete");
    await waitFor(
      "the post to be gone on the other side",
      async (seen) => {
        const r = await to.get(`/api/v1/statuses/${copy.id}`);
        seen.last = `GET status: HTTP ${r.status}`;
        return r.status === 404;
      },
      s.timeout,
    );
    return "the copy answers 404 after the Delete";
  };
  await s.report.check("delete", R2G, () => remove(s.alice, s.bob, "Rookery"));
  await s.report.check("delete", G2R, () => remove(s.bob, s.alice, "GoToSocial"));
}
