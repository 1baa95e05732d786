import { asc, eq, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
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
 */
const ACTIVITY_CACHE_MS = 60 * 60 * 1000;

export class InstanceInfo {
  private q;

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
    /** REGISTRATIONS: the mode while no admin has chosen one. */
    private defaultRegistrations: RegistrationsMode,
  ) {
    const sqlite = db.$client;
    this.q = {
      // Read on every instance document (the registrations mode): kept prepared, not built each time.
      setting: db.$client.query<{ value: string }, [string]>("SELECT value FROM instance_settings WHERE key = ?"),
      // Local posts (boosts are not posts), per week.
      // A rowid range by the ids of the week's bounds (ids grow with time); `+` keeps the reblog
      // test off the reblog_of index, which would visit every original status ever stored.
      statuses: sqlite.query<{ n: number }, [number, number, number, number]>(
        `SELECT count(*) AS n FROM statuses s JOIN accounts a ON a.id = s.account_id
         WHERE s.id >= ?1 AND s.id < ?2 AND a.domain IS NULL AND +s.reblog_of_id IS NULL AND s.created_at >= ?3 AND s.created_at < ?4`,
      ),
      // Rookery keeps no per-request sign-in times: a login is an account that signed in that
      // week (was issued a token or opened a web session), each account counted once.
      logins: sqlite.query<{ n: number }, [number, number]>(
        `SELECT count(DISTINCT account_id) AS n FROM (
           SELECT account_id, created_at FROM oauth_access_tokens WHERE account_id IS NOT NULL
           UNION ALL SELECT account_id, created_at FROM web_sessions)
         WHERE created_at >= ?1 AND created_at < ?2`,
      ),
      registrations: sqlite.query<{ n: number }, [number, number]>("SELECT count(*) AS n FROM users WHERE created_at >= ? AND created_at < ?"),
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
  extendedDescriptionSource(): { text: string; updatedAt: number | null } {
    const text = this.setting(DESCRIPTION_KEY) ?? "";
    const updated = this.setting(DESCRIPTION_UPDATED_KEY);
    return { text, updatedAt: updated === undefined ? null : Number(updated) };
  }

  /** As the API shows it: the text in paragraphs, its links made links. */
  extendedDescription(): { html: string; updatedAt: number | null } {
    const { text, updatedAt } = this.extendedDescriptionSource();
    return { html: formatText(text, { multiline: true, tagBaseUrl: `${this.publicUrl}/tags/` }).html, updatedAt };
  }

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
  activity(): WeekActivity[] {
    const now = this.clock.now();
    // Anyone may ask, and it is 36 counts: kept for an hour, as Mastodon caches its answer.
    if (this.activityCache && this.activityCache.at <= now && now < this.activityCache.at + ACTIVITY_CACHE_MS) return this.activityCache.weeks;
    const day = Math.floor(now / (24 * 60 * 60 * 1000));
    // 1970-01-01 was a Thursday: (day + 3) % 7 is days since Monday.
    const monday = (day - ((day + 3) % 7)) * 24 * 60 * 60 * 1000;
    const weeks = Array.from({ length: 12 }, (_, i) => {
      const start = monday - i * WEEK;
      const end = start + WEEK;
      return {
        week: start,
        statuses: this.q.statuses.get(idFloorForTime(start), idFloorForTime(end), start, end)?.n ?? 0,
        logins: this.q.logins.get(start, end)?.n ?? 0,
        registrations: this.q.registrations.get(start, end)?.n ?? 0,
      };
    });
    this.activityCache = { at: now, weeks };
    return weeks;
  }

  private activityCache: { at: number; weeks: WeekActivity[] } | null = null;

  private setting(key: string): string | undefined {
    return this.q.setting.get(key)?.value;
  }
}
