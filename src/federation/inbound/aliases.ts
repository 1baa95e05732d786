import type { Actor } from "@fedify/fedify/vocab";
import { httpUrlOrNull } from "../../net/http-url.ts";

/** More aliases than any account names; the rest of a longer list is not read. */
const MAX_ALIASES = 100;

/**
 * The accounts an actor says it also is (alsoKnownAs), as Mastodon reads them: from the
 * document as it came, strings or objects with an id, besides what Fedify's parser saw.
 * GoToSocial (v0.19) writes `"alsoKnownAs": "as:alsoKnownAs"` in its @context, without
 * `"@type": "@id"`: under JSON-LD its values are plain strings, not IRIs, and Fedify finds no
 * alias at all, so a Move from GoToSocial would never be believed. Only http(s) IRIs are kept.
 */
export function aliasesOf(actor: Actor): string[] {
  const found = new Set(actor.aliasIds.map((alias) => alias.href));
  for (const value of rawValues(actor)) {
    const id = typeof value === "string" ? value : typeof value === "object" && value !== null ? ((value as Record<string, unknown>).id ?? (value as Record<string, unknown>)["@id"]) : null;
    const url = typeof id === "string" ? httpUrlOrNull(id) : null;
    if (url !== null) found.add(url);
    if (found.size >= MAX_ALIASES) break;
  }
  return [...found].filter((alias) => httpUrlOrNull(alias) !== null);
}

/** `alsoKnownAs` of the JSON the actor was parsed from (Fedify keeps it), one value or many. */
function rawValues(actor: Actor): unknown[] {
  const raw = (actor as unknown as { _cachedJsonLd?: unknown })._cachedJsonLd;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
  const value = (raw as Record<string, unknown>).alsoKnownAs;
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).slice(0, MAX_ALIASES);
}
