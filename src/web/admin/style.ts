/**
 * The admin pages' part of the one stylesheet (appended after the members' pages' part in
 * layout.ts): the health chart's colours in light and dark, the facts lists, action rows.
 */
export const ADMIN_PAGES_STYLE = `.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;margin:0 0 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0;overflow-wrap:anywhere}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}form.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end;margin:0 0 1rem}
nav.tabs{display:flex;gap:1rem;margin:0 0 1rem}nav.tabs a[aria-current=page]{font-weight:600;color:var(--fg)}
ul.reported{list-style:none;padding:0}ul.reported li{border-top:1px solid var(--line);padding:.5rem 0}ol.rules li{margin:.4rem 0}
textarea{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--muted);border-radius:.4rem;padding:.45rem .6rem;width:100%;box-sizing:border-box}
figure.chart{margin:0 0 .5rem}figure.chart svg{width:100%;height:auto}
.chart .grid{stroke:var(--line);stroke-width:1}.chart .axis{fill:var(--muted);font-size:11px}
.chart .sent,.swatch.sent{fill:var(--link);background:var(--link)}.chart .failed,.swatch.failed{fill:#b3261e;background:#b3261e}.chart .received,.swatch.received{fill:#2e8540;background:#2e8540}
@media (prefers-color-scheme:dark){.chart .failed,.swatch.failed{fill:#ff8a80;background:#ff8a80}.chart .received,.swatch.received{fill:#7bd88f;background:#7bd88f}}
ul.legend{display:flex;gap:1rem;list-style:none;padding:0;margin:.25rem 0;font-size:.9rem}.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:.15rem;margin-right:.35rem;vertical-align:-.05rem}
details.numbers summary{cursor:pointer;color:var(--link)}
`;
