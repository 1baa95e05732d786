import type { TrafficHour } from "../../models/federation-health.ts";
import { html, type Safe } from "../html.ts";

const WIDTH = 720;
const HEIGHT = 220;
const LEFT = 44;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 28;

const hourLabel = (ms: number) => `${new Date(ms).toISOString().slice(11, 13)}:00`;

/** A tick's value that reads well: 1, 2 or 5 times a power of ten, at least `max`. */
function niceCeiling(max: number): number {
  if (max <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * The last day's deliveries and received activities, drawn here as SVG (the pages run no
 * script): per hour, a bar of deliveries (the failed ones stacked on top, in their own
 * colour) beside a bar of received activities. A screen reader is given its title and a
 * summary, and the numbers themselves are in the table after it.
 */
export function trafficChart(hours: TrafficHour[]): Safe {
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const top = niceCeiling(Math.max(0, ...hours.flatMap((h) => [h.attempted, h.received])));
  const y = (v: number) => TOP + plotH - (v / top) * plotH;
  const slot = plotW / hours.length;
  const bar = Math.max(2, (slot - 4) / 2);
  const totals = hours.reduce((t, h) => ({ attempted: t.attempted + h.attempted, failed: t.failed + h.failed, received: t.received + h.received }), { attempted: 0, failed: 0, received: 0 });
  const ticks = [0, top / 2, top];
  const rect = (cls: string, x: number, from: number, to: number, label: string) =>
    to > from ? html`<rect class="${cls}" x="${x.toFixed(1)}" y="${y(to).toFixed(1)}" width="${bar.toFixed(1)}" height="${(y(from) - y(to)).toFixed(1)}"><title>${label}</title></rect>` : "";
  return html`<figure class="chart">
<svg viewBox="0 0 ${String(WIDTH)} ${String(HEIGHT)}" role="img" aria-labelledby="traffic-title traffic-desc" xmlns="http://www.w3.org/2000/svg">
<title id="traffic-title">Deliveries and received activities, hour by hour, the last 24 hours (UTC)</title>
<desc id="traffic-desc">In all: ${String(totals.attempted)} deliveries (${String(totals.failed)} failed) and ${totals.received === 1 ? "1 activity" : `${totals.received} activities`} received. The numbers of each hour are in the table after the chart.</desc>
${ticks.map(
  (t) => html`<line class="grid" x1="${String(LEFT)}" x2="${String(WIDTH - RIGHT)}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}"></line><text class="axis" x="${String(LEFT - 6)}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${String(t)}</text>`,
)}
${hours.map((h, i) => {
  const x = LEFT + i * slot + 2;
  const sent = h.attempted - h.failed;
  return html`<g>${rect("sent", x, 0, sent, `${hourLabel(h.hour)}: ${sent} delivered`)}${rect("failed", x, sent, h.attempted, `${hourLabel(h.hour)}: ${h.failed} failed`)}${rect("received", x + bar, 0, h.received, `${hourLabel(h.hour)}: ${h.received} received`)}${
    i % 6 === 0 ? html`<text class="axis" x="${(x + bar).toFixed(1)}" y="${String(HEIGHT - 8)}" text-anchor="middle">${hourLabel(h.hour)}</text>` : ""
  }</g>`;
})}
</svg>
<figcaption><ul class="legend"><li><span class="swatch sent"></span>Delivered</li><li><span class="swatch failed"></span>Failed deliveries</li><li><span class="swatch received"></span>Received</li></ul></figcaption>
</figure>
<details class="numbers"><summary>The numbers, hour by hour</summary>
<table class="list"><caption class="visually-hidden">Deliveries and received activities by hour (UTC)</caption>
<thead><tr><th scope="col">Hour (UTC)</th><th scope="col">Deliveries</th><th scope="col">Failed</th><th scope="col">Received</th></tr></thead>
<tbody>${hours.map(
    (h) => html`<tr><td>${new Date(h.hour).toISOString().slice(0, 13).replace("T", " ")}:00</td><td>${String(h.attempted)}</td><td>${String(h.failed)}</td><td>${String(h.received)}</td></tr>`,
  )}</tbody></table></details>`;
}
