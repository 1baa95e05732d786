/**
 * What the checks share: a signed-in client on each side (alice on Rookery, bob on GoToSocial),
 * each account's id on the other side once found, the posts later checks build on, and small
 * helpers that read both client APIs.
 */
import type { Report } from "../report.ts";
import { waitFor, type ApiClient, type Res } from "../support.ts";

export interface Session {
  report: Report;
  alice: ApiClient;
  bob: ApiClient;
  aliceAcct: string;
  bobAcct: string;
  /** Rookery runs with CACHE_REMOTE_MEDIA=true: it shows its own copies of remote images. */
  cacheRemoteMedia: boolean;
  /** How long each awaited condition may take. */
  timeout: number;
  /** bob's account id on Rookery, once looked up. */
  bobHere: string | null;
  /** alice's account id on GoToSocial, once looked up. */
  aliceThere: string | null;
  /** alice's public post on Rookery, and GoToSocial's copy of it. */
  alicePost: any;
  alicePostThere: any;
  /** bob's public post on GoToSocial, and Rookery's copy of it. */
  bobPost: any;
  bobPostHere: any;
}

export function expectStatus(res: Res, status: number | number[], what: string) {
  if (![status].flat().includes(res.status)) throw new Error(`${what}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  return res.body;
}

/** Text of some HTML, shortened for the table. */
export const short = (s: unknown) => String(s ?? "").replace(/<[^>]+>/g, "").slice(0, 80);

export function need<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`needs ${what} (an earlier check failed)`);
  return value;
}

/** The status with this uri among the first page of a timeline-like list, or null. */
export async function findByUri(client: ApiClient, path: string, uri: string, seen: { last: string }): Promise<any | null> {
  const res = await client.get(path, { query: { limit: "40" } });
  if (res.status !== 200) {
    seen.last = `${path}: HTTP ${res.status} ${res.text.slice(0, 200)}`;
    return null;
  }
  const list = res.body as any[];
  seen.last = `${path}: ${list.length} items`;
  return list.find((s) => s.uri === uri) ?? null;
}

/** Waits for a status (by uri) in a client's home timeline. */
export const inHome = (s: Session, client: ApiClient, uri: string, what: string) => waitFor(what, (seen) => findByUri(client, "/api/v1/timelines/home", uri, seen), s.timeout);

/** Posts a status and answers it (HTTP 200 expected). */
export async function post(client: ApiClient, json: Record<string, unknown>) {
  return expectStatus(await client.post("/api/v1/statuses", { json: { visibility: "public", ...json } }), 200, "post");
}

/** Waits for a notification of a type that matches. */
export function notification(s: Session, client: ApiClient, type: string, match: (n: any) => boolean, what: string) {
  return waitFor(
    what,
    async (seen) => {
      const res = await client.get("/api/v1/notifications", { query: { limit: "40" } });
      if (res.status !== 200) {
        seen.last = `notifications: HTTP ${res.status}`;
        return null;
      }
      const list = res.body as any[];
      seen.last = `notifications: ${list.map((n) => n.type).join(",") || "none"}`;
      return list.find((n) => n.type === type && match(n));
    },
    s.timeout,
  );
}

/** The relationship of alice (Rookery) to bob, and of bob (GoToSocial) to alice. */
export async function rookeryRel(s: Session) {
  const id = need(s.bobHere, "bob's account on Rookery");
  return (expectStatus(await s.alice.get("/api/v1/accounts/relationships", { query: { "id[]": id } }), 200, "relationships") as any[])[0];
}
export async function gtsRel(s: Session) {
  const id = need(s.aliceThere, "alice's account on GoToSocial");
  return (expectStatus(await s.bob.get("/api/v1/accounts/relationships", { query: { "id[]": id } }), 200, "relationships") as any[])[0];
}

/** Waits until a relationship read satisfies `ok`; `describe` says what was last seen. */
export function relationshipUntil(s: Session, side: "rookery" | "gts", what: string, ok: (r: any) => boolean) {
  return waitFor(
    what,
    async (seen) => {
      const r = side === "rookery" ? await rookeryRel(s) : await gtsRel(s);
      seen.last = `following ${r.following}, followed_by ${r.followed_by}, requested ${r.requested}, blocking ${r.blocking}, blocked_by ${r.blocked_by}`;
      return ok(r) ? r : null;
    },
    s.timeout,
  );
}
