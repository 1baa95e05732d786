import { escapeHtml } from "../text/format.ts";

/** HTML that is already safe: our sanitized status and bio HTML, or markup built by `html`. */
export class Safe {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

/** Marks HTML as safe; only for what the sanitizer produced or `html` built. */
export const raw = (value: string) => new Safe(value);

type Part = Safe | string | number | null | undefined | false | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Safe) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

/**
 * A template of markup whose every interpolation is escaped unless it is Safe (arrays are
 * joined, null/false/undefined leave nothing): a display name, alt text or spoiler with
 * `<script>` or quotes renders as text, in content and in attributes alike.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): Safe {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Safe(out);
}
