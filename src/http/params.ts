import { ApiError, notFound } from "../errors.ts";
import { parseId } from "../ids.ts";

/**
 * Request parameters the way Rails sees them, because Mastodon clients are written against
 * Rails: `a[]=1&a[]=2` is an array, `poll[options][]=x` nests, `a[0]=x` is an indexed array,
 * and query and body are merged into one bag (body wins).
 */
export type ParamValue = string | File | ParamValue[] | { [key: string]: ParamValue } | number | boolean | null;
export type Params = Record<string, ParamValue>;

const MAX_DEPTH = 8;

/** Keys that would reach an object's prototype: a parameter may never name them. */
const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);

/** Containers without a prototype: nothing a client names can land on Object.prototype. */
function bag(): Params {
  return Object.create(null) as Params;
}

function splitKey(key: string): string[] | null {
  const first = key.indexOf("[");
  if (first <= 0) return [key];
  const head = key.slice(0, first);
  const parts = [head];
  const rest = key.slice(first);
  const re = /\[([^\[\]]*)\]/gy;
  let consumed = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(rest)) !== null) {
    parts.push(m[1] as string);
    consumed = re.lastIndex;
  }
  // Malformed brackets ("a[b", "a]b[") keep the key flat, as Rack does.
  if (consumed !== rest.length || parts.length > MAX_DEPTH) return [key];
  return parts;
}

/** Adds one key/value pair to a nested bag. */
export function assignParam(target: Params, key: string, value: string | File) {
  const parts = splitKey(key);
  if (!parts || parts.some((p) => FORBIDDEN.has(p))) return;
  let node: any = target;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const last = i === parts.length - 1;
    const next = parts[i + 1];
    if (part === "") {
      // "[]": append; "a[][k]" starts a new hash unless the last one lacks k (Rack's rule).
      if (!Array.isArray(node)) return;
      if (last) {
        node.push(value);
        return;
      }
      const tail = node[node.length - 1];
      if (tail && typeof tail === "object" && !Array.isArray(tail) && !(tail instanceof File) && !Object.hasOwn(tail, next!)) {
        node = tail;
      } else {
        const fresh = bag();
        node.push(fresh);
        node = fresh;
      }
      continue;
    }
    if (Array.isArray(node)) return; // "a[]" then "a[x]": conflicting shapes, drop
    if (last) {
      node[part] = value;
      return;
    }
    const wantArray = next === "";
    let child = Object.hasOwn(node, part) ? node[part] : undefined;
    if (wantArray) {
      if (!Array.isArray(child)) {
        child = child === undefined || typeof child !== "object" ? [] : Object.values(child);
        node[part] = child;
      }
    } else if (child === undefined || typeof child !== "object" || child instanceof File) {
      child = bag();
      node[part] = child;
    }
    node = child;
  }
}

export function paramsFromEntries(entries: Iterable<[string, string | File]>): Params {
  const out = bag();
  for (const [k, v] of entries) assignParam(out, k, v);
  return out;
}

export function paramsFromQuery(url: string): Params {
  const q = url.indexOf("?");
  if (q < 0) return bag();
  return paramsFromEntries(new URLSearchParams(url.slice(q + 1)));
}

/** JSON bodies may still carry Rails-style keys ({"media_ids[]": [...]}); normalise them. */
export function paramsFromJson(body: unknown): Params {
  const out = bag();
  if (!body || typeof body !== "object" || Array.isArray(body)) return out;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (FORBIDDEN.has(k)) continue;
    const parts = splitKey(k);
    if (parts && parts.length > 1) {
      const values = Array.isArray(v) ? v : [v];
      for (const item of values) {
        if (typeof item === "string" || typeof item === "number" || typeof item === "boolean") assignParam(out, k, String(item));
        // A hash or list inside a Rails-style key has no place to go: refused, not dropped.
        else if (item !== null) throw new InvalidParam(k);
      }
    } else {
      out[k] = v as ParamValue;
    }
  }
  return out;
}

// ---- Reading: lenient about scalars (form values are strings), strict about shapes. ----

/**
 * A parameter of the wrong shape: an array, hash or file where one value is expected (or a
 * file where text is). Refused, never dropped: a dropped `scheduled_at[]` would publish at once.
 * Rendered as Rails' validation failure (422); a GET answers 400 (see app.ts).
 */
export class InvalidParam extends ApiError {
  constructor(public param: string) {
    super(422, `Validation failed: ${humanize(param)} is invalid`);
  }

  /** Reads validate no record: a bad request, in the same words. */
  forRead(): ApiError {
    return new ApiError(400, `${humanize(this.param)} is invalid`);
  }
}

/** Rails' humanize of an attribute name: `poll[expires_in]` is "Poll expires in", `in_reply_to_id` "In reply to". */
export function humanize(param: string): string {
  const words = param
    .replace(/_id$/, "")
    .split(/[\[\]_]+/)
    .filter((w) => w !== "" && !/^\d+$/.test(w))
    .join(" ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function scalar(v: ParamValue, name: string): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new InvalidParam(name);
}

export function str(v: ParamValue | undefined, name: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  return scalar(v, name);
}

// Rails' FALSE_VALUES; any other non-empty string is true.
const FALSE = new Set(["0", "false", "f", "off"]);

/** Rails' ActiveModel::Type::Boolean: anything not falsy is true. */
export function bool(v: ParamValue | undefined, name: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (s === "") return undefined;
    return !FALSE.has(s);
  }
  throw new InvalidParam(name);
}

/**
 * The range an integer parameter is clamped into. Rails' to_i has no bounds (Mastodon's
 * database refuses what is too large); SQLite refuses a LIMIT or an OFFSET past 2^63 (the
 * 500 `datatype mismatch`) and a date past year 275760 is no date, so every integer is read
 * with the range its use can hold.
 */
export interface IntRange {
  readonly min: number;
  readonly max: number;
}

/** An offset into a list (directory, search, trends): no list here is longer, so past it is the end. */
export const OFFSET: IntRange = { min: 0, max: 2 ** 31 - 1 };

const MAX_SECONDS = 1000 * 365 * 24 * 60 * 60;
/**
 * Seconds from now (expires_in, duration): a thousand years either way, past every deadline a
 * service accepts (its own validation still refuses what is too far) and still a date.
 */
export const SECONDS: IntRange = { min: -MAX_SECONDS, max: MAX_SECONDS };

/**
 * A number as Rails casts it (truncated), clamped into `range`; text that is no number reads
 * as absent (callers decide). Every integer parameter is read here.
 */
export function int(v: ParamValue | undefined, name: string, range: IntRange): number | undefined {
  if (v === undefined || v === null) return undefined;
  let n: number;
  if (typeof v === "number") {
    if (Number.isNaN(v)) return undefined;
    n = v;
  } else {
    if (typeof v !== "string") throw new InvalidParam(name);
    const s = v.trim();
    if (!/^[-+]?\d+(\.\d+)?$/.test(s)) return undefined;
    n = Number(s);
  }
  // Clamped before truncation: Infinity (a JSON 1e400) lands on a bound, not on NaN.
  return Math.trunc(Math.min(Math.max(n, range.min), range.max)) || 0;
}

/**
 * Mastodon's limit_param: the default when absent, else |limit| (text that is no number is 0,
 * as to_i reads it) capped at `max`, twice the default unless the endpoint says otherwise.
 */
export function limitParam(v: ParamValue | undefined, defaultLimit: number, max = defaultLimit * 2): number {
  if (v === undefined || v === null) return defaultLimit;
  return Math.abs(int(typeof v === "number" ? v : str(v, "limit"), "limit", { min: -max, max }) ?? 0);
}

/** An array of strings, from `a[]` arrays, `a[0]` hashes, or a lone value; nothing nested. */
export function strArray(v: ParamValue | undefined, name: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return [v];
  const items = Array.isArray(v) ? v : typeof v === "object" && !(v instanceof File) ? Object.values(v) : [v];
  const out: string[] = [];
  for (const item of items) if (item !== null) out.push(scalar(item, name));
  return out;
}

/** A hash (`a[b]=x`, a JSON object); anything else where one is expected is refused. */
export function obj(v: ParamValue | undefined, name: string): Record<string, ParamValue> | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "object" && !Array.isArray(v) && !(v instanceof File)) return v;
  throw new InvalidParam(name);
}

/** An uploaded file; a blank value is no file (as a form with an empty file input sends). */
export function file(v: ParamValue | undefined, name: string): File | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  if (v instanceof File) return v;
  throw new InvalidParam(name);
}

/** A record id from the path; anything that cannot be one is simply not found. */
export function pathId(value: string | undefined): number {
  const id = parseId(value);
  if (id === null) throw notFound();
  return id;
}
