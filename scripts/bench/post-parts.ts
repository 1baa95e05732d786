/**
 * Sorts the samples of a server's CPU profile (a .cpuprofile, BENCH_PROFILE=dir
 * BENCH_PROFILE_JSON=1) by part of a post, for `bun scripts/bench/post-floor.ts --profile`.
 */
import { readFileSync } from "node:fs";
import { fmt } from "./lib.ts";

type Frame = { functionName: string; url: string };
type ProfileNode = { id: number; callFrame: Frame; children?: number[] };

/** The parts of a post, in the order their rules are tried on each sample's stack. */
const PARTS: [string, (frames: Frame[]) => boolean][] = [
  ["delivery: HTTP signature (digest, RSA)", (f) => f.some((x) => /^(signRequest|signRequestRfc9421|signRequestDraft|doubleKnock|doubleKnockInternal)$/.test(x.functionName))],
  ["delivery: the POST (fetch, our outgoing guard)", (f) => f.some((x) => x.url.includes("src/net/outgoing.ts") || x.url.includes("src/net/request-slots.ts"))],
  ["delivery: the queue, key import, other", (f) => f.some((x) => /listenOutboxMessage|importJwk/.test(x.functionName) || x.url.includes("src/federation/queue.ts"))],
  ["Fedify: public-audience check (canonicalizations)", (f) => f.some((x) => x.functionName === "normalizePublicAudience" || x.functionName === "normalizeOutgoingActivityJsonLd")],
  ["Fedify: LD signature (canonicalization, RSA)", (f) => f.some((x) => x.functionName === "createSignature" || x.functionName === "hashJsonLd" || x.functionName === "signJsonLd")],
  ["Fedify: Object Integrity Proof (its compaction, JCS, Ed25519)", (f) => f.some((x) => x.functionName === "createProof" || x.functionName === "signObject")],
  ["jsonld.js: URDNA2015 resumed after an await (LD signature or public audience)", (f) => f.some((x) => /hashFirstDegreeQuads|_hashAndTrackBlankNode|hashNDegreeQuads|serializeQuad/.test(x.functionName) || x.url.includes("rdf-canon"))],
  ["Fedify: compaction (toJsonLd) and other JSON-LD", (f) => f.some((x) => x.functionName === "toJsonLd" || x.url.includes("jsonld"))],
  ["Fedify: actor key pairs, sending, other", (f) => f.some((x) => x.url.includes("@fedify") || x.url.includes("src/federation/"))],
  ["Rookery: web push (encryption, request)", (f) => f.some((x) => x.url.includes("src/services/push") || x.url.includes("http_ece") || x.functionName === "buildPushRequest")],
  ["Rookery: link card", (f) => f.some((x) => /src\/services\/(cards|embeds)/.test(x.url))],
  ["Rookery: streaming", (f) => f.some((x) => x.url.includes("src/streaming"))],
  ["Rookery: the request, storing, consequences, SQLite", (f) => f.some((x) => x.url.includes("/src/") || x.url.startsWith("bun:sqlite") || x.url.includes("drizzle-orm") || x.url.includes("elysia"))],
];

export function printParts(file: string) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const counts = new Map<string, number>();
  for (const sample of profile.samples) {
    const frames: Frame[] = [];
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) frames.push(byId.get(id)!.callFrame);
    const part = PARTS.find(([, rule]) => rule(frames))?.[0] ?? "other (runtime, GC, timers)";
    counts.set(part, (counts.get(part) ?? 0) + 1);
  }
  const total = profile.samples.length;
  console.log(`${total} samples of the main thread (each about 1 ms of it running)\n`);
  for (const [part, n] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`${fmt((n / total) * 100, 1).padStart(5)}%  ${part}`);
}
