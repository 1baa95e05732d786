/**
 * The same state on both servers, made through their Mastodon client APIs only: bob follows
 * alice (with notify, so her posts notify him, the path push takes in the posting
 * measurement), bob mentions alice 20 times, alice posts 300 statuses one after another (every
 * fifth with a hashtag; 30 of them a reply chain, the thread whose context is read), then bob
 * favourites 30 of them. Every read then returns the same amount of data on both, and the
 * endpoints to measure are checked to answer 200 with a body of the expected kind.
 */
import type { ApiClient, Res } from "../interop/support.ts";
import type { Server } from "./sbs-servers.ts";

export const STATUSES = 300;
const CHAIN_START = 100;
const CHAIN_LENGTH = 30;
const MENTIONS = 20;
const FAVOURITES = 30;

export interface Seeded {
  server: Server;
  alice: ApiClient;
  bob: ApiClient;
  aliceId: string;
  bobId: string;
  /** alice's newest status. */
  latestId: string;
  /** The middle of the reply chain: 14 ancestors and 15 descendants. */
  threadId: string;
}

function must<T>(what: string, res: Res<T>, status = 200): T {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.body;
}

export async function seed(server: Server, alice: ApiClient, bob: ApiClient): Promise<Seeded> {
  const aliceId = must(`${server.name} alice's verify_credentials`, await alice.get("/api/v1/accounts/verify_credentials")).id as string;
  const bobId = must(`${server.name} bob's verify_credentials`, await bob.get("/api/v1/accounts/verify_credentials")).id as string;
  const relationship = must(`${server.name} bob follows alice`, await bob.post(`/api/v1/accounts/${aliceId}/follow`, { json: { notify: true } }));
  if (!relationship.following) {
    // A locked account: alice accepts.
    must(`${server.name} alice accepts bob`, await alice.post(`/api/v1/follow_requests/${bobId}/authorize`));
  }
  for (let i = 0; i < MENTIONS; i++) must(`${server.name} bob's mention ${i}`, await bob.post("/api/v1/statuses", { json: { status: `@alice mention ${i} from bob, asking something of alice.` } }));
  const ids: string[] = [];
  let latestId = "";
  for (let i = 0; i < STATUSES; i++) {
    const inChain = i >= CHAIN_START && i < CHAIN_START + CHAIN_LENGTH;
    const text = `Status ${i} from alice: a few words of text, as an ordinary post has.${i % 5 === 0 ? " #sidebyside" : ""}`;
    const json: Record<string, string> = { status: text, visibility: "public" };
    if (inChain && i > CHAIN_START) json.in_reply_to_id = ids[i - 1]!;
    const posted = must(`${server.name} alice's status ${i}`, await alice.post("/api/v1/statuses", { json }));
    ids.push(posted.id);
    latestId = posted.id;
  }
  for (let i = 0; i < FAVOURITES; i++) {
    const id = ids[STATUSES - 1 - i * 5]!;
    must(`${server.name} bob favourites ${id}`, await bob.post(`/api/v1/statuses/${id}/favourite`));
  }
  return { server, alice, bob, aliceId, bobId, latestId, threadId: ids[CHAIN_START + 14]! };
}

export interface Endpoint {
  label: string;
  path(s: Seeded): string;
  /** Whose token, if any. */
  as: "alice" | "bob" | null;
  kind: "object" | "array" | "html";
  /** For a thread: its ancestors and descendants are counted. */
  context?: boolean;
}

export const ENDPOINTS: Endpoint[] = [
  { label: "GET /api/v1/instance", path: () => "/api/v1/instance", as: null, kind: "object" },
  { label: "GET /api/v1/accounts/verify_credentials", path: () => "/api/v1/accounts/verify_credentials", as: "bob", kind: "object" },
  { label: "GET /api/v1/timelines/home?limit=20", path: () => "/api/v1/timelines/home?limit=20", as: "bob", kind: "array" },
  { label: "GET /api/v1/statuses/:id with a token", path: (s) => `/api/v1/statuses/${s.latestId}`, as: "bob", kind: "object" },
  // limit=20 on both: Mastodon's default page of notifications is 40, GoToSocial's 20.
  { label: "GET /api/v1/notifications?limit=20", path: () => "/api/v1/notifications?limit=20", as: "alice", kind: "array" },
  { label: "GET /api/v1/accounts/:id/statuses?limit=20", path: (s) => `/api/v1/accounts/${s.aliceId}/statuses?limit=20`, as: "bob", kind: "array" },
  { label: "GET /api/v1/statuses/:id/context (30-post thread)", path: (s) => `/api/v1/statuses/${s.threadId}/context`, as: "bob", kind: "object", context: true },
  { label: "GET /api/v1/accounts/search?q=alice", path: () => "/api/v1/accounts/search?q=alice&limit=5", as: "bob", kind: "array" },
  { label: "GET the status's public page (HTML)", path: (s) => s.server.statusPage("alice", s.latestId), as: null, kind: "html" },
];

export function headersFor(endpoint: Endpoint, s: Seeded): { accept: string; authorization?: string } {
  const token = endpoint.as === "alice" ? s.alice.token : endpoint.as === "bob" ? s.bob.token : undefined;
  return { accept: endpoint.kind === "html" ? "text/html" : "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) };
}

/**
 * One request before timing: 200, and a body of the kind expected (a benchmark of 401s, 404s
 * or empty lists measures nothing). Returns what it saw, to print beside the other server's.
 */
export async function check(endpoint: Endpoint, s: Seeded): Promise<string> {
  const client = endpoint.as === "alice" ? s.alice : endpoint.as === "bob" ? s.bob : s.alice.withToken("");
  const res = await client.get(endpoint.path(s), { headers: { accept: headersFor(endpoint, s).accept } });
  const fail = (why: string) => new Error(`${s.server.name} ${endpoint.label} (${endpoint.path(s)}): ${why}; the benchmark would measure nothing`);
  if (res.status !== 200) throw fail(`${res.status} ${res.text.slice(0, 200)}`);
  const type = res.headers.get("content-type") ?? "";
  const size = `${(res.text.length / 1024).toFixed(1)} kB`;
  if (endpoint.kind === "html") {
    if (!type.includes("text/html") || !res.text.includes("</html>")) throw fail(`not an HTML page (${type})`);
    return `HTML, ${size}`;
  }
  if (!type.includes("json")) throw fail(`not JSON (${type})`);
  if (endpoint.kind === "array") {
    if (!Array.isArray(res.body) || res.body.length === 0) throw fail("not a non-empty array");
    return `${res.body.length} items, ${size}`;
  }
  if (Array.isArray(res.body) || typeof res.body !== "object" || res.body === null) throw fail("not an object");
  if (endpoint.context) {
    const { ancestors, descendants } = res.body as { ancestors: unknown[]; descendants: unknown[] };
    if (!ancestors?.length || !descendants?.length) throw fail("a thread without ancestors or descendants");
    return `${ancestors.length} ancestors, ${descendants.length} descendants, ${size}`;
  }
  return size;
}
