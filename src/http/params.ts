import { notFound } from "../errors.ts";
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
      }
    } else {
      out[k] = v as ParamValue;
    }
  }
  return out;
}

// ---- Coercion: Mastodon is lenient about types (form values are strings), so are we. ----

export function str(v: ParamValue | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

// Rails' FALSE_VALUES; any other non-empty string is true.
const FALSE = new Set(["0", "false", "f", "off"]);

/** Rails' ActiveModel::Type::Boolean: anything not falsy is true. */
export function bool(v: ParamValue | undefined): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (s === "") return undefined;
    return !FALSE.has(s);
  }
  return undefined;
}

export function int(v: ParamValue | undefined): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : undefined;
  if (typeof v !== "string") return undefined;
  const s = v.trim();
  if (!/^[-+]?\d+(\.\d+)?$/.test(s)) return undefined;
  return Math.trunc(Number(s));
}

/** An array of strings, from `a[]` arrays, `a[0]` hashes, or a lone value. */
export function strArray(v: ParamValue | undefined): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.map(str).filter((s): s is string => s !== undefined);
  if (typeof v === "object" && !(v instanceof File)) return Object.values(v).map(str).filter((s): s is string => s !== undefined);
  const s = str(v);
  return s === undefined ? undefined : [s];
}

export function obj(v: ParamValue | undefined): Record<string, ParamValue> | undefined {
  if (v && typeof v === "object" && !Array.isArray(v) && !(v instanceof File)) return v;
  return undefined;
}

export function file(v: ParamValue | undefined): File | undefined {
  return v instanceof File ? v : undefined;
}

/** A record id from the path; anything that cannot be one is simply not found. */
export function pathId(value: string | undefined): number {
  const id = parseId(value);
  if (id === null) throw notFound();
  return id;
}
