import { asc, eq, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import type { InstanceRuleRow } from "../db/schema.ts";
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
 * On the database port (issue 31); its writes join the caller's transaction (AdminInstance's,
 * with its audit log entry).
 */
const ACTIVITY_CACHE_MS = 60 * 60 * 1000;

export interface InstanceStats {
  userCount: number;
  statusCount: number;
  /** Other servers this one knows accounts of (Mastodon's domain_count). */
  domainCount: number;
}

export class InstanceInfo {
  private q;
  private p;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
    /** REGISTRATIONS: the mode while no admin has chosen one. */
    private defaultRegistrations: RegistrationsMode,
  ) {
    const { instanceRules, instanceSettings } = port.tables;
    const p = sql.placeholder;
    // Built once: drizzle spends more building a query than SQLite running it (docs/architecture.md).
    this.q = {
      rules: port.orm.select().from(instanceRules).orderBy(asc(instanceRules.position), asc(instanceRules.id)).prepare(),
      lastPosition: port.orm.select({ p: sql<number | null>`max(${instanceRules.position})`.mapWith(Number) }).from(instanceRules).prepare(),
      removeRule: port.orm.delete(instanceRules).where(eq(instanceRules.id, p("id"))).returning({ id: instanceRules.id }).prepare(),
      setting: port.orm.select({ value: instanceSettings.value }).from(instanceSettings).where(eq(instanceSettings.key, p("key"))).prepare(),
      save: port.orm
        .insert(instanceSettings)
        .values({ key: p("key"), value: p("value") } as never)
        .onConflictDoUpdate({ target: instanceSettings.key, set: { value: sql`excluded.value` } })
        .prepare(),
      forget: port.orm.delete(instanceSettings).where(eq(instanceSettings.key, p("key"))).prepare(),
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

  async rules(): Promise<InstanceRuleRow[]> {
    return (await this.q.rules.execute()) as InstanceRuleRow[];
  }

  /** A rule after the others (in the caller's transaction, or in its own: the last position is read first). */
  async addRule(text: string, hint = ""): Promise<InstanceRuleRow> {
    const trimmed = text.trim();
    const errors: string[] = [];
    if (trimmed === "") errors.push("Text can't be blank");
    else if (trimmed.length > RULE_TEXT_LIMIT) errors.push(`Text is too long (maximum is ${RULE_TEXT_LIMIT} characters)`);
    if (errors.length) throw validationFailed(...errors);
    const now = this.clock.now();
    return this.port.transaction(async () => {
      const [last] = (await this.q.lastPosition.execute()) as { p: number | null }[];
      const row: InstanceRuleRow = { id: this.ids.next(), text: trimmed, hint: hint.trim(), position: (last?.p ?? -1) + 1, createdAt: now, updatedAt: now };
      await this.port.orm.insert(this.port.tables.instanceRules).values(row);
      return row;
    });
  }

  async removeRule(id: number | null): Promise<void> {
    if (id === null || ((await this.q.removeRule.execute({ id })) as unknown[]).length === 0) throw notFound();
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

  async setExtendedDescription(text: string): Promise<void> {
    const now = String(this.clock.now());
    await this.port.transaction(async () => {
      for (const [key, value] of [[DESCRIPTION_KEY, text.trim()], [DESCRIPTION_UPDATED_KEY, now]] as const) await this.q.save.execute({ key, value });
    });
  }

  /** Who may sign up now: the mode an admin saved (it wins over REGISTRATIONS), else REGISTRATIONS. */
  async registrationsMode(): Promise<{ mode: RegistrationsMode; saved: boolean }> {
    const [stored] = (await this.q.setting.execute({ key: REGISTRATIONS_KEY })) as { value: string }[];
    const mode = MODES.find((m) => m === stored?.value);
    return mode ? { mode, saved: true } : { mode: this.defaultRegistrations, saved: false };
  }

  /** The REGISTRATIONS setting, which applies while no mode is saved. */
  get registrationsSetting(): RegistrationsMode {
    return this.defaultRegistrations;
  }

  /** Saves the mode (null: forget it, so that REGISTRATIONS applies again). */
  async setRegistrationsMode(mode: RegistrationsMode | null): Promise<void> {
    if (mode === null) await this.q.forget.execute({ key: REGISTRATIONS_KEY });
    else await this.q.save.execute({ key: REGISTRATIONS_KEY, value: mode });
  }

  /** Mastodon's instance activity: the last 12 ISO weeks (Monday to Monday, UTC), this one first. */
  /** The counts the instance documents, NodeInfo and the about page show (the documents keep what they built until the database changes). */
  async stats(): Promise<InstanceStats> {
    const row = await this.port.get<{ users: number; statuses: number }>("SELECT count(*) AS users, coalesce(sum(statuses_count), 0) AS statuses FROM accounts WHERE domain IS NULL");
    // Number(): PostgreSQL's sum of bigints is numeric, which its driver gives as text.
    return { userCount: Number(row?.users ?? 0), statusCount: Number(row?.statuses ?? 0), domainCount: (await this.peers()).length };
  }

  /**
   * The servers this one knows accounts of, by host name (a port dropped), as Mastodon's
   * /api/v1/instance/peers lists the domains of its remote accounts.
   */
  async peers(): Promise<string[]> {
    const rows = await this.port.all<{ domain: string }>("SELECT DISTINCT domain FROM accounts WHERE domain IS NOT NULL");
    return [...new Set(rows.map((r) => r.domain.replace(/:\d+$/, "").toLowerCase()))].sort();
  }

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
}
