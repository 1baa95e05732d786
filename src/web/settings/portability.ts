import type { ExportStats, ImportView } from "../../models/imports.ts";
import { postForm, select, when } from "../forms.ts";
import { html } from "../html.ts";
import type { PageView } from "../member-layout.ts";

const TYPE_NAMES: Record<string, string> = {
  following: "Following list",
  blocks: "Blocking list",
  mutes: "Muting list",
  domain_blocks: "Domain blocking list",
  bookmarks: "Bookmarks",
  lists: "Lists",
};

const STATES: Record<string, string> = { queued: "Removing the old entries", running: "In progress", finished: "Finished" };

const REASONS: Record<string, string> = {
  unknown_account: "no such account",
  server_down: "server not answering",
  refused: "refused",
  not_found: "not found",
  invalid: "not readable",
};

function progress(view: ImportView) {
  return html`<progress max="${view.total}" value="${view.processed}" aria-label="Progress of import ${view.id}">${view.processed} of ${view.total}</progress>`;
}

/** Mastodon's /settings/imports: the form, and the recent imports with how far each got. */
export function importPage(imports: ImportView[], types: readonly string[], csrf: string): PageView {
  return {
    title: "Import",
    body: html`<p>Bring in the CSV files another Mastodon-compatible server exported: whom you follow, block or mute, your lists and bookmarks. Entries are worked through in the background, a few at a time for each server.</p>
${postForm(
  "/settings/import",
  csrf,
  [
    select("type", "Import type", types.map((t) => [t, TYPE_NAMES[t] ?? t]), types[0] ?? ""),
    select("mode", "Mode", [
      ["merge", "Merge: keep what you have and add these"],
      ["overwrite", "Overwrite: replace what you have with these"],
    ], "merge"),
    html`<div class="field"><label for="f-data">CSV file</label><input type="file" id="f-data" name="data" accept=".csv,text/csv" required></div>`,
    html`<div><button type="submit">Upload</button></div>`,
  ],
  { multipart: true },
)}
<h2>Recent imports</h2>
${
  imports.length === 0
    ? html`<p>No imports yet.</p>`
    : html`<p><a href="/settings/import">Refresh</a> to see how far they got.</p>
<table class="list"><thead><tr><th scope="col">Started</th><th scope="col">Type</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">Imported</th><th scope="col">Failed</th></tr></thead><tbody>
${imports.map(
  (v) => html`<tr><td><a href="/settings/imports/${String(v.id)}">${when(v.createdAt)}</a></td><td>${TYPE_NAMES[v.type] ?? v.type}${v.overwrite ? " (overwrite)" : ""}</td><td>${STATES[v.state] ?? v.state}</td>
<td>${progress(v)} ${v.processed} of ${v.total}</td><td>${v.imported}${v.awaiting > 0 ? ` (${v.awaiting} awaiting approval)` : ""}</td><td>${v.failed}</td></tr>
`,
)}</tbody></table>`
}`,
  };
}

/** One import's report: its counts and the entries that failed, why. */
export function importReportPage(v: ImportView): PageView {
  const failures = Object.entries(v.failures).filter(([, n]) => n > 0);
  return {
    title: `Import of ${when(v.createdAt)}`,
    body: html`<p><a href="/settings/import">Back to imports</a></p>
<dl class="fields">
<dt>Type</dt><dd>${TYPE_NAMES[v.type] ?? v.type} (${v.overwrite ? "overwrite" : "merge"})</dd>
<dt>State</dt><dd>${STATES[v.state] ?? v.state}${v.finishedAt ? `, ${when(v.finishedAt)}` : ""}</dd>
<dt>Progress</dt><dd>${progress(v)} ${v.processed} of ${v.total}</dd>
<dt>Imported</dt><dd>${v.imported}</dd>
${v.awaiting > 0 ? html`<dt>Awaiting approval</dt><dd>${v.awaiting}</dd>` : ""}
<dt>Failed</dt><dd>${v.failed}${failures.length ? ` (${failures.map(([k, n]) => `${n} ${REASONS[k] ?? k}`).join(", ")})` : ""}</dd>
</dl>
${
  v.failedEntries.length === 0
    ? ""
    : html`<h2>Failed entries</h2>
<table class="list"><thead><tr><th scope="col">Line</th><th scope="col">Entry</th><th scope="col">Why</th></tr></thead><tbody>
${v.failedEntries.map((f) => html`<tr><td>${f.line}</td><td><code>${f.entry}</code></td><td>${REASONS[f.reason] ?? f.reason}${f.detail ? `: ${f.detail}` : ""}</td></tr>
`)}</tbody></table>`
}`,
  };
}

export interface ExportFile {
  href: string;
  label: string;
  count: number;
}

/** Mastodon's /settings/export: every list as CSV, and the whole archive. */
export function exportPage(files: ExportFile[], archives: boolean, stats: ExportStats): PageView {
  return {
    title: "Export",
    body: html`<p>Take your data with you: the lists as the CSV files Mastodon's import reads, and an archive of your posts and media in Mastodon's layout.</p>
<table class="list"><thead><tr><th scope="col">Data</th><th scope="col">Entries</th><th scope="col"><span class="skip">Download</span></th></tr></thead><tbody>
${files.map((f) => html`<tr><td>${f.label}</td><td>${f.count}</td><td class="actions"><a href="${f.href}" download>Download ${f.href.split("/").pop()}</a></td></tr>
`)}</tbody></table>
<h2>Archive</h2>
${
  archives
    ? html`<p>Your ${stats.statusesCount === 1 ? "1 post" : `${stats.statusesCount} posts`}, media and profile, written as it downloads.</p>
<p><a href="/settings/export/archive.zip" download>Download archive.zip</a> · <a href="/settings/export/archive.tar.gz" download>Download archive.tar.gz</a></p>`
    : html`<p>Archives cannot be written on this server.</p>`
}`,
  };
}
