import { lookup } from "node:dns/promises";
import { loadConfig, type Config } from "../config.ts";
import { storedInstanceActorKeys } from "../federation/instance-actor.ts";
import { CliFailure, parseArgs } from "./admin.ts";
import { withPortDatabase } from "./database.ts";
import { certificateOf, get, reasonOf, type Answer } from "./probe.ts";

// `rookery federation check`: what another server meets when it comes to this one, asked the
// way it would ask (over https, at PUBLIC_URL's name) from this machine. Each check says ok,
// failed or skipped, with the reason; a check that cannot be made honestly (no network for the
// clock, a proxy it cannot tell apart) says skipped rather than ok.

export type State = "ok" | "failed" | "skipped";
export interface Outcome {
  state: State;
  check: string;
  detail: string;
}

export interface CheckInput {
  config: Config;
  /** The instance actor's public keys in this data directory (after the actor was served). */
  storedKeys(): Promise<JsonWebKey[]> | JsonWebKey[];
  /** A local username to look up by WebFinger beside the instance actor, if there is one. */
  someUsername: string | null;
  /** Where to read the right time from: servers' origins, tried in order. */
  timeSources: string[];
  now(): number;
}

/** Mastodon's and Fedify's signatures tolerate more; a clock this far off is not synchronised. */
const CLOCK_TOLERANCE_MS = 60_000;
const CERT_RENEWAL_DAYS = 7;
const ACTIVITY_JSON = "application/activity+json";

const ok = (check: string, detail: string): Outcome => ({ state: "ok", check, detail });
const failed = (check: string, detail: string): Outcome => ({ state: "failed", check, detail });
const skipped = (check: string, detail: string): Outcome => ({ state: "skipped", check, detail });

function json(answer: Answer): Record<string, unknown> | null {
  try {
    const value = JSON.parse(answer.body) as unknown;
    return value && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function header(answer: Answer, name: string): string | null {
  const value = answer.headers[name];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

export async function federationCheck(input: CheckInput): Promise<Outcome[]> {
  const { config } = input;
  if (!config.federation) return [skipped("federation", "FEDERATION=off: this server does not federate, there is nothing to check")];
  const publicUrl = new URL(config.publicUrl);
  const host = publicUrl.hostname;
  const outcomes: Outcome[] = [];
  const say = (o: Outcome) => (outcomes.push(o), o);

  // 1. The public URL, over https, at its name.
  const name = "public URL";
  if (publicUrl.protocol !== "https:") {
    say(failed(name, `PUBLIC_URL is ${config.publicUrl}: other servers reach servers over https only; put a TLS proxy in front (README: Behind a reverse proxy) and set PUBLIC_URL to its https address`));
  } else if (host === "localhost" || host.endsWith(".localhost")) {
    say(failed(name, `PUBLIC_URL's host is ${host}: no other server can reach that name; set PUBLIC_URL to the public name`));
  }
  if (outcomes.length > 0) {
    for (const check of ["certificate", "host-meta", "WebFinger", "NodeInfo", "forwarded addresses", "clock"]) say(skipped(check, "PUBLIC_URL is not a public https address"));
    return outcomes;
  }
  let addresses: string[];
  try {
    addresses = (await lookup(host, { all: true })).map((a) => a.address);
  } catch (e) {
    say(failed(name, `${host} does not resolve here (${(e as { code?: string }).code ?? reasonOf(e)}): give it a DNS record (A or AAAA) pointing at this server`));
    for (const check of ["certificate", "host-meta", "WebFinger", "NodeInfo", "forwarded addresses", "clock"]) say(skipped(check, `${host} does not resolve`));
    return outcomes;
  }

  const port = Number(publicUrl.port || 443);
  let insecure = false;
  let certificate: Outcome;
  try {
    const cert = await certificateOf(host, port);
    const days = Math.floor((cert.validTo - input.now()) / 86_400_000);
    const until = new Date(cert.validTo).toISOString().slice(0, 10);
    if (cert.refusal !== null) {
      insecure = true;
      certificate = failed("certificate", `refused: ${cert.refusal} (names ${cert.names || "nothing"}; issued by ${cert.issuer || "?"}): other servers will not connect`);
    } else if (days < CERT_RENEWAL_DAYS) {
      certificate = failed("certificate", `valid for ${host} but expires ${until}, in ${days} day(s): is its renewal working?`);
    } else {
      certificate = ok("certificate", `valid for ${host} until ${until} (${days} days), issued by ${cert.issuer || "?"}`);
    }
  } catch (e) {
    certificate = failed("certificate", `no TLS connection to ${host}:${port}: ${reasonOf(e)}`);
  }

  let instance: Answer | null = null;
  try {
    instance = await get(`${config.publicUrl}/api/v1/instance`, { insecure });
  } catch (e) {
    say(failed(name, `${config.publicUrl} (${addresses.join(", ")} here) does not answer: ${reasonOf(e)}`));
  }
  if (instance) {
    const uri = json(instance)?.uri;
    if (instance.status !== 200) say(failed(name, `${config.publicUrl}/api/v1/instance answers ${instance.status}, not 200: is the proxy passing requests to Rookery (${config.host}:${config.port})?`));
    else if (uri !== config.domain) say(failed(name, `${config.publicUrl} answers as ${JSON.stringify(uri ?? null)}, not ${config.domain}: another server, or this one with another PUBLIC_URL (run the check with the server's settings)`));
    else say(ok(name, `${config.publicUrl} answers over https at ${addresses.join(", ")} (${Math.round(instance.ms)} ms)${addresses.every(isLoopbackOrPrivate) ? "; those are private addresses: other servers need a public one (if this machine sees its own name that way, check from outside too)" : ""}`));
  }
  say(certificate);
  if (outcomes.some((o) => o.check === name && o.state === "failed") && !instance) {
    for (const check of ["host-meta", "WebFinger", "NodeInfo", "forwarded addresses", "clock"]) say(skipped(check, `${config.publicUrl} does not answer`));
    return outcomes;
  }

  say(await hostMeta(config, insecure));
  say(await webfinger(input, insecure));
  say(await nodeinfo(config, insecure));
  say(await forwardedAddresses(config, addresses, insecure));
  say(await clock(input, insecure));
  return outcomes;
}

function isLoopbackOrPrivate(address: string): boolean {
  return /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.|::1$|f[cd]|fe80:)/i.test(address);
}

async function hostMeta(config: Config, insecure: boolean): Promise<Outcome> {
  const check = "host-meta";
  const expected = `${config.publicUrl}/.well-known/webfinger?resource={uri}`;
  try {
    const answer = await get(`${config.publicUrl}/.well-known/host-meta`, { insecure });
    const template = /<Link[^>]*rel="lrdd"[^>]*template="([^"]*)"/.exec(answer.body)?.[1] ?? null;
    if (answer.status !== 200) return failed(check, `/.well-known/host-meta answers ${answer.status}`);
    if (template !== expected) return failed(check, `its WebFinger template is ${JSON.stringify(template)}, not ${expected}`);
    return ok(check, `WebFinger at ${config.publicUrl}/.well-known/webfinger`);
  } catch (e) {
    return failed(check, reasonOf(e));
  }
}

/** The public key of an actor document (publicKeyPem) as a JWK, to compare with the stored one. */
async function jwkOfPem(pem: string): Promise<JsonWebKey | null> {
  const base64 = pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
  try {
    const key = await crypto.subtle.importKey("spki", Buffer.from(base64, "base64"), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["verify"]);
    return await crypto.subtle.exportKey("jwk", key);
  } catch {
    return null;
  }
}

async function webfinger(input: CheckInput, insecure: boolean): Promise<Outcome> {
  const { config } = input;
  const check = "WebFinger";
  // The instance actor (named after PUBLIC_URL's host) always exists; a local account too, if any.
  const names = [new URL(config.publicUrl).hostname, ...(input.someUsername ? [input.someUsername] : [])];
  try {
    for (const username of names) {
      const subject = `acct:${username}@${config.domain}`;
      const answer = await get(`${config.publicUrl}/.well-known/webfinger?resource=${encodeURIComponent(subject)}`, { insecure });
      if (answer.status !== 200) return failed(check, `${subject} answers ${answer.status}`);
      const jrd = json(answer);
      const self = (jrd?.links as { rel?: string; type?: string; href?: string }[] | undefined)?.find((l) => l.rel === "self" && l.type === ACTIVITY_JSON)?.href;
      const expected = `${config.publicUrl}/users/${username}`;
      if (jrd?.subject !== subject) return failed(check, `${subject} answers for ${JSON.stringify(jrd?.subject ?? null)}: the server's PUBLIC_URL is not ${config.publicUrl}?`);
      if (self !== expected) return failed(check, `${subject} points at ${JSON.stringify(self ?? null)}, not ${expected}`);
    }
    // The instance actor's document, with its key: this data directory's server is the one answering.
    const actorUrl = `${config.publicUrl}/users/${names[0]}`;
    const actor = await get(actorUrl, { insecure, headers: { accept: ACTIVITY_JSON } });
    const document = json(actor);
    if (actor.status !== 200 || document?.id !== actorUrl) return failed(check, `${actorUrl} answers ${actor.status}${document?.id ? ` with the id ${JSON.stringify(document.id)}` : ""}, not the instance actor`);
    const pem = (document.publicKey as { publicKeyPem?: string } | undefined)?.publicKeyPem;
    const served = pem ? await jwkOfPem(pem) : null;
    const stored = (await input.storedKeys()).find((k) => k.kty === "RSA");
    if (!served || !stored) return skipped(check, `${names.map((n) => `${n}@${config.domain}`).join(" and ")} resolve to ${config.publicUrl}/users/..., but whose key it is cannot be told (none ${served ? "in this data directory" : "served"})`);
    if (served.n !== stored.n || served.e !== stored.e) return failed(check, `${actorUrl} serves another key than this data directory's: another server (or another DATA_DIR) answers at PUBLIC_URL`);
    return ok(check, `${names.map((n) => `@${n}@${config.domain}`).join(" and ")} resolve to ${config.publicUrl}/users/..., served with this data directory's key (handles here end in @${config.domain})`);
  } catch (e) {
    return failed(check, reasonOf(e));
  }
}

async function nodeinfo(config: Config, insecure: boolean): Promise<Outcome> {
  const check = "NodeInfo";
  const expected = `${config.publicUrl}/nodeinfo/2.0`;
  try {
    const index = json(await get(`${config.publicUrl}/.well-known/nodeinfo`, { insecure }));
    const href = (index?.links as { href?: string }[] | undefined)?.[0]?.href;
    if (href !== expected) return failed(check, `/.well-known/nodeinfo links to ${JSON.stringify(href ?? null)}, not ${expected}`);
    const info = json(await get(expected, { insecure }));
    const software = info?.software as { name?: string; version?: string } | undefined;
    if (software?.name !== "rookery") return failed(check, `${expected} names the software ${JSON.stringify(software?.name ?? null)}, not rookery`);
    return ok(check, `${expected}: rookery ${software.version ?? ""}, registrations ${info?.openRegistrations ? "open" : "closed"}`);
  } catch (e) {
    return failed(check, reasonOf(e));
  }
}

/**
 * Whether the server sees a client's address through the proxy, or the proxy's own: the
 * unauthenticated rate limit (300 per 5 minutes) counts per address the server sees, and says
 * what is left in X-RateLimit-Remaining. Asked directly (from 127.0.0.1, the address a proxy on
 * this machine comes from), then through the proxy, then directly again: in the same bucket,
 * the three counts fall in turn; in another, the direct ones are one apart and the proxied one
 * is elsewhere. Through a name that resolves to loopback here, the proxied request leaves from
 * another loopback address (127.0.0.9), so that a proxy that forwards it is told apart.
 */
async function forwardedAddresses(config: Config, addresses: string[], insecure: boolean): Promise<Outcome> {
  const check = "forwarded addresses";
  const listen = config.host === "0.0.0.0" ? "127.0.0.1" : config.host === "::" ? "::1" : config.host;
  const direct = `http://${listen.includes(":") ? `[${listen}]` : listen}:${config.port}/api/v1/instance`;
  if (addresses.every((a) => a.includes(":") && a.startsWith("::1"))) return skipped(check, `${new URL(config.publicUrl).hostname} resolves to ::1 here: the proxy would see this check come from the address it uses itself`);
  const localAddress = addresses.some((a) => a.startsWith("127.")) ? "127.0.0.9" : undefined;
  const remaining = (a: Answer) => ({ left: Number(header(a, "x-ratelimit-remaining")), window: header(a, "x-ratelimit-reset") });
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      let first: Answer;
      try {
        first = await get(direct);
      } catch (e) {
        return skipped(check, `the server does not answer directly at ${direct} (${reasonOf(e)}): run the check on its machine, with its settings (HOST, PORT)`);
      }
      const proxied = await get(`${config.publicUrl}/api/v1/instance`, { insecure, localAddress });
      const last = await get(direct);
      const [d1, p, d2] = [remaining(first), remaining(proxied), remaining(last)];
      if (![d1, p, d2].every((r) => Number.isFinite(r.left) && r.window !== null)) return skipped(check, "the server sends no rate-limit headers (RATE_LIMITS=off?), by which this check tells addresses apart");
      // A window ended meanwhile: the counts restarted; ask again.
      if (d1.window !== d2.window) continue;
      if (p.window === d1.window && p.left < d1.left && p.left > d2.left) {
        return failed(
          check,
          `the server takes requests through the proxy as coming from the proxy itself: set TRUSTED_PROXIES to the proxy's address (127.0.0.1,::1 for one on this machine) and have it send X-Forwarded-For (README: Behind a reverse proxy); until then rate limits and logs see one address for everybody`,
        );
      }
      return ok(check, `the server sees the addresses of clients behind the proxy, not the proxy's${config.trustedProxies.length === 0 ? " (though TRUSTED_PROXIES is empty here: is this command run with the server's settings?)" : ""}`);
    }
    return skipped(check, "the rate-limit window kept ending during the check; try again");
  } catch (e) {
    return failed(check, `${config.publicUrl}: ${reasonOf(e)}`);
  }
}

/**
 * The server's clock, by the Date header it answers with, against the Date headers of other
 * servers (each corrected by when its answer came, and good to a second). Offline, or with no
 * server answering, it is not known: skipped, never ok.
 */
async function clock(input: CheckInput, insecure: boolean): Promise<Outcome> {
  const check = "clock";
  const offsetOf = async (url: string, options: { insecure?: boolean } = {}) => {
    const sent = input.now();
    const answer = await get(url, { ...options, timeoutMs: 5_000 });
    const received = input.now();
    const date = Date.parse(header(answer, "date") ?? "");
    if (Number.isNaN(date)) throw new Error("no Date header");
    // Date is truncated to the second: its middle is half a second on.
    return { offset: date + 500 - (sent + received) / 2, uncertainty: 500 + (received - sent) / 2 };
  };
  let ours: { offset: number; uncertainty: number };
  try {
    ours = await offsetOf(`${input.config.publicUrl}/api/v1/instance`, { insecure });
  } catch (e) {
    return skipped(check, `this server's Date header could not be read: ${reasonOf(e)}`);
  }
  const tried: string[] = [];
  for (const source of input.timeSources) {
    try {
      const theirs = await offsetOf(source);
      const difference = ours.offset - theirs.offset;
      const margin = ours.uncertainty + theirs.uncertainty;
      const seconds = (ms: number) => `${(Math.abs(ms) / 1000).toFixed(1)} s`;
      const host = new URL(source).host;
      if (Math.abs(difference) - margin > CLOCK_TOLERANCE_MS) {
        return failed(check, `the server's clock is ${seconds(difference)} ${difference > 0 ? "ahead of" : "behind"} ${host}'s: signed requests are refused when clocks disagree; synchronise it (systemd-timesyncd, chrony)`);
      }
      return ok(check, `within ${seconds(Math.abs(difference) + margin)} of ${host}'s (by their Date headers)`);
    } catch (e) {
      tried.push(`${new URL(source).host}: ${reasonOf(e)}`);
    }
  }
  return skipped(check, tried.length === 0 ? "no server to compare with: give one with --time-from <url>" : `could not compare: ${tried.join("; ")}`);
}

/** `rookery federation check [--time-from <url>]`: prints each outcome; exits 1 when one failed. */
export async function federationCheckCommand(args: string[]): Promise<void> {
  const { options, positional } = parseArgs(args);
  if (positional.length > 0) throw new CliFailure(`federation check takes no arguments but --time-from <url> (got "${positional[0]}")`);
  const timeFrom = options.get("time-from");
  if (timeFrom !== undefined && !/^https?:\/\/[^/\s]+/i.test(timeFrom)) throw new CliFailure(`--time-from needs an http(s) URL (got "${timeFrom}")`);
  const config = loadConfig();
  await withPortDatabase(config, async ({ port }) => {
    const someUsername = (await port.get<{ username: string }>("SELECT username FROM accounts WHERE domain IS NULL ORDER BY id LIMIT 1"))?.username ?? null;
    // The servers this one knows best tell the time; a new server knows none yet.
    const peers = (await port.all<{ domain: string }>("SELECT domain FROM accounts WHERE domain IS NOT NULL GROUP BY domain ORDER BY count(*) DESC, domain LIMIT 3")).map(
      (r) => `https://${r.domain}/`,
    );
    const outcomes = await federationCheck({
      config,
      storedKeys: () => storedInstanceActorKeys(port),
      someUsername,
      timeSources: timeFrom !== undefined ? [timeFrom] : peers.length > 0 ? peers : ["https://mastodon.social/"],
      now: () => Date.now(),
    });
    const width = Math.max(...outcomes.map((o) => o.check.length));
    for (const o of outcomes) process.stdout.write(`${o.state.padEnd(8)}${o.check.padEnd(width)}  ${o.detail}\n`);
    const count = (state: State) => outcomes.filter((o) => o.state === state).length;
    process.stdout.write(`${count("ok")} ok, ${count("failed")} failed, ${count("skipped")} skipped\n`);
    if (count("failed") > 0) process.exitCode = 1;
  });
}
