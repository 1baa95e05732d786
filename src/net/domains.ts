import { domainToASCII } from "node:url";

/**
 * Domains as Mastodon's moderation reads them: a rule is a host name, normalized by
 * TagManager#normalize_domain (trimmed, lower case, IDNA) and checked by DomainValidator
 * (below 256 characters, labels of 1 to 63 letters, digits or hyphens; no port).
 */
export type DomainCheck = { domain: string } | { error: "blank" | "invalid" };

/** Characters Addressable refuses in a host at all. */
const NOT_IN_A_HOST = /[\s<>{}/\\?#@"]/;
const LABEL = /^[a-z0-9-]{1,63}$/;

export function normalizeDomain(input: string | null | undefined): DomainCheck {
  const raw = (input ?? "").trim().replace(/\/$/, "");
  if (raw === "") return { error: "blank" };
  if (NOT_IN_A_HOST.test(raw)) return { error: "invalid" };
  const ascii = domainToASCII(raw).toLowerCase();
  if (ascii === "" || ascii.length >= 256 || !ascii.split(".").every((label) => LABEL.test(label))) return { error: "invalid" };
  return { domain: ascii };
}

/** The host of a URL, or of a stored account's domain (`host[:port]`), in lower case and without its port. */
export function hostOf(urlOrDomain: string | URL): string | null {
  if (urlOrDomain instanceof URL) return urlOrDomain.hostname.toLowerCase();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(urlOrDomain)) {
    try {
      return new URL(urlOrDomain).hostname.toLowerCase();
    } catch {
      return null;
    }
  }
  const value = urlOrDomain.trim().toLowerCase();
  if (value.startsWith("[")) return value.slice(0, value.indexOf("]") + 1) || null;
  const colon = value.indexOf(":");
  return (colon < 0 ? value : value.slice(0, colon)) || null;
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
 * reads it. Rules never carry a port, so this is what they are compared with.
 */
export const hostSql = (col: string) =>
  `lower(CASE WHEN ${col} LIKE '[%' THEN substr(${col}, 1, instr(${col}, ']')) ELSE substr(${col}, 1, instr(${col} || ':', ':') - 1) END)`;
