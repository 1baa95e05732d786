import { validationFailed } from "../../errors.ts";
import { accountDomain, normalizeDomain } from "../../net/domains.ts";
import { normalizeLanguage } from "../../text/languages.ts";
import { CsvError, parseCsv, type CsvRecord } from "./csv.ts";

/**
 * The files of Mastodon's export page, as its import reads them (Form::Import): which columns
 * each type has, what a file without a header row is taken to hold, and the limits.
 */

export const IMPORT_TYPES = ["following", "blocks", "mutes", "domain_blocks", "bookmarks", "lists"] as const;
export type ImportType = (typeof IMPORT_TYPES)[number];

/** Mastodon's Form::Import::ROWS_PROCESSING_LIMIT. */
export const MAX_IMPORT_ROWS = 20_000;
/** Half of Mastodon's 20 MB: a 20,000-line following file with every column is under 2 MB. */
export const MAX_IMPORT_BYTES = 10 * 1024 * 1024;

/** The columns Mastodon writes (and its import expects) for each type. */
const EXPECTED_HEADERS: Record<ImportType, string[]> = {
  following: ["Account address", "Show boosts", "Notify on new posts", "Languages"],
  blocks: ["Account address"],
  mutes: ["Account address", "Hide notifications"],
  domain_blocks: ["#domain"],
  bookmarks: ["#uri"],
  lists: ["List name", "Account address"],
};

/** What a file without a header row holds, column by column (Form::Import#default_csv_headers). */
const DEFAULT_HEADERS: Record<ImportType, string[]> = {
  following: ["Account address"],
  blocks: ["Account address"],
  mutes: ["Account address"],
  domain_blocks: ["#domain"],
  bookmarks: ["#uri"],
  lists: ["List name", "Account address"],
};

/** A first cell that makes the first line a header row. */
const KNOWN_FIRST_HEADERS = new Set(["Account address", "#domain", "#uri", "List name"]);

/** Columns only one type has: a file that has one is of that type (Form::Import#guessed_type). */
const OWN_COLUMNS: [string, ImportType][] = [
  ["Show boosts", "following"],
  ["Notify on new posts", "following"],
  ["Languages", "following"],
  ["Hide notifications", "mutes"],
  ["List name", "lists"],
  ["#domain", "domain_blocks"],
  ["#uri", "bookmarks"],
];

/** One line of a file, as read: what the worker acts on. */
export interface ImportEntry {
  /** `user` (an account of this server) or `user@host[:port]`. */
  acct?: string;
  reblogs?: boolean;
  notify?: boolean;
  languages?: string[] | null;
  hideNotifications?: boolean;
  domain?: string;
  uri?: string;
  list?: string;
}

export interface ParsedEntry {
  line: number;
  entry: ImportEntry;
  /** The other server the entry needs, or null. */
  host: string | null;
}

const invalid = (message: string) => validationFailed(`Data ${message}`);

/** Mastodon's username rules: remote accounts may have dots and hyphens inside, local ones not. */
const REMOTE_USERNAME = /^[a-z0-9_]+([.-]+[a-z0-9_]+)*$/i;
const LOCAL_USERNAME = /^[a-z0-9_]+$/i;

/**
 * Reads a file of the given type into its entries, or refuses it whole (422, nothing is
 * kept): not UTF-8 CSV, empty, columns of another type, a value that is not what its column
 * holds, more than MAX_IMPORT_ROWS entries. `ownDomain` is this server's (host[:port]):
 * addresses there are local accounts, URLs there local statuses.
 */
export function readImportFile(type: ImportType, bytes: Uint8Array, ownDomain: string): ParsedEntry[] {
  if (bytes.byteLength > MAX_IMPORT_BYTES) throw invalid(`is too large (at most ${MAX_IMPORT_BYTES / 1024 / 1024} MB)`);
  let records: CsvRecord[];
  try {
    records = parseCsv(bytes);
  } catch (e) {
    if (e instanceof CsvError) throw invalid(`is not a valid CSV file: ${e.message}`);
    throw e;
  }
  if (records.length === 0) throw invalid("is an empty CSV file");
  const firstCell = records[0]!.fields[0]?.trim() ?? "";
  const hasHeader = KNOWN_FIRST_HEADERS.has(firstCell);
  const headers = hasHeader ? records[0]!.fields.map((h) => h.trim()) : DEFAULT_HEADERS[type];
  const other = OWN_COLUMNS.find(([column, of]) => of !== type && headers.includes(column));
  if (other || !DEFAULT_HEADERS[type].every((h) => headers.includes(h))) {
    throw invalid(`is incompatible with the selected import type (${type}): its columns are ${headers.join(", ")}${other ? `, as in a ${other[1]} file` : ""}`);
  }
  const rows = hasHeader ? records.slice(1) : records;
  if (rows.length > MAX_IMPORT_ROWS) throw invalid(`contains more than ${MAX_IMPORT_ROWS} rows`);
  const column = (name: string) => EXPECTED_HEADERS[type].includes(name) ? headers.indexOf(name) : -1;
  const at = (record: CsvRecord, name: string): string | undefined => {
    const i = column(name);
    return i < 0 ? undefined : record.fields[i];
  };
  const own = ownDomain.toLowerCase();
  return rows.map((record) => readEntry(type, record, at, own));
}

function readEntry(type: ImportType, record: CsvRecord, at: (r: CsvRecord, name: string) => string | undefined, own: string): ParsedEntry {
  const line = record.line;
  const fail = (message: string) => invalid(`line ${line}: ${message}`);
  const account = () => {
    const raw = (at(record, "Account address") ?? "").trim().replace(/^@/, "");
    const parsed = parseAcct(raw, own);
    if (!parsed) throw fail(raw === "" ? "no account address" : `"${raw}" is not an account address`);
    return parsed;
  };
  const flag = (name: string): boolean | undefined => {
    const raw = at(record, name)?.trim().toLowerCase();
    if (raw === undefined || raw === "") return undefined;
    // As Rails casts a boolean: what is not one of the false words is true.
    return !["false", "f", "0", "off", "no", "n"].includes(raw);
  };
  switch (type) {
    case "following": {
      const { acct, host } = account();
      const languages = at(record, "Languages")
        ?.split(",")
        .map((l) => normalizeLanguage(l))
        .filter((l): l is string => l !== null);
      return { line, host, entry: { acct, reblogs: flag("Show boosts"), notify: flag("Notify on new posts"), languages: languages?.length ? [...new Set(languages)] : null } };
    }
    case "blocks":
      return { line, ...hostAndEntry(account()) };
    case "mutes": {
      const { acct, host } = account();
      return { line, host, entry: { acct, hideNotifications: flag("Hide notifications") } };
    }
    case "lists": {
      const list = (at(record, "List name") ?? "").trim();
      if (list === "") throw fail("no list name");
      const { acct, host } = account();
      return { line, host, entry: { list, acct } };
    }
    case "domain_blocks": {
      const raw = (at(record, "#domain") ?? "").trim();
      const checked = normalizeDomain(raw);
      if ("error" in checked) throw fail(`"${raw}" is not a domain`);
      return { line, host: null, entry: { domain: checked.domain } };
    }
    case "bookmarks": {
      const raw = (at(record, "#uri") ?? "").trim();
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw fail(`"${raw}" is not a URL`);
      }
      if (url.protocol !== "https:" && url.protocol !== "http:") throw fail(`"${raw}" is not an http(s) URL`);
      const host = accountDomain(url.host);
      return { line, host: host === own ? null : host, entry: { uri: raw } };
    }
  }
}

function hostAndEntry(parsed: { acct: string; host: string | null }): { host: string | null; entry: ImportEntry } {
  return { host: parsed.host, entry: { acct: parsed.acct } };
}

/**
 * `user` or `user@domain[:port]`, as stored: the domain normalized, this server's own
 * dropped (the account is local). Null when it is no address.
 */
export function parseAcct(raw: string, ownDomain: string): { acct: string; host: string | null } | null {
  const at = raw.indexOf("@");
  const username = at < 0 ? raw : raw.slice(0, at);
  if (at < 0) return LOCAL_USERNAME.test(username) ? { acct: username, host: null } : null;
  if (!REMOTE_USERNAME.test(username) || username.length > 2048) return null;
  const typed = raw.slice(at + 1);
  if (!/^[A-Za-z0-9.\-\[\]:]+$/.test(typed)) return null;
  const domain = accountDomain(typed);
  if (domain === null || !/^[a-z0-9.-]+(:\d{1,5})?$/.test(domain)) return null;
  if (domain === ownDomain) return LOCAL_USERNAME.test(username) ? { acct: username, host: null } : null;
  return { acct: `${username}@${domain}`, host: domain };
}
