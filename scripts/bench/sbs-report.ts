/**
 * The side-by-side benchmark's table (Markdown, as docs/benchmarks.md and the README quote it)
 * and the figures as JSON. Rates are given as the range of the runs; a ratio is of the means
 * (Rookery / GoToSocial: above 1 is better for Rookery's rates, below 1 for its CPU, memory
 * and start-up).
 */
import type { GtsPostRun, RookeryPostRun, Stage } from "./sbs-posting.ts";
import type { Run } from "./sbs-wrk.ts";

export interface Figures {
  date: string;
  machine: { cores: number; cpu: string; load: number[] };
  commit: string;
  gotosocial: { bin: string; version: string };
  options: Record<string, unknown>;
  startupMs: { gotosocial: number[]; rookery: number[] };
  idleRssMb: { gotosocial: number; rookery: number };
  afterRssMb: { gotosocial: number; rookery: number };
  quietAfterSeedSeconds: { gotosocial: number | null; rookery: number | null };
  reads: { label: string; path: { gotosocial: string; rookery: string }; gotosocial: Run[]; rookery: Run[] }[];
  posting: { gotosocial: GtsPostRun[]; rookery: RookeryPostRun[]; rookeryHas: string };
}

const n0 = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 0 });
const n1 = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 1 });
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const range = (xs: number[], f: (n: number) => string, unit: string) => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return f(lo) === f(hi) ? `${f(lo)}${unit}` : `${f(lo)}-${f(hi)}${unit}`;
};
const ratio = (r: number, g: number, bold: boolean) => {
  if (!Number.isFinite(r) || !Number.isFinite(g) || g === 0) return "-";
  const text = `${(r / g).toFixed(2)}x`;
  return bold ? `**${text}**` : text;
};
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A run that answered anything but 2xx, or lost sockets, is flagged: its rate is not of the endpoint. */
const flag = (runs: Run[]) => (runs.some((r) => r.non2xx > 0 || r.socketErrors > 0) ? " ⚠" : "");

export function table(f: Figures): string {
  const lines = [
    "| Endpoint | GoToSocial | Rookery | Rookery / GtS | CPU per request, GtS | Rookery | Rookery / GtS |",
    "|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const read of f.reads) {
    const g = read.gotosocial;
    const r = read.rookery;
    const rate = (runs: Run[]) => range(runs.map((x) => x.requestsPerSecond), n0, "/s") + flag(runs);
    const cpu = (runs: Run[]) => range(runs.map((x) => x.cpuUsPerRequest), n0, " µs");
    const rateRatio = mean(r.map((x) => x.requestsPerSecond)) / mean(g.map((x) => x.requestsPerSecond));
    const cpuRatio = mean(r.map((x) => x.cpuUsPerRequest)) / mean(g.map((x) => x.cpuUsPerRequest));
    lines.push(`| \`${read.label}\` | ${rate(g)} | ${rate(r)} | ${ratio(rateRatio, 1, rateRatio < 1.5)} | ${cpu(g)} | ${cpu(r)} | ${ratio(cpuRatio, 1, cpuRatio > 1 / 1.5)} |`);
  }
  const gp = f.posting.gotosocial;
  const rp = f.posting.rookery;
  if (gp.length && rp.length) {
    const gAccepted = gp.map((x) => x.acceptedPerSecond);
    const rAccepted = rp.map((x) => x.acceptedPerSecond);
    const all = (runs: { cpuUsPerPostAll: number }[]) => range(runs.map((x) => x.cpuUsPerPostAll), n0, " µs");
    const cpuAllRatio = mean(rp.map((x) => x.cpuUsPerPostAll)) / mean(gp.map((x) => x.cpuUsPerPostAll));
    lines.push(`| \`POST /api/v1/statuses\` accepted (CPU: until quiet again) | ${range(gAccepted, n0, "/s")}${flag(gp.map((x) => x.run))} | ${range(rAccepted, n0, "/s")}${flag(rp.map((x) => x.run))} | ${ratio(mean(rAccepted), mean(gAccepted), false)} | ${all(gp)} | ${all(rp)} | ${ratio(cpuAllRatio, 1, false)} |`);
    const done = rp.map((x) => x.fullyDonePerSecond);
    const doneText = done.every((x) => x !== null) ? range(done as number[], n0, "/s") : "not all done";
    const doneRatio = done.every((x) => x !== null) ? mean(done as number[]) / mean(gAccepted) : NaN;
    lines.push(`| posts fully done (Rookery: stored, home, streamed, delivered; GtS: accepted) | ${range(gAccepted, n0, "/s")} | ${doneText} | ${ratio(doneRatio, 1, doneRatio < 10)} | | | |`);
    const busy = gp.map((x) => (x.busySeconds === null ? "still busy" : `${n1(x.busySeconds)} s`)).join(", ");
    const rQuiet = rp.map((x) => (x.quietSeconds === null ? "still busy" : `${n1(x.quietSeconds)} s`)).join(", ");
    lines.push(`| busy after the posts, until CPU quiet | ${busy} | ${rQuiet} | | | | |`);
  }
  const { idleRssMb: idle, afterRssMb: after, startupMs: st } = f;
  lines.push(`| idle RSS after start (median of ${st.rookery.length}) | ${n0(idle.gotosocial)} MB | ${n0(idle.rookery)} MB | ${ratio(idle.rookery, idle.gotosocial, idle.rookery > idle.gotosocial / 3)} | | | |`);
  lines.push(`| RSS after the runs | ${n0(after.gotosocial)} MB | ${n0(after.rookery)} MB | ${ratio(after.rookery, after.gotosocial, false)} | | | |`);
  const gs = median(st.gotosocial);
  const rs = median(st.rookery);
  lines.push(`| start-up to the first answer (median of ${st.rookery.length}) | ${n0(gs)} ms | ${n0(rs)} ms | ${ratio(rs, gs, false)} | | | |`);
  return lines.join("\n");
}

const stage = (s: Stage) => (s.seconds === null ? `not reached (${n0(s.reached)})` : `${n1(s.seconds)} s`);

/** What each of Rookery's posting runs reached and when, from the start of wrk. */
export function postingDetail(f: Figures): string {
  const lines = f.posting.rookery.map((r, i) =>
    `Rookery posting run ${i + 1}: ${n0(r.posts)} posts accepted, ${n0(r.stored.reached)} stored; stored ${stage(r.stored)}, in bob's home ${stage(r.home)}, streamed ${stage(r.streamed)}, delivered ${stage(r.delivered)}, pushed ${stage(r.pushed)}, link cards fetched ${stage(r.carded)}`,
  );
  for (const [i, g] of f.posting.gotosocial.entries()) lines.push(`GoToSocial posting run ${i + 1}: ${n0(g.posts)} posts accepted; CPU quiet ${g.busySeconds === null ? "not reached" : `${n1(g.busySeconds)} s`} after wrk ended`);
  return lines.join("\n");
}

export function header(f: Figures): string {
  const o = f.options;
  return [
    `Side by side, ${f.date}: ${f.machine.cores} cores (${f.machine.cpu}), load average ${f.machine.load.map((x) => x.toFixed(2)).join(" ")} at the start`,
    `Rookery ${f.commit}; GoToSocial ${f.gotosocial.version} (${f.gotosocial.bin})`,
    `wrk -t${o.threads} -c${o.connections}, ${o.duration} s per read run, ${o.postDuration} s per posting run, runs in the order GoToSocial, Rookery, Rookery, GoToSocial; servers on CPUs ${o.serverCpus ?? "all (unpinned)"}, wrk on ${o.wrkCpus ?? "all (unpinned)"}`,
    `Rookery's posting: ${f.posting.rookeryHas}`,
  ].join("\n");
}
