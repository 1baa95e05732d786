import { domainToASCII } from "node:url";

/**
 * Domains as Mastodon's moderation reads them: a rule is a host name, normalized by
 * TagManager#normalize_domain (trimmed, lower case, IDNA, a single trailing dot dropped, as
 * Addressable's normalized_host does) and checked by DomainValidator (below 256 characters,
 * labels of 1 to 63 letters, digits or hyphens; no port).
 *
 * Every host a rule is compared with goes through normalizeHost first (hostOf, accountDomain),
 * so that `BLOCKED.example.`, `blocked.example:8443` or an IDN in Unicode is the domain a rule
 * on `blocked.example` names: a server's own spelling of its host never slips past a rule.
 */
export type DomainCheck = { domain: string } | { error: "blank" | "invalid" };

/** Characters Addressable refuses in a host at all. */
const NOT_IN_A_HOST = /[\s<>{}/\\?#@"]/;
const LABEL = /^[a-z0-9-]{1,63}$/;

export function normalizeDomain(input: string | null | undefined): DomainCheck {
  const raw = (input ?? "").trim().replace(/\/$/, "");
  if (raw === "") return { error: "blank" };
  if (NOT_IN_A_HOST.test(raw)) return { error: "invalid" };
  let ascii = domainToASCII(raw).toLowerCase();
  if (/[^.]\.$/.test(ascii)) ascii = ascii.slice(0, -1);
  if (ascii === "" || ascii.length >= 256 || !ascii.split(".").every((label) => LABEL.test(label))) return { error: "invalid" };
  return { domain: ascii };
}

/**
 * A host (no port) as rules are compared with it: lower case, IDNA (punycode), without
 * trailing dots (`blocked.example.` is blocked.example to DNS). An IPv6 literal stays in its
 * brackets. Null when it is no host at all.
 */
export function normalizeHost(host: string): string | null {
  const value = host.trim().toLowerCase();
  if (value.startsWith("[")) return value.length > 2 && value.endsWith("]") ? value : null;
  const ascii = domainToASCII(value.replace(/\.+$/, ""));
  return ascii === "" ? null : ascii;
}

/** The host of a URL, or of a stored account's domain (`host[:port]`), normalized and without its port. */
export function hostOf(urlOrDomain: string | URL): string | null {
  if (urlOrDomain instanceof URL) return normalizeHost(urlOrDomain.hostname);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(urlOrDomain)) {
    try {
      return normalizeHost(new URL(urlOrDomain).hostname);
    } catch {
      return null;
    }
  }
  const value = urlOrDomain.trim();
  if (value.startsWith("[")) return normalizeHost(value.slice(0, value.indexOf("]") + 1));
  const colon = value.indexOf(":");
  return normalizeHost(colon < 0 ? value : value.slice(0, colon));
}

/**
 * An account's domain as it is stored and looked up: `host[:port]` (a URL's `host`, or the
 * domain of an `acct:` handle) with its host normalized, the port kept (handles on a
 * non-default port name it). Null when it is none.
 */
export function accountDomain(hostAndPort: string): string | null {
  const parts = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(hostAndPort.trim());
  if (!parts) return null;
  const host = normalizeHost(parts[1]!);
  return host === null ? null : parts[2] ? `${host}:${parts[2]}` : host;
}

/**
 * The domain and every parent of it, longest first (Mastodon's DomainBlock.rule_for looks
 * these up: a rule for example.com covers social.example.com).
 */
export function domainAndParents(host: string): string[] {
  const labels = host.split(".");
  return labels.map((_, i) => labels.slice(i).join(".")).filter((d) => d !== "");
}

/**
 * SQL: the host of a stored account's `domain` column (`col`), its port dropped, as hostOf()
 * reads it. Rules never carry a port, so this is what they are compared with. Trailing dots
 * are dropped too, for rows stored before domains were normalized when stored.
 */
export const hostSql = (col: string) =>
  `rtrim(lower(CASE WHEN ${col} LIKE '[%' THEN substr(${col}, 1, instr(${col}, ']')) ELSE substr(${col}, 1, instr(${col} || ':', ':') - 1) END), '.')`;
