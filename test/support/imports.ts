import type { Res } from "./http.ts";
import type { TestUser } from "./fixtures.ts";
import { eventually } from "./wait.ts";

/** POST /api/v1/import as a client sends it: multipart, the file as `data`. */
export function upload(user: TestUser, type: string | undefined, file: string | Uint8Array<ArrayBuffer> | null, options: { mode?: string; filename?: string } = {}): Promise<Res> {
  const form = new FormData();
  if (type !== undefined) form.append("type", type);
  if (options.mode !== undefined) form.append("mode", options.mode);
  if (file !== null) form.append("data", new File([file], options.filename ?? "data.csv", { type: "text/csv" }));
  return user.client.post("/api/v1/import", { multipart: form });
}

/** Uploads a file that must be accepted, and waits until its import is finished; answers its report. */
export async function imported(user: TestUser, type: string, file: string, options: { mode?: string; deadlineMs?: number } = {}): Promise<any> {
  const res = await upload(user, type, file, options);
  if (res.status !== 202) throw new Error(`import refused (${res.status}): ${res.text}`);
  return finished(user, res.body.id, options.deadlineMs);
}

/** The import's report once it is finished. */
export function finished(user: TestUser, id: string, deadlineMs = 20_000): Promise<any> {
  let last: unknown;
  return eventually(
    async () => {
      const res = await user.client.get(`/api/v1/imports/${id}`);
      last = res.body;
      return res.body.state === "finished" ? res.body : null;
    },
    () => `import ${id} to finish (${JSON.stringify(last)})`,
    deadlineMs,
  );
}

/**
 * Sends a server's requests to loopback addresses over plain http, also those it makes over
 * https: Fedify asks WebFinger over https always, and the federation tests' servers listen on
 * plain http. Everything else of the request (the checked address, the headers, the body) is
 * as the server sent it; only TLS is left out. Through Bun.fetch, which the outgoing module's
 * routing of the global fetch does not reach.
 */
export const loopbackOverHttp = ((input: RequestInfo | URL, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.protocol === "https:" && url.hostname.startsWith("127.")) url.protocol = "http:";
  const { tls: _tls, ...rest } = (init ?? {}) as RequestInit & { tls?: unknown };
  return Bun.fetch(url, rest);
}) as typeof fetch;
