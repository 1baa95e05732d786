import { and, eq, isNull, lte, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { lockRows } from "../../db/row-locks.ts";
import type { PollRow, StatusRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { ApiError, forbidden, notFound, validationFailed } from "../../errors.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { TimerWheel } from "../../infra/timer-wheel.ts";
import type { EventBus } from "../../infra/events.ts";
import type { StatusReader } from "./reader.ts";

/**
 * Poll votes (Mastodon's VoteValidator, in its order) and the end of polls: when a poll's
 * time comes, the wheel fires and `poll.ended` is announced (its author and voters are told),
 * exactly once (the ended_at flag is claimed in the same statement that checks it).
 */
export class PollService {
  /** The wheel's statements (a poll's end), prepared once. */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private reader: StatusReader,
    private moderation: ModerationService,
    private wheel: TimerWheel,
    private events: EventBus,
  ) {
    wheel.handle("poll", (id) => this.end(Number(id)));
    const p = port.tables.polls;
    const ph = (name: string) => sql.placeholder(name) as unknown as number;
    this.q = {
      byId: port.orm.select().from(p).where(eq(p.id, ph("id"))).prepare(),
      ofStatus: port.orm.select().from(p).where(eq(p.statusId, ph("statusId"))).limit(1).prepare(),
      previousVotes: port.orm
        .select({ choice: port.tables.pollVotes.choice })
        .from(port.tables.pollVotes)
        .where(and(eq(port.tables.pollVotes.pollId, ph("pollId")), eq(port.tables.pollVotes.accountId, ph("accountId"))))
        .prepare(),
      // Claimed in the statement that checks it: exactly once.
      claimEnd: port.orm
        .update(p)
        .set({ endedAt: ph("now") })
        .where(and(eq(p.id, ph("id")), isNull(p.endedAt), lte(p.expiresAt, ph("now"))))
        .prepare(),
    };
  }

  /** Puts every poll still open (or ended while the server was down) on the wheel. */
  async restore() {
    const polls = this.port.tables.polls;
    for (const p of await this.port.orm.select({ id: polls.id, expiresAt: polls.expiresAt }).from(polls).where(isNull(polls.endedAt))) {
      this.wheel.hold("poll", p.id, p.expiresAt);
    }
  }

  scheduleEnd(pollId: number, expiresAt: number) {
    this.wheel.schedule("poll", pollId, expiresAt);
  }

  /** A status's poll, through the port (RemoteNotes, rendering a Note, the archive). */
  async pollOf(statusId: number): Promise<PollRow | undefined> {
    return (await this.q.ofStatus.execute({ statusId }))[0];
  }

  /** A remote poll's counts as its server says them now (an Update of its Question). */
  async applyRemoteCounts(statusId: number, counts: { tallies: number[]; votersCount: number | null; closedAt: number | null; multiple: boolean }) {
    const poll = await this.pollOf(statusId);
    if (!poll || (JSON.parse(poll.options) as string[]).length !== counts.tallies.length) return;
    const votes = counts.tallies.reduce((a, b) => a + b, 0);
    const ended = counts.closedAt !== null && poll.endedAt === null ? counts.closedAt : poll.endedAt;
    await this.port.run("UPDATE polls SET tallies = ?, votes_count = ?, voters_count = ?, ended_at = ? WHERE id = ?", [
      JSON.stringify(counts.tallies),
      votes,
      counts.votersCount ?? (counts.multiple ? poll.votersCount : votes),
      ended,
      poll.id,
    ]);
  }

  /** The poll and its status, if the viewer may see the status. */
  async visiblePoll(pollId: number | null, viewerId: number | null): Promise<{ poll: PollRow; status: StatusRow }> {
    const [poll] = pollId === null ? [] : ((await this.q.byId.execute({ id: pollId })) as PollRow[]);
    if (!poll) throw notFound();
    return { poll, status: await this.reader.visibleRow(poll.statusId, viewerId) };
  }

  async vote(actorId: number, pollId: number | null, choices: string[] | undefined): Promise<StatusRow> {
    const { poll: seen, status } = await this.visiblePoll(pollId, actorId);
    if (choices === undefined) throw new ApiError(400, "param is missing or the value is empty: choices");
    if (choices.length === 0) return status;
    const blocks = await this.moderation.blocked(actorId, [seen.accountId]);
    if (blocks.blocking.has(seen.accountId) || blocks.blockedBy.has(seen.accountId)) throw forbidden();

    const picked = choices.map((c) => (/^-?\d+$/.test(c.trim()) ? Number(c) : NaN));
    await this.port.transaction(async () => {
      // The poll read again under its lock, its votes after: a poll's votes are counted one after
      // another. On PostgreSQL two votes at once (a double click, two voters, the one Create per
      // chosen option that Mastodon sends at once for a multiple choice) otherwise both read the
      // same tallies and earlier votes, and the later write lost the earlier's counts.
      await lockRows(this.port, "SELECT id FROM polls WHERE id = ?", [seen.id]);
      const [poll] = (await this.q.byId.execute({ id: seen.id })) as PollRow[];
      if (!poll) throw notFound();
      const previous = await this.q.previousVotes.execute({ pollId: poll.id, accountId: actorId });
      const options = (JSON.parse(poll.options) as string[]).length;
      const errors: string[] = [];
      if (poll.expiresAt <= this.clock.now()) errors.push("The poll has already ended");
      if (picked.some((c) => !Number.isInteger(c) || c < 0 || c >= options)) errors.push("The chosen vote option does not exist");
      if (poll.accountId === actorId) errors.push("You cannot vote in your own polls");
      const chosen = new Set<number>();
      const again = picked.some((c) => {
        const repeat = (!poll.multiple && (previous.length > 0 || chosen.size > 0)) || previous.some((p) => p.choice === c) || chosen.has(c);
        chosen.add(c);
        return repeat;
      });
      if (again) errors.push("You have already voted on this poll");
      if (errors.length > 0) throw validationFailed(...errors);

      const tallies = JSON.parse(poll.tallies) as number[];
      for (const c of picked) {
        // The unique (poll, voter, choice) as a second guard: a vote the lock let through twice counts once.
        const added = await this.port.run(
          "INSERT INTO poll_votes (id, poll_id, account_id, choice, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (poll_id, account_id, choice) DO NOTHING",
          [this.ids.next(), poll.id, actorId, c, this.clock.now()],
        );
        if (added === 0) throw validationFailed("You have already voted on this poll");
        tallies[c] = (tallies[c] ?? 0) + 1;
      }
      await this.port.run("UPDATE polls SET tallies = ?, votes_count = votes_count + ?, voters_count = voters_count + ? WHERE id = ?", [
        JSON.stringify(tallies),
        picked.length,
        previous.length === 0 ? 1 : 0,
        poll.id,
      ]);
      await this.events.emit({ type: "poll.voted", pollId: poll.id, statusId: poll.statusId, accountId: actorId, choices: picked });
    });
    return status;
  }

  /** Ends a poll whose time has come: tells its author and every voter, once. */
  async end(pollId: number) {
    const now = this.clock.now();
    const [poll] = await this.q.byId.execute({ id: pollId });
    if (!poll) return;
    if (poll.expiresAt > now) {
      this.wheel.schedule("poll", poll.id, poll.expiresAt);
      return;
    }
    // The claim and its consequences (the voters' notifications, written by within listeners) commit together.
    await this.port.transaction(async () => {
      if (this.port.changes(await this.q.claimEnd.execute({ id: pollId, now })) === 0) return;
      await this.events.emit({ type: "poll.ended", pollId, statusId: poll.statusId, accountId: poll.accountId });
    });
  }

  /** The accounts that voted in a poll. */
  /** Who voted in the poll (poll.ended's `within` listener tells them). */
  async voters(pollId: number): Promise<number[]> {
    return (await this.port.values("SELECT DISTINCT account_id FROM poll_votes WHERE poll_id = ?", [pollId])).map((r) => r[0] as number);
  }
}
