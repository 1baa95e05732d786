import { html, type Safe } from "./html.ts";
import { csrfField } from "./member-layout.ts";

/**
 * The fields of the members' pages, each with its label tied to it (and its hint, by
 * aria-describedby), so that every control has a name a screen reader says and a click target.
 */

const hintOf = (id: string, hint: string | undefined) => (hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : "");
const describedBy = (id: string, hint: string | undefined) => (hint ? html` aria-describedby="${id}-hint"` : "");

/**
 * A checkbox that is always sent: a hidden "0" before it, as Rails' check_box does, so that an
 * unticked box means "off" and a post that leaves the field out changes nothing.
 */
export function checkbox(name: string, label: string, checked: boolean, hint?: string): Safe {
  const id = `f-${name}`;
  return html`<div class="check"><input type="hidden" name="${name}" value="0"><input type="checkbox" id="${id}" name="${name}" value="1"${checked ? html` checked` : ""}${describedBy(id, hint)}>
<div><label for="${id}">${label}</label>${hintOf(id, hint)}</div></div>`;
}

export function select(name: string, label: string, options: [value: string, text: string][], selected: string, hint?: string): Safe {
  const id = `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label>${hintOf(id, hint)}<select id="${id}" name="${name}"${describedBy(id, hint)}>
${options.map(([value, text]) => html`<option value="${value}"${value === selected ? html` selected` : ""}>${text}</option>`)}
</select></div>`;
}

export function textField(
  name: string,
  label: string,
  options: { value?: string; type?: "text" | "password" | "url"; autocomplete?: string; required?: boolean; hint?: string; id?: string } = {},
): Safe {
  const id = options.id ?? `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label>${hintOf(id, options.hint)}<input type="${options.type ?? "text"}" id="${id}" name="${name}" value="${options.value ?? ""}"${
    options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ""
  }${options.required ? html` required` : ""}${describedBy(id, options.hint)}></div>`;
}

/** A form of one button (revoke, remove...): its ticket, hidden fields and the button. */
export function buttonForm(action: string, csrf: string, label: string, options: { fields?: Record<string, string>; kind?: "danger" | "secondary"; describe?: string } = {}): Safe {
  return html`<form class="inline" method="post" action="${action}">${csrfField(csrf)}${Object.entries(options.fields ?? {}).map(
    ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
  )}<button type="submit"${options.kind ? html` class="${options.kind}"` : ""}${options.describe ? html` aria-label="${options.describe}"` : ""}>${label}</button></form>`;
}

/** A form of the page (method post), its ticket first. */
export function postForm(action: string, csrf: string, body: Safe | Safe[], options: { multipart?: boolean; label?: string } = {}): Safe {
  return html`<form class="stack" method="post" action="${action}"${options.multipart ? html` enctype="multipart/form-data"` : ""}${options.label ? html` aria-label="${options.label}"` : ""}>
${csrfField(csrf)}
${body}
</form>`;
}

/** A date as people read it, in UTC (the pages have no script to read the browser's zone). */
export function when(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "never";
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
