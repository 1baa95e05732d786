import type { Context } from "@fedify/fedify";
import { type Activity, Create, Delete, Note, type Question, type Recipient, Tombstone, Update } from "@fedify/fedify/vocab";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import type { EventBus } from "../../infra/events.ts";
import { createOf, mentionedAccounts, noteOf, noteUriOf } from "../vocab.ts";
import type { Outbound } from "./index.ts";
import { relayRecipient } from "./relays.ts";
import { recipientOf } from "./sender.ts";

/**
 * Local statuses told to remote servers, once committed: a new one as Create, an edit as
 * Update, a deletion as Delete. Deliveries go through Fedify's queue (retries, restarts).
 */
export function statuses(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { lookups, context: ctx } = out;
  const send = out.sender.send;

  events.afterCommit("status.created", (e) => {
    sendNote(out, "Create", e.status, (sent, note) => createOf(sent.c, note, sent.author, e.status));
  });

  events.afterCommit("status.updated", (e) => {
    sendNote(out, "Update", e.status, (sent, note) => updateOf(sent, note, `${e.status.editedAt ?? 0}`));
  });

  // A local poll that ended goes out again with its final counts (Mastodon sends Update).
  events.afterCommit("poll.ended", (e) => {
    out.sender.send(
      "Update of a poll",
      async () => {
        const status = await lookups.status(e.statusId);
        if (status) await deliverNote(out, status, (sent, note) => updateOf(sent, note, "poll-ended"));
      },
      statusKey(e.statusId),
    );
  });

  // A local account's vote in a remote poll: a Note per choice, named by the option's title and
  // replying to the poll, sent to its author alone (Mastodon's VoteService).
  events.afterCommit("poll.voted", (e) => {
    send(
      "vote",
      async () => {
        const status = await lookups.status(e.statusId);
        const voter = await lookups.account(e.accountId);
        const author = status && (await lookups.account(status.accountId));
        const poll = status && (await lookups.poll(status.id));
        if (!status || status.uri === null || !voter || voter.domain !== null || !author || author.domain === null || !poll) return;
        const c = ctx();
        const actor = c.getActorUri(voter.username);
        const titles = JSON.parse(poll.options) as string[];
        for (const choice of e.choices) {
          const id = new URL(`${actor.href}#votes/${poll.id}/${choice}`);
          const vote = new Note({ id, attribution: actor, name: titles[choice] ?? "", replyTarget: new URL(status.uri), to: new URL(author.uri!) });
          const create = new Create({ id: new URL(`${id.href}/activity`), actor, to: new URL(author.uri!), object: vote });
          await c.sendActivity({ identifier: voter.username }, recipientOf(author), create, { orderingKey: `${status.uri}#votes` });
        }
      },
      `votes:${e.statusId}`,
    );
  });

  events.afterCommit("status.deleted", (e) => {
    sendNote(out, "Delete", e.status, async (sent, note) => {
      const { c, author } = sent;
      return new Delete({ id: new URL(`${note.id!.href}#delete`), actor: c.getActorUri(author.username), tos: note.toIds, ccs: note.ccIds, object: new Tombstone({ id: note.id! }) });
    }, async (author) => author.suspendedAt === null);
  });
}

/** A local status's Note as it goes out, with who should get it (read as the send is prepared). */
export interface OutgoingNote {
  c: Context<void>;
  author: AccountRow;
  /** Rendered once the recipients are known to be someone: a status nobody elsewhere should get is never rendered. */
  note(): Promise<Note | Question>;
  /** The author's remote followers (but for a direct status), the remote accounts it names or answers or quotes, and the relays for a public one; once each. */
  recipients(): Promise<Recipient[]>;
  options: { preferSharedInbox: boolean; orderingKey: string };
}

/** An Update of the Note, its id told apart by `suffix`. */
export function updateOf(sent: OutgoingNote, note: Note | Question, suffix: string): Update {
  return new Update({ id: new URL(`${note.id!.href}#updates/${suffix}`), actor: sent.c.getActorUri(sent.author.username), tos: note.toIds, ccs: note.ccIds, object: note });
}

/**
 * What orders the preparation of a status's activities (Sender): known from the event alone, so
 * that the rows behind them are read inside the send, in turn, and a Delete never overtakes its
 * Create. Fedify's own ordering key, which orders their deliveries, is the Note's IRI.
 */
export const statusKey = (statusId: number) => `status:${statusId}`;

type NoteActivity = (sent: OutgoingNote, note: Note | Question) => Activity | Promise<Activity>;

/**
 * Sends the activity made of a local status's Note to its recipients, unless there are none;
 * in the order of the status's other activities. `sends` may veto by the author (read first).
 */
export function sendNote(out: Outbound, what: string, status: StatusRow, activity: NoteActivity, sends?: (author: AccountRow) => Promise<boolean>): void {
  out.sender.send(what, () => deliverNote(out, status, activity, sends), statusKey(status.id));
}

/** sendNote's work, for a send already under way (its ordering key taken). */
export async function deliverNote(out: Outbound, status: StatusRow, activity: NoteActivity, sends?: (author: AccountRow) => Promise<boolean>): Promise<void> {
  const sent = await outgoingNoteOf(out, status);
  if (!sent || (sends && !(await sends(sent.author)))) return;
  const recipients = await sent.recipients();
  if (recipients.length === 0) return;
  await sent.c.sendActivity({ identifier: sent.author.username }, recipients, await activity(sent, await sent.note()), sent.options);
}

// Statuses go to the author's remote followers (one delivery per shared inbox) and to the
// remote accounts they mention; direct ones to the mentioned alone, each at its own inbox,
// never a shared one. A status's activities share an ordering key, so a Delete never
// overtakes its Create. Public ones go to the relays too (public boosts: interactions.ts).
const DISTRIBUTABLE = new Set(["public", "unlisted"]);

/**
 * A local original as a Note, with who should get it; null when nobody elsewhere should. A
 * public or unlisted reply also goes to the author it answers (Mastodon's StatusReachFinder),
 * and a quote to the author it quotes.
 */
export async function outgoingNoteOf(out: Outbound, status: StatusRow): Promise<OutgoingNote | null> {
  const { services, lookups, context: ctx, urls } = out;
  if (status.reblogOfId !== null || status.uri !== null) return null;
  const author = await services.accounts.get(status.accountId);
  if (!author || author.domain !== null) return null;
  const c = ctx();
  const mentioned = (await mentionedAccounts(lookups, status)).filter((a) => a.domain !== null);
  const direct = status.visibility === "direct";
  const shared = DISTRIBUTABLE.has(status.visibility);
  const answered = status.inReplyToAccountId !== null && shared ? await services.accounts.get(status.inReplyToAccountId) : undefined;
  const quotedAccountId = shared ? (await lookups.quote(status.id))?.quotedAccountId : undefined;
  const quoted = quotedAccountId == null ? undefined : await services.accounts.get(quotedAccountId);
  const named = [...mentioned, ...[answered, quoted].filter((a) => a !== undefined && a.domain !== null)] as AccountRow[];
  const recipients = async () => {
    const followers = direct ? [] : await services.federationActors.remoteFollowers(status.accountId);
    const remote = [...followers, ...named];
    const all = [...new Map(remote.map((a) => [a.id, a])).values()].map(recipientOf);
    // Public statuses also go to the accepted relays (Mastodon's StatusReachFinder#relay_inboxes),
    // with the Linked Data signature and proof Fedify adds, by which a relay's subscribers believe them.
    if (status.visibility === "public") all.push(...(await services.relays.accepted()).map(relayRecipient));
    return all;
  };
  let note: Promise<Note | Question> | undefined;
  return {
    c,
    author,
    note: () => (note ??= noteOf(c, urls, author, status, lookups)),
    recipients,
    options: { preferSharedInbox: !direct, orderingKey: noteUriOf(c, author, status).href },
  };
}
