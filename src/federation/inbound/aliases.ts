import type { Actor } from "@fedify/fedify/vocab";
import { httpUrlOrNull } from "../../net/http-url.ts";

/** More aliases than any account names; the rest of a longer list is not read. */
const MAX_ALIASES = 100;

/**
 * The accounts an actor says it also is (alsoKnownAs), as Mastodon reads them: from the
 * document as it came (`document`, when at hand), strings or objects with an id, besides what
 * Fedify's parser saw. GoToSocial (v0.19) writes `"alsoKnownAs": "as:alsoKnownAs"` in its
 * @context, without `"@type": "@id"`: under JSON-LD its values are plain strings, not IRIs, and
 * Fedify finds no alias at all, so a Move from GoToSocial would never be believed. Only http(s)
 * IRIs are kept.
 */
export function aliasesOf(actor: Actor, document?: unknown): string[] {
  const found = new Set<string>();
  for (const alias of actor.aliasIds) {
    const url = httpUrlOrNull(alias);
    if (url !== null) found.add(url);
  }
  for (const value of rawValues(document)) {
    if (found.size >= MAX_ALIASES) break;
    const id = typeof value === "object" && value !== null ? ((value as Record<string, unknown>).id ?? (value as Record<string, unknown>)["@id"]) : value;
    const url = typeof id === "string" ? httpUrlOrNull(id) : null;
    if (url !== null) found.add(url);
  }
  return [...found];
}

/** `alsoKnownAs` of the compacted JSON document, one value or many. */
function rawValues(document: unknown): unknown[] {
  if (typeof document !== "object" || document === null || Array.isArray(document)) return [];
  const value = (document as Record<string, unknown>).alsoKnownAs;
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).slice(0, MAX_ALIASES);
}
