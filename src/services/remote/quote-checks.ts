import { eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { QuoteRow } from "../../db/schema.ts";
import type { TimerWheel } from "../../infra/timer-wheel.ts";
import { log } from "../../log.ts";

/** The first check again comes 30 s to 10 min later (Mastodon's QuoteRefetchScheduler::RETRY_DELAY). */
const FIRST_DELAY_MS = { min: 30_000, max: 600_000 };
/** Checks after the first one fails (Sidekiq's three retries of RefetchAndVerifyQuoteWorker); then the quote stays as it is. */
const MAX_ATTEMPTS = 4;
/** A quote with a stamp not checked for a week is checked again when read (Quote::BACKGROUND_REFRESH_INTERVAL)... */
export const QUOTE_REFRESH_INTERVAL_MS = 7 * 24 * 60 * 60 * 1000;
/** ...some time in the next six hours (Quote::REFRESH_DEADLINE), so that many reads make no burst. */
const REFRESH_DEADLINE_MS = 6 * 60 * 60 * 1000;

const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

/**
 * Mastodon's ExponentialBackoff after the nth failed check again (n >= 1): 15 s, then 25-35 s,
 * then 175-335 s (15 + 10·k⁴ + rand(10·k⁴) seconds for Sidekiq's retry count k = n - 1).
 */
function backoffMs(failed: number): number {
  const k4 = (failed - 1) ** 4;
  return (15 + 10 * k4 + between(0, 10 * k4)) * 1000;
}

/**
 * Remote quotes to be checked again later (Mastodon's RefetchAndVerifyQuoteWorker and
 * QuoteRefreshWorker), kept in `quote_checks` and run off the timer wheel: a quote whose quoted
 * post could not be had or whose stamp's server did not answer (no answer, a timeout, a 5xx),
 * and a stamped quote read after a week unchecked. Bounded: four checks at most after the first
 * failed one, then the quote stays as it is. What a check does is the runner's (QuoteRechecks).
 */
export class QuoteChecks {
  /** Read and written on every check the wheel runs: prepared once. */
  private q;

  constructor(
    private port: DatabasePort,
    private clock: Clock,
    private wheel: TimerWheel,
  ) {
    const t = port.tables.quoteChecks;
    const quoteId = eq(t.quoteId, sql.placeholder("quoteId"));
    this.q = {
      one: port.orm.select({ attempts: t.attempts, dueAt: t.dueAt }).from(t).where(quoteId).limit(1).prepare(),
      move: port.orm
        .update(t)
        .set({ attempts: sql.placeholder("attempts") as unknown as number, dueAt: sql.placeholder("dueAt") as unknown as number })
        .where(quoteId)
        .prepare(),
      remove: port.orm.delete(t).where(quoteId).prepare(),
    };
  }

  /**
   * A check again, unless one is waiting already: 30 s to 10 min from now, or at `dueAt`. On the
   * wheel at once: a check whose row a rollback took away finds nothing waiting and does nothing.
   */
  async schedule(quoteId: number, dueAt = this.clock.now() + between(FIRST_DELAY_MS.min, FIRST_DELAY_MS.max)): Promise<void> {
    const inserted = await this.port.run("INSERT INTO quote_checks (quote_id, attempts, due_at) VALUES (?, 0, ?) ON CONFLICT DO NOTHING", [quoteId, dueAt]);
    if (inserted > 0) this.wheel.schedule("quote-check", quoteId, dueAt);
  }

  /**
   * Quote#schedule_refresh_if_stale!: a quote of a remote post by a remote post, with its quoted
   * post and a stamp, not checked for a week, is checked within six hours.
   */
  async refreshIfStale(quote: QuoteRow): Promise<void> {
    if (quote.quotedStatusId === null || quote.approvalUri === null || quote.quotedUri === null) return;
    if (quote.state !== "pending" && quote.state !== "accepted") return;
    if (quote.updatedAt > this.clock.now() - QUOTE_REFRESH_INTERVAL_MS) return;
    await this.schedule(quote.id, this.clock.now() + between(0, REFRESH_DEADLINE_MS));
  }

  /** The check failed for now: the next one after Mastodon's backoff, or none past the bound. */
  async again(quoteId: number): Promise<void> {
    const row = await this.waiting(quoteId);
    if (!row) return;
    const attempts = row.attempts + 1;
    if (attempts >= MAX_ATTEMPTS) {
      log("info", "quote left unchecked", { quote: quoteId, attempts });
      return this.settled(quoteId);
    }
    const dueAt = this.clock.now() + backoffMs(attempts);
    await this.q.move.execute({ quoteId, attempts, dueAt });
    this.wheel.schedule("quote-check", quoteId, dueAt);
  }

  /** No check waits any more (the runner's: the check settled it, or past the bound). */
  async settled(quoteId: number): Promise<void> {
    await this.q.remove.execute({ quoteId });
    this.wheel.cancel("quote-check", quoteId);
  }

  /** Whether a check of the quote is waiting (and how many were made). */
  async waiting(quoteId: number): Promise<{ attempts: number; dueAt: number } | undefined> {
    return ((await this.q.one.execute({ quoteId })) as { attempts: number; dueAt: number }[])[0];
  }

  /** At start: the checks waiting when the server stopped. */
  async restore(): Promise<void> {
    const t = this.port.tables.quoteChecks;
    for (const row of await this.port.orm.select().from(t)) this.wheel.hold("quote-check", row.quoteId, row.dueAt);
  }
}

/** What checking a quote again came to: settled (or nothing left to learn), or to be asked again later. */
export type RecheckOutcome = "settled" | "again";

/**
 * Runs the checks QuoteChecks keeps when the wheel says they are due: `recheck` (NoteQuotes,
 * through RemoteNotes, which finds and fetches quoted posts) says how it went.
 */
export class QuoteRechecks {
  private running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private checks: QuoteChecks,
    wheel: TimerWheel,
    private recheck: (quoteId: number) => Promise<RecheckOutcome>,
  ) {
    wheel.handle("quote-check", (id) => this.track(this.run(Number(id))));
  }

  /** Waits for the checks under way (those waiting stay in the table for the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running]);
  }

  private track(work: Promise<void>): Promise<void> {
    this.running.add(work);
    return work.finally(() => this.running.delete(work));
  }

  private async run(quoteId: number): Promise<void> {
    if (this.stopped || !(await this.checks.waiting(quoteId))) return;
    let outcome: RecheckOutcome;
    try {
      outcome = await this.recheck(quoteId);
    } catch (e) {
      log("warn", "quote check failed", { quote: quoteId, error: String(e).split("\n")[0] });
      outcome = "again";
    }
    if (this.stopped) return;
    if (outcome === "settled") await this.checks.settled(quoteId);
    else await this.checks.again(quoteId);
  }
}
