import type { FederationHealthReport } from "../../models/federation-health.ts";
import { when } from "../forms.ts";
import { html } from "../html.ts";
import type { PageView } from "../member-layout.ts";
import { trafficChart } from "./traffic-chart.ts";

/** Bytes as people read them (binary units, as `du -h`). */
export function bytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** /admin/federation: is federation healthy? The queue, the failing hosts, peers, inbox rate, relays, storage, and the day's chart. */
export function healthPage(r: FederationHealthReport, now: number): PageView {
  const { queue, peers, inbox, storage } = r;
  const sinceStart = now - inbox.countingSince < 60 * 60 * 1000;
  return {
    title: "Federation health",
    body: html`<h2>Deliveries</h2>
<p>${plural(queue.total, "message waits", "messages wait")} in the delivery queue: ${String(queue.due)} due now, ${String(queue.retrying)} held for a retry${queue.nextAt ? ` (the next at ${when(queue.nextAt)})` : ""}.</p>
<h3>Hosts whose deliveries failed in the last 7 days</h3>
${
  queue.failing.length === 0
    ? html`<p>None.</p>`
    : html`<table class="list"><caption class="visually-hidden">Failing hosts</caption>
<thead><tr><th scope="col">Host</th><th scope="col">Failed attempts</th><th scope="col">Last status</th><th scope="col">Last failure</th><th scope="col">Last error</th></tr></thead>
<tbody>${queue.failing.map(
        (f) => html`<tr><td>${f.domain}</td><td>${String(f.failures)}</td><td>${f.lastStatus === null ? "-" : String(f.lastStatus)}</td><td>${when(f.lastAt)}</td><td>${f.lastError}</td></tr>`,
      )}</tbody></table>`
}
<h2>The last day</h2>
${trafficChart(r.traffic)}
<p class="hint">Counted as they happen and written by the hour at most a minute late: a restart keeps what was written, a crash may lose the last minute's counts.</p>
<h2>Inbox</h2>
<p>${plural(inbox.lastMinute, "activity", "activities")} received in the last minute, ${String(inbox.lastHour)} in the last hour${sinceStart ? html` (since this server started, ${when(inbox.countingSince)})` : ""}.</p>
<h2>Peers</h2>
<p>${plural(peers.domains, "server", "servers")} known here, with ${plural(peers.accounts, "account", "accounts")} stored.</p>
${
  peers.top.length === 0
    ? ""
    : html`<table class="list"><caption>The servers with the most accounts known here</caption>
<thead><tr><th scope="col">Server</th><th scope="col">Accounts</th></tr></thead>
<tbody>${peers.top.map((p) => html`<tr><td>${p.domain}</td><td>${String(p.accounts)}</td></tr>`)}</tbody></table>`
}
<h2>Relays</h2>
${
  r.relays.length === 0
    ? html`<p>No relays. <a href="/admin/relays">Add one</a>.</p>`
    : html`<ul>${r.relays.map(
        ({ relay, failing }) => html`<li>${relay.url}: ${relay.state}, ${plural(relay.receivedCount, "status", "statuses")} brought${failing ? html`; deliveries failing (${failing.lastError})` : ""}</li>`,
      )}</ul>`
}
<h2>Storage</h2>
<table class="list"><caption class="visually-hidden">Storage used</caption>
<tbody>
<tr><th scope="row">Database</th><td>${bytes(storage.database)}${storage.wal === null ? " in PostgreSQL" : `, and ${bytes(storage.wal)} of write-ahead log`}</td></tr>
${
  storage.mediaBucket === null
    ? html`<tr><th scope="row">Media (uploads, avatars, emojis, archives)</th><td>${bytes(storage.media)}</td></tr>
<tr><th scope="row">Remote media cache</th><td>${bytes(storage.remoteCache)}${storage.remoteCacheLimit === null ? " (CACHE_REMOTE_MEDIA is off)" : ` of at most ${bytes(storage.remoteCacheLimit)}`}</td></tr>`
    : html`<tr><th scope="row">Media</th><td>in the bucket ${storage.mediaBucket} (MEDIA_STORAGE=s3): its size is in the store's console; ${bytes(storage.media)} of uploads waiting here</td></tr>`
}
</tbody></table>
<p class="hint">Files added up ${when(storage.measuredAt)}; added up again at most every five minutes.</p>`,
  };
}
