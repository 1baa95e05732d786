import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { ImportRow } from "../../db/schema.ts";
import { log } from "../../log.ts";
import type { ImportEntry, ImportType } from "./formats.ts";
import type { ImportActions, ImportOutcome } from "./import-actions.ts";
import type { ImportOverwrite } from "./import-overwrite.ts";

/** A rate: `limit` entries per `periodMs`, spread evenly (one every periodMs / limit); null: none. */
export type Rate = { limit: number; periodMs: number } | null;

export interface ImportRates {
  /** Entries needing one other server, started at most this often (each is a WebFinger, an actor and an activity there). */
  perHost: Rate;
  /** Entries needing any other server, in all. */
  total: Rate;
}

/** Entries being worked off at once, each for a different host. */
const MAX_IN_FLIGHT = 8;
/** Entries needing no other server, worked off per turn before the worker lets requests in. */
const LOCAL_PER_TURN = 25;
/** While nothing is pending, how often the table is looked at for imports the CLI queued. */
const IDLE_POLL_MS = 2000;
/** A host that left this many entries in a row unanswered is taken to be down: its other entries fail at once. */
const DOWN_AFTER = 3;

const intervalOf = (rate: Rate) => (rate ? rate.periodMs / rate.limit : 0);

/**
 * Works off the entries of imports in the background, resumable: the entries wait in
 * import_rows, and what was under way when the server stopped is pending still and done again
 * when it starts (every action is idempotent). An overwrite's removals come first, a turn at a
 * time. Entries needing no other server go a batch per turn; the others are started at most
 * `rates.perHost` to any one host (one at a time there) and `rates.total` in all, so that a
 * 5,000-line file neither stalls this server nor floods another.
 */
export class ImportWorker {
  private started = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Infinity;
  /** The turn under way, if any: stop() waits for it before the database closes. */
  private pumping: Promise<void> | null = null;
  /** A turn was asked for while one ran: another follows it. */
  private again = false;
  private inFlight = new Map<string, Promise<void>>();
  private hostNextAt = new Map<string, number>();
  private nextAt = 0;
  private unanswered = new Map<string, number>();
  private abort = new AbortController();
  private q;

  constructor(
    private db: DatabasePort,
    private clock: Clock,
    private actions: ImportActions,
    private overwrite: ImportOverwrite,
    private rates: ImportRates,
  ) {
    // Portable SQL: positional `?`, aliases quoted (PostgreSQL folds unquoted ones to lower case).
    const running = "JOIN imports i ON i.id = r.import_id AND i.state = 'running'";
    this.q = {
      queued: `SELECT id, account_id AS "accountId", type, overwrite, state, total_items AS "totalItems", created_at AS "createdAt", finished_at AS "finishedAt"
         FROM imports WHERE state = 'queued' ORDER BY id LIMIT 1`,
      run: "UPDATE imports SET state = 'running' WHERE id = ?",
      local: `SELECT r.id, r.data, i.account_id AS "accountId", i.type FROM import_rows r ${running} WHERE r.state = 'pending' AND r.host IS NULL ORDER BY r.id LIMIT ${LOCAL_PER_TURN}`,
      hosts: `SELECT r.host, min(r.id) AS id FROM import_rows r ${running} WHERE r.state = 'pending' AND r.host IS NOT NULL GROUP BY r.host`,
      entry: `SELECT r.id, r.data, i.account_id AS "accountId", i.type FROM import_rows r JOIN imports i ON i.id = r.import_id WHERE r.id = ? AND r.state = 'pending'`,
      record: "UPDATE import_rows SET state = ?, failure = ?, detail = ?, target_account_id = ?, processed_at = ? WHERE id = ? AND state = 'pending'",
      giveUp: `UPDATE import_rows SET state = 'failed', failure = 'server_down', detail = ?, processed_at = ?
         WHERE state = 'pending' AND host = ? AND import_id IN (SELECT id FROM imports WHERE state = 'running')`,
      finish: `UPDATE imports SET state = 'finished', finished_at = ? WHERE state = 'running'
         AND NOT EXISTS (SELECT 1 FROM import_rows r WHERE r.import_id = imports.id AND r.state = 'pending')`,
    };
  }

  /** Starts working (the server does, once every listener is registered); what was pending is taken up again. */
  start() {
    this.started = true;
    this.schedule(0);
  }

  /** Stops starting entries, and waits for those under way (aborted: they stay pending, for the next start). */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort(new Error("the server is stopping"));
    await this.pumping;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  /** An import was queued: look now rather than at the next poll. */
  wake() {
    if (this.started) this.schedule(0);
  }

  /** Entries being worked off now (tests, and the operator's report). */
  get busyHosts(): string[] {
    return [...this.inFlight.keys()];
  }

  private schedule(ms: number) {
    if (!this.started) return;
    const at = Date.now() + ms;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      void this.turn();
    }, ms);
    this.timer.unref?.();
  }

  private async turn() {
    if (!this.started) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.again = false;
    this.pumping = this.pump().finally(() => (this.pumping = null));
    await this.pumping;
  }

  private async pump() {
    let next: number | null = null;
    const soon = (ms: number) => (next = next === null ? ms : Math.min(next, ms));
    try {
      const raw = await this.db.get<ImportRow & { overwrite: unknown }>(this.q.queued);
      if (raw) {
        // 0/1 on SQLite, a boolean on PostgreSQL.
        const queued: ImportRow = { ...raw, overwrite: Boolean(raw.overwrite) };
        if (await this.overwrite.step(queued)) await this.db.run(this.q.run, [queued.id]);
        soon(0);
      }
      const local = await this.db.all<Entry>(this.q.local);
      for (const entry of local) {
        const outcome = await this.actions.apply(entry.accountId, entry.type, JSON.parse(entry.data) as ImportEntry, this.abort.signal);
        if (!this.started) return;
        await this.record(entry.id, outcome);
      }
      if (local.length === LOCAL_PER_TURN) soon(0);
      const now = this.clock.now();
      if (this.hostNextAt.size > 1000) for (const [host, at] of this.hostNextAt) if (at <= now) this.hostNextAt.delete(host);
      for (const { host, id } of await this.db.all<{ host: string; id: number }>(this.q.hosts)) {
        if (this.inFlight.size >= MAX_IN_FLIGHT) break;
        if (this.inFlight.has(host)) continue;
        const hostAt = this.hostNextAt.get(host) ?? 0;
        if (hostAt > now) {
          soon(hostAt - now);
          continue;
        }
        if (this.nextAt > now) {
          soon(this.nextAt - now);
          break;
        }
        this.hostNextAt.set(host, now + intervalOf(this.rates.perHost));
        this.nextAt = now + intervalOf(this.rates.total);
        this.begin(id, host);
      }
      await this.db.run(this.q.finish, [this.clock.now()]);
    } catch (e) {
      if (!this.started) return;
      log("error", "import worker failed", { error: String(e).split("\n")[0] });
      soon(1000);
    }
    if (this.again) this.schedule(0);
    if (next !== null) this.schedule(next);
    else if (this.inFlight.size === 0) this.schedule(IDLE_POLL_MS);
  }

  private begin(id: number, host: string) {
    const signal = this.abort.signal;
    // In flight from the start (before the entry is read), so the same turn starts no second one for the host.
    let started = false;
    const work = (async () => {
      const entry = await this.db.get<Entry>(this.q.entry, [id]);
      if (!entry) return;
      started = true;
      const outcome = await this.actions.apply(entry.accountId, entry.type, JSON.parse(entry.data) as ImportEntry, signal);
      if (signal.aborted) return;
      await this.record(entry.id, outcome);
      await this.countAnswer(host, outcome);
    })()
      .catch((e) => {
        if (!signal.aborted) log("error", "import entry failed", { entry: id, error: String(e).split("\n")[0] });
      })
      .finally(() => {
        this.inFlight.delete(host);
        if (started) this.schedule(0);
      });
    this.inFlight.set(host, work);
  }

  private async record(id: number, outcome: ImportOutcome) {
    if (outcome.ok) await this.db.run(this.q.record, ["done", null, null, outcome.targetAccountId ?? null, this.clock.now(), id]);
    else await this.db.run(this.q.record, ["failed", outcome.failure, outcome.detail, null, this.clock.now(), id]);
  }

  /** A host that does not answer several entries in a row is not asked about the rest of them. */
  private async countAnswer(host: string, outcome: ImportOutcome) {
    if (outcome.ok || outcome.failure !== "server_down") {
      this.unanswered.delete(host);
      return;
    }
    const count = (this.unanswered.get(host) ?? 0) + 1;
    this.unanswered.set(host, count);
    if (count < DOWN_AFTER) return;
    this.unanswered.delete(host);
    await this.db.run(this.q.giveUp, [`not asked: ${host} left ${DOWN_AFTER} entries in a row unanswered`, this.clock.now(), host]);
    log("warn", "import: a server is down, its entries fail", { host });
  }
}

interface Entry {
  id: number;
  data: string;
  accountId: number;
  type: ImportType;
}
