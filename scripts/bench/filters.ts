/**
 * What filters cost a reader: the home timeline of a reader without filters, with a typical
 * handful, and at every cap (100 filters, 2,000 keywords of 100,000 characters in all), beside
 * a bare Elysia route in the same run. Then GET /api/v1/instance alone and while the capped
 * reader keeps changing a keyword and reading (each change rebuilds its automaton), and the
 * automaton's build at the caps timed in-process.
 *
 *   bun scripts/bench/filters.ts [seconds per run, default 8]
 */
import { spawn } from "bun";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILD_SLICE, buildMatcher } from "../../src/services/filters-matcher.ts";
import { MAX_FILTERS_PER_ACCOUNT, MAX_KEYWORD_CHARACTERS_PER_ACCOUNT, MAX_KEYWORDS_PER_ACCOUNT, MAX_KEYWORDS_PER_FILTER } from "../../src/services/filters.ts";
import { fmt, requireWrk, row, rss, seedUser, startBaseline, startRookery, wrk } from "./lib.ts";

requireWrk();
const seconds = Number(process.argv[2] ?? 8);

/** Keywords at the caps: the longest kind (other scripts, astral characters, RegExp syntax) while the characters last, then short ones. */
function keywordsAtCaps(): string[][] {
  const long = (i: number) => `${i} (a+)+$ ǅ Straße 😀 ${"ä".repeat(40)}`.padEnd(512, "x");
  const words: string[] = ["example", "tag"];
  let characters = words.join("").length;
  for (let i = 0; words.length < MAX_KEYWORDS_PER_ACCOUNT; i++) {
    const remaining = MAX_KEYWORDS_PER_ACCOUNT - words.length - 1;
    const next = characters + 512 + remaining * 6 <= MAX_KEYWORD_CHARACTERS_PER_ACCOUNT ? long(i) : `w${i}`.padEnd(5, "q");
    words.push(next);
    characters += [...next].length;
  }
  const filters: string[][] = [];
  for (let i = 0; i < words.length; i += MAX_KEYWORDS_PER_FILTER) filters.push(words.slice(i, i + MAX_KEYWORDS_PER_FILTER));
  return filters;
}

function timeBuild(filters: string[][]) {
  const groups = filters.map((words) => words.map((keyword) => ({ keyword, wholeWord: true })));
  let longest = 0;
  let slices = 0;
  const start = performance.now();
  const build = buildMatcher(groups);
  for (;;) {
    const t = performance.now();
    const step = build.next();
    longest = Math.max(longest, performance.now() - t);
    slices++;
    if (step.done) return { total: performance.now() - start, longest, slices, states: step.value.states };
  }
}

const baseline = await startBaseline(3911);
const rookery = await startRookery(3912);
try {
  const author = await seedUser(rookery, "author");
  const readers = { none: await seedUser(rookery, "plain"), typical: await seedUser(rookery, "typical"), caps: await seedUser(rookery, "capped") };
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  const post = async (token: string, path: string, body: unknown, method = "POST") => {
    const res = await fetch(`${rookery.url}${path}`, { method, headers: auth(token), body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  for (const r of Object.values(readers)) await post(r.token, `/api/v1/accounts/${author.id}/follow`, {});
  for (let i = 0; i < 200; i++) await post(author.token, "/api/v1/statuses", { status: `Seed status ${i} with a #tag and https://example.com/${i}` });

  const context = ["home", "public", "notifications", "thread", "account"];
  for (let i = 0; i < 5; i++) {
    await post(readers.typical.token, "/api/v2/filters", { title: `typical ${i}`, context, keywords_attributes: ["spoiler", "election", `show ${i}`, "crypto"].map((keyword) => ({ keyword })) });
  }
  const atCaps = keywordsAtCaps();
  let keywordId = "";
  for (const [i, words] of atCaps.entries()) {
    const filter = await post(readers.caps.token, "/api/v2/filters", { title: `caps ${i}`, context, keywords_attributes: words.map((keyword) => ({ keyword })) });
    keywordId = filter.keywords.at(-1).id;
  }
  for (let i = atCaps.length; i < MAX_FILTERS_PER_ACCOUNT; i++) await post(readers.caps.token, "/api/v2/filters", { title: `empty ${i}`, context });
  const stored = (await (await fetch(`${rookery.url}/api/v2/filters`, { headers: auth(readers.caps.token) })).json()) as { keywords: { keyword: string }[] }[];
  const keywords = stored.flatMap((f) => f.keywords);
  console.log(`Capped reader: ${stored.length} filters, ${keywords.length} keywords, ${fmt(keywords.reduce((n, k) => n + [...k.keyword].length, 0))} characters`);
  const home = await (await fetch(`${rookery.url}/api/v1/timelines/home?limit=20`, { headers: auth(readers.caps.token) })).json() as { filtered: unknown[] }[];
  console.log(`Its home timeline: ${home.length} statuses, ${home.filter((s) => s.filtered.length > 0).length} of them filtered`);
  console.log(`wrk: 1 thread, 64 connections, ${seconds} s per run, loopback\n`);

  const base = wrk(`${baseline.url}/`, { seconds });
  row("baseline: bare Elysia GET /", base);
  const none = wrk(`${rookery.url}/api/v1/timelines/home?limit=20`, { seconds, headers: auth(readers.none.token) });
  row("home, no filters", none, base);
  row("home, 5 filters of 4 keywords", wrk(`${rookery.url}/api/v1/timelines/home?limit=20`, { seconds, headers: auth(readers.typical.token) }), base);
  const caps = wrk(`${rookery.url}/api/v1/timelines/home?limit=20`, { seconds, headers: auth(readers.caps.token) });
  row("home, at the caps", caps, base);
  console.log(`  at the caps: ${fmt((caps.requestsPerSecond / none.requestsPerSecond) * 100, 1)}% of the reader without filters`);

  row("\nGET /api/v1/instance, alone", wrk(`${rookery.url}/api/v1/instance`, { seconds, connections: 8 }), base);
  // Meanwhile the capped reader changes a keyword and reads its home timeline, in turn, over
  // one connection of a second wrk (each change rebuilds the automaton).
  const lua = join(tmpdir(), `wrk-churn-${process.pid}.lua`);
  const headers = `{["authorization"] = "Bearer ${readers.caps.token}", ["content-type"] = "application/json"}`;
  writeFileSync(
    lua,
    `local i = 0
request = function()
  i = i + 1
  if i % 2 == 1 then return wrk.format("PUT", "/api/v2/filters/keywords/${keywordId}", ${headers}, '{"keyword":"changed ' .. i .. '"}') end
  return wrk.format("GET", "/api/v1/timelines/home?limit=20", ${headers})
end`,
  );
  const churn = spawn(["wrk", "-t1", "-c1", `-d${seconds + 2}s`, "-s", lua, `${rookery.url}/`], { stdout: "pipe" });
  await Bun.sleep(1000);
  const during = wrk(`${rookery.url}/api/v1/instance`, { seconds, connections: 8 });
  const churned = await new Response(churn.stdout).text();
  rmSync(lua, { force: true });
  row("GET /api/v1/instance, with rebuilds", during, base);
  console.log(`  meanwhile ${/(\d+) requests in/.exec(churned)?.[1] ?? "?"} keyword changes and capped home reads, in turn`);

  // The first build in a process includes compiling the builder itself; the server's later ones are like the second.
  for (const when of ["first", "second"]) {
    const build = timeBuild(atCaps);
    console.log(`${when === "first" ? "\n" : ""}Automaton at the caps (in-process, ${when} build): ${fmt(build.states)} states in ${fmt(build.total, 1)} ms, ${build.slices} slices of at most ${fmt(BUILD_SLICE)} units, the longest ${fmt(build.longest, 2)} ms`);
  }
  const after = rss(rookery.proc.pid);
  console.log(`Rookery RSS after the runs: ${fmt(after.now, 1)} MB (peak ${fmt(after.peak, 1)} MB)`);
} finally {
  await rookery.stop();
  await baseline.stop();
}
