export interface HtmlForm {
  action: string;
  method: string;
  /** Hidden and filled inputs, as the browser would submit them. */
  fields: Record<string, string>;
  buttons: { name: string; value: string; label: string }[];
}

export function decodeEntities(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`, "i").exec(tag);
  return m ? decodeEntities(m[1] as string) : undefined;
}

/** The forms of a page, parsed the simple way (our pages are plain HTML). */
export function parseForms(html: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const open = m[1] as string;
    const inner = m[2] as string;
    const fields: Record<string, string> = {};
    for (const input of inner.matchAll(/<input\b[^>]*>/gi)) {
      const name = attr(input[0], "name");
      if (name) fields[name] = attr(input[0], "value") ?? "";
    }
    const buttons = [...inner.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/gi)].map((b) => ({
      name: attr(b[0], "name") ?? "",
      value: attr(b[0], "value") ?? "",
      label: b[2] as string,
    }));
    forms.push({ action: attr(`<x ${open}>`, "action") ?? "", method: (attr(`<x ${open}>`, "method") ?? "get").toLowerCase(), fields, buttons });
  }
  return forms;
}
