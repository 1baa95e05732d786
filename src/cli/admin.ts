import { existsSync } from "node:fs";
import { SystemClock } from "../clock.ts";
import { loadConfig, type Config } from "../config.ts";
import { ApiError } from "../errors.ts";
import { IdGenerator, parseId } from "../ids.ts";
import { mediaStorageFor } from "../media-files/stores.ts";
import type { Services } from "../services/index.ts";
import { assembleServices } from "../server.ts";
import { registerConsequences } from "../services/consequences.ts";
import { loadInstanceKeys } from "../services/instance-keys.ts";
import { OPERATOR } from "../services/admin/audit-log.ts";
import { withServerDatabase } from "./database.ts";

// The operator's commands that go through the services (rules, the extended description...):
// each opens the database, builds the services as the server does, and closes it again. A
// running server reads what they write on its next request.

export class CliFailure extends Error {}

const out = (line: string) => process.stdout.write(`${line}\n`);

/** Splits arguments into --options (with `--name value` or `--name=value`) and positionals. */
export function parseArgs(args: string[], flags: string[] = []): { options: Map<string, string>; positional: string[] } {
  const options = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    if (eq > 0) options.set(arg.slice(2, eq), arg.slice(eq + 1));
    else if (flags.includes(arg.slice(2))) options.set(arg.slice(2), "true");
    else options.set(arg.slice(2), args[++i] ?? "");
  }
  return { options, positional };
}

export async function withServices<T>(run: (services: Services, config: Config) => T | Promise<T>): Promise<T> {
  const config = loadConfig();
  return withServerDatabase(config, async (database) => {
    const clock = new SystemClock();
    const ids = new IdGenerator(clock);
    ids.seed(await database.largestId());
    const storage = mediaStorageFor(config);
    const { services } = assembleServices({ config, port: database.port, clock, ids, storage, keys: await loadInstanceKeys(database.port) }, { federation: false });
    await services.federationDomains.load();
    // What follows a write, as in the server; the CLI has no streams and sends no activities.
    registerConsequences(services.events, services, {});
    // On PostgreSQL the running servers' streams hear of what the command did (loaded only there).
    const relay = database.postgres ? await (await import("../cross-process.ts")).publishCommandEvents(database.postgres.sql, services.events) : null;
    try {
      return await run(services, config);
    } catch (e) {
      if (e instanceof ApiError) throw new CliFailure(e.message.replace(/^Validation failed: /, ""));
      throw e;
    } finally {
      await services.writes.flush();
      await relay?.published();
    }
  });
}

export async function rulesCommand(args: string[]) {
  const [sub, ...rest] = args;
  const { options, positional } = parseArgs(rest);
  await withServices(async (services) => {
    const info = services.instanceInfo;
    switch (sub) {
      case "add": {
        if (positional[0] === undefined) throw new CliFailure('rules add needs the rule: rules add "<text>" [--hint "<hint>"]');
        out(String((await info.addRule(positional[0], options.get("hint") ?? "")).id));
        return;
      }
      case "list": {
        const rules = await info.rules();
        if (rules.length === 0) out("No rules yet.");
        for (const r of rules) out(`${r.id}\t${r.text}${r.hint ? `\t${r.hint}` : ""}`);
        return;
      }
      case "remove": {
        const id = parseId(positional[0]);
        try {
          await info.removeRule(id);
        } catch (e) {
          if (e instanceof ApiError) throw new CliFailure(`no rule with id ${positional[0] ?? ""}`);
          throw e;
        }
        out(`Removed rule ${id}`);
        return;
      }
      default:
        throw new CliFailure(`unknown rules command "${sub ?? ""}"; use rules add, list or remove`);
    }
  });
}

export async function descriptionCommand(args: string[]) {
  const [sub, ...rest] = args;
  const { options, positional } = parseArgs(rest);
  let text: string | undefined;
  if (sub === "set") {
    const file = options.get("file");
    text = file !== undefined ? await Bun.file(file === "-" ? "/dev/stdin" : file).text() : positional[0];
    if (text === undefined) throw new CliFailure('description set needs the text: description set "<text>" (or --file <file>, - for standard input)');
  }
  await withServices(async (services) => {
    const info = services.instanceInfo;
    if (sub === "set") {
      await info.setExtendedDescription(text as string);
      out("Extended description updated");
    } else if (sub === "show") {
      const { text: current, updatedAt } = await info.extendedDescriptionSource();
      out(updatedAt === null ? "No extended description yet." : `${current}\n(updated ${new Date(updatedAt).toISOString()})`);
    } else {
      throw new CliFailure(`unknown description command "${sub ?? ""}"; use description set or show`);
    }
  });
}

export async function reportsCommand(args: string[]) {
  const [sub, ...rest] = args;
  const { options, positional } = parseArgs(rest, ["all"]);
  await withServices(async (services) => {
    const acct = async (id: number) => {
      const a = await services.accounts.get(id);
      return a ? (a.domain === null ? a.username : `${a.username}@${a.domain}`) : `#${id}`;
    };
    switch (sub) {
      case "list": {
        const rows = await services.reports.list(options.has("all"));
        if (rows.length === 0) out(options.has("all") ? "No reports." : "No unresolved reports.");
        // One line each: id, when, state, category, who reported whom, the statuses, the comment.
        for (const { report, statusIds, ruleIds } of rows) {
          const state = report.actionTakenAt === null ? "open" : `resolved ${new Date(report.actionTakenAt).toISOString()}`;
          const extra = [statusIds.length ? `statuses ${statusIds.join(",")}` : "", ruleIds ? `rules ${ruleIds.join(",")}` : "", report.forwarded ? "forwarded" : ""].filter(Boolean);
          out(
            [report.id, new Date(report.createdAt).toISOString(), state, report.category, `${await acct(report.accountId)} -> ${await acct(report.targetAccountId)}`, extra.join(" "), JSON.stringify(report.comment)].join("\t"),
          );
        }
        return;
      }
      case "resolve": {
        // As staff resolve one, into the audit log (by the operator).
        const id = parseId(positional[0]);
        if (id === null || !(await services.adminReports.find(id))) throw new CliFailure(`no report with id ${positional[0] ?? ""}`);
        const resolved = await services.adminReports.resolve(OPERATOR, id);
        out(`Resolved report ${resolved.report.id}`);
        return;
      }
      default:
        throw new CliFailure(`unknown reports command "${sub ?? ""}"; use reports list or resolve`);
    }
  });
}

export async function emojiCommand(args: string[]) {
  const [sub, ...rest] = args;
  const { options, positional } = parseArgs(rest);
  let image: Uint8Array | undefined;
  if (sub === "add") {
    const [shortcode, file] = positional;
    if (!shortcode || !file) throw new CliFailure("emoji add needs a shortcode and an image: emoji add <shortcode> <image-file> [--category <name>]");
    const source = Bun.file(file);
    if (!(await source.exists())) throw new CliFailure(`${file}: ${existsSync(file) ? "a folder, not an image file" : "no such file"}`);
    image = new Uint8Array(await source.arrayBuffer());
  }
  await withServices(async (services) => {
    const emojis = services.customEmojis;
    switch (sub) {
      case "add": {
        const row = await emojis.add(positional[0] as string, image as Uint8Array, { category: options.get("category") });
        out(`Added :${row.shortcode}: ${emojis.entity(row).url}`);
        return;
      }
      case "list": {
        const rows = await emojis.list();
        if (rows.length === 0) out("No custom emojis yet.");
        for (const r of rows) out([`:${r.shortcode}:`, r.category ?? "", emojis.entity(r).url].join("\t"));
        return;
      }
      case "remove": {
        const shortcode = (positional[0] ?? "").replace(/^:|:$/g, "");
        if (!(await emojis.find(shortcode))) throw new CliFailure(`no custom emoji :${shortcode}:`);
        // The command must not exit before the files are gone.
        await emojis.removeFiles(await emojis.remove(shortcode));
        out(`Removed :${shortcode}:`);
        return;
      }
      default:
        throw new CliFailure(`unknown emoji command "${sub ?? ""}"; use emoji add, list or remove`);
    }
  });
}

export async function announcementsCommand(args: string[]) {
  const [sub, ...rest] = args;
  const { options, positional } = parseArgs(rest, ["all-day"]);
  const time = (name: string): number | null => {
    const raw = options.get(name);
    if (raw === undefined) return null;
    const ms = Date.parse(raw);
    if (Number.isNaN(ms)) throw new CliFailure(`--${name}: "${raw}" is not a date and time (ISO 8601, e.g. 2026-12-01T18:00:00Z)`);
    return ms;
  };
  await withServices(async (services) => {
    const announcements = services.announcements;
    const iso = (ms: number | null) => (ms === null ? "" : new Date(ms).toISOString());
    switch (sub) {
      case "create": {
        if (positional[0] === undefined) throw new CliFailure('announcements create needs the text: announcements create "<text>" [--starts-at <time> --ends-at <time>] [--all-day]');
        const row = await announcements.create({ text: positional[0], startsAt: time("starts-at"), endsAt: time("ends-at"), allDay: options.has("all-day") });
        out(String(row.id));
        return;
      }
      case "list": {
        const rows = await announcements.all();
        if (rows.length === 0) out("No announcements.");
        for (const r of rows) out([r.id, iso(r.publishedAt), r.startsAt === null ? "" : `${iso(r.startsAt)} - ${iso(r.endsAt)}${r.allDay ? " (all day)" : ""}`, JSON.stringify(r.text)].join("\t"));
        return;
      }
      case "delete": {
        try {
          await announcements.remove(parseId(positional[0]));
        } catch (e) {
          if (e instanceof ApiError) throw new CliFailure(`no announcement with id ${positional[0] ?? ""}`);
          throw e;
        }
        out(`Deleted announcement ${positional[0]}`);
        return;
      }
      default:
        throw new CliFailure(`unknown announcements command "${sub ?? ""}"; use announcements create, list or delete`);
    }
  });
}
