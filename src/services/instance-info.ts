import { asc, eq, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
import type { DatabasePort } from "../db/port.ts";
import { instanceRules, instanceSettings, type InstanceRuleRow } from "../db/schema.ts";
import { notFound, validationFailed } from "../errors.ts";
import { idFloorForTime, type IdGenerator } from "../ids.ts";
import type { WeekActivity } from "../models/views.ts";
import { formatText } from "../text/format.ts";
import type { RegistrationsMode } from "./accounts/registrations.ts";

/** Mastodon's Rule::TEXT_SIZE_LIMIT. */
const RULE_TEXT_LIMIT = 300;
const WEEK = 7 * 24 * 60 * 60 * 1000;
const DESCRIPTION_KEY = "extended_description";
const DESCRIPTION_UPDATED_KEY = "extended_description_updated_at";
const REGISTRATIONS_KEY = "registrations_mode";
const MODES: readonly RegistrationsMode[] = ["open", "approval", "closed"];

/**
 * What the operator says about the server and what the instance endpoints count: the rules,
 * the extended description (both set with the CLI), the registrations mode (REGISTRATIONS
 * until an admin sets one on /admin/settings), and the weekly activity.
 *
 * On the database port (issue 31): the extended description and the activity. The rest stays
 * on the synchronous API for now, for synchronous callers: the rules are read while the kept
 * instance documents are built (src/http/kept-json.ts) and by AdminReports, the registrations
 * mode by RegistrationService's `mode` (read for every instance document), and every write
 * runs inside AdminInstance's synchronous transactions (with its audit log entry).
 */
const ACTIVITY_CACHE_MS = 60 * 60 * 1000;

export class InstanceInfo {
  private q;
  private p;

  constructor(
    private db: Db,
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
    /** REGISTRATIONS: the mode while no admin has chosen one. */
    private defaultRegistrations: RegistrationsMode,
  ) {
    this.q = {
      // Read on every instance document (the registrations mode): kept prepared, not built each time.
      setting: db.$client.query<{ value: string }, [string]>("SELECT value FROM instance_settings WHERE key = ?"),
    };
    const postgres = port.dialect === "postgres";
    this.p = {
      // Raw SQL through the statement cache: cheaper per run than drizzle's prepared query and its row mapping.
      description: "SELECT key, value FROM instance_settings WHERE key IN (?, ?)",
      // Local posts (boosts are not posts), per week. On SQLite, a rowid range by the ids of the
      // week's bounds (ids grow with time), and `+` keeps the reblog test off the reblog_of
      // index, which would visit every original status ever stored; PostgreSQL plans for itself.
      // Parameters: the ids of the bounds, then the times.
      statuses: `SELECT count(*) AS n FROM statuses s JOIN accounts a ON a.id = s.account_id
         WHERE s.id >= ? AND s.id < ? AND a.domain IS NULL AND ${postgres ? "" : "+"}s.reblog_of_id IS NULL AND s.created_at >= ? AND s.created_at < ?`,
      // Rookery keeps no per-request sign-in times: a login is an account that signed in that
      // week (was issued a token or opened a web session), each account counted once.
      logins: `SELECT count(DISTINCT account_id) AS n FROM (
           SELECT account_id, created_at FROM oauth_access_tokens WHERE account_id IS NOT NULL
           UNION ALL SELECT account_id, created_at FROM web_sessions) AS signins
         WHERE created_at >= ? AND created_at < ?`,
      registrations: "SELECT count(*) AS n FROM users WHERE created_at >= ? AND created_at < ?",
    };
  }

  rules(): InstanceRuleRow[] {
    return this.db.select().from(instanceRules).orderBy(asc(instanceRules.position), asc(instanceRules.id)).all();
  }

  addRule(text: string, hint = ""): InstanceRuleRow {
    const trimmed = text.trim();
    const errors: string[] = [];
    if (trimmed === "") errors.push("Text can't be blank");
    else if (trimmed.length > RULE_TEXT_LIMIT) errors.push(`Text is too long (maximum is ${RULE_TEXT_LIMIT} characters)`);
    if (errors.length) throw validationFailed(...errors);
    const now = this.clock.now();
    const last = this.db.select({ p: sql<number | null>`max(${instanceRules.position})` }).from(instanceRules).get()?.p ?? -1;
    const row: InstanceRuleRow = { id: this.ids.next(), text: trimmed, hint: hint.trim(), position: last + 1, createdAt: now, updatedAt: now };
    this.db.insert(instanceRules).values(row).run();
    return row;
  }

  removeRule(id: number | null) {
    if (id === null || this.db.delete(instanceRules).where(eq(instanceRules.id, id)).returning({ id: instanceRules.id }).all().length === 0) throw notFound();
  }

  /** The extended description as its source text, and when it was last set (null: never). */
  async extendedDescriptionSource(): Promise<{ text: string; updatedAt: number | null }> {
    const rows = await this.port.all<{ key: string; value: string }>(this.p.description, [DESCRIPTION_KEY, DESCRIPTION_UPDATED_KEY]);
    const text = rows.find((r) => r.key === DESCRIPTION_KEY)?.value ?? "";
    const updated = rows.find((r) => r.key === DESCRIPTION_UPDATED_KEY)?.value;
    return { text, updatedAt: updated === undefined ? null : Number(updated) };
  }

  /** As the API shows it: the text in paragraphs, its links made links. */
  async extendedDescription(): Promise<{ html: string; updatedAt: number | null }> {
    const { text, updatedAt } = await this.extendedDescriptionSource();
    // Formatting costs more than reading the text, which seldom changes: the last one is kept.
    if (this.formatted?.text !== text) this.formatted = { text, html: formatText(text, { multiline: true, tagBaseUrl: `${this.publicUrl}/tags/` }).html };
    return { html: this.formatted.html, updatedAt };
  }

  private formatted: { text: string; html: string } | null = null;

  setExtendedDescription(text: string) {
    const now = String(this.clock.now());
    this.db.transaction((tx) => {
      for (const [key, value] of [[DESCRIPTION_KEY, text.trim()], [DESCRIPTION_UPDATED_KEY, now]] as const) {
        tx.insert(instanceSettings).values({ key, value }).onConflictDoUpdate({ target: instanceSettings.key, set: { value } }).run();
      }
    });
  }

  /** Who may sign up now: the mode an admin saved (it wins over REGISTRATIONS), else REGISTRATIONS. */
  registrationsMode(): { mode: RegistrationsMode; saved: boolean } {
    const stored = this.setting(REGISTRATIONS_KEY);
    const mode = MODES.find((m) => m === stored);
    return mode ? { mode, saved: true } : { mode: this.defaultRegistrations, saved: false };
  }

  /** The REGISTRATIONS setting, which applies while no mode is saved. */
  get registrationsSetting(): RegistrationsMode {
    return this.defaultRegistrations;
  }

  /** Saves the mode (null: forget it, so that REGISTRATIONS applies again). */
  setRegistrationsMode(mode: RegistrationsMode | null) {
    if (mode === null) this.db.delete(instanceSettings).where(eq(instanceSettings.key, REGISTRATIONS_KEY)).run();
    else this.db.insert(instanceSettings).values({ key: REGISTRATIONS_KEY, value: mode }).onConflictDoUpdate({ target: instanceSettings.key, set: { value: mode } }).run();
  }

  /** Mastodon's instance activity: the last 12 ISO weeks (Monday to Monday, UTC), this one first. */
  async activity(): Promise<WeekActivity[]> {
    const now = this.clock.now();
    // Anyone may ask, and it is 36 counts: kept for an hour, as Mastodon caches its answer.
    if (this.activityCache && this.activityCache.at <= now && now < this.activityCache.at + ACTIVITY_CACHE_MS) return this.activityCache.weeks;
    const day = Math.floor(now / (24 * 60 * 60 * 1000));
    // 1970-01-01 was a Thursday: (day + 3) % 7 is days since Monday.
    const monday = (day - ((day + 3) % 7)) * 24 * 60 * 60 * 1000;
    const count = async (text: string, params: number[]) => (await this.port.get<{ n: number }>(text, params))?.n ?? 0;
    const weeks: WeekActivity[] = [];
    for (let i = 0; i < 12; i++) {
      const start = monday - i * WEEK;
      const end = start + WEEK;
      weeks.push({
        week: start,
        statuses: await count(this.p.statuses, [idFloorForTime(start), idFloorForTime(end), start, end]),
        logins: await count(this.p.logins, [start, end]),
        registrations: await count(this.p.registrations, [start, end]),
      });
    }
    this.activityCache = { at: now, weeks };
    return weeks;
  }

  private activityCache: { at: number; weeks: WeekActivity[] } | null = null;

  private setting(key: string): string | undefined {
    return this.q.setting.get(key)?.value;
  }
}
