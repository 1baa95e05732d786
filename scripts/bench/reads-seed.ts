/**
 * The state the signed-in reads are measured in (issue 30), made over the API so that every
 * consequence (feeds, notifications, counters) is the real one: an author followed by a reader,
 * 200 of the author's statuses (tags, links), the reader's own posts favourited and answered by
 * the author (notifications of both kinds), and a thread of a status and its replies (context).
 */
export interface ReadsState {
  author: { id: string; token: string };
  reader: { id: string; token: string };
  statusId: string;
  threadId: string;
}

export interface ReadEndpoint {
  label: string;
  path: string;
  headers: Record<string, string>;
}

export async function seedReads(url: string, author: { id: string; token: string }, reader: { id: string; token: string }, statuses = 200): Promise<ReadsState> {
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  const call = async (token: string, path: string, body?: object) => {
    const res = await fetch(`${url}${path}`, { method: "POST", headers: auth(token), body: body ? JSON.stringify(body) : undefined });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  };
  await call(reader.token, `/api/v1/accounts/${author.id}/follow`);
  let statusId = "";
  for (let i = 0; i < statuses; i++) statusId = (await call(author.token, "/api/v1/statuses", { status: `Seed status ${i} with a #tag` })).id;
  for (let i = 0; i < 15; i++) {
    const own = await call(reader.token, "/api/v1/statuses", { status: `Reader's post ${i}` });
    await call(author.token, `/api/v1/statuses/${own.id}/favourite`);
    if (i < 10) await call(author.token, "/api/v1/statuses", { status: `@reader an answer ${i}`, in_reply_to_id: own.id });
  }
  const thread = await call(author.token, "/api/v1/statuses", { status: "A thread to read in context" });
  let parent = thread.id;
  for (let i = 0; i < 6; i++) parent = (await call(i % 2 ? author.token : reader.token, "/api/v1/statuses", { status: `@author reply ${i}`, in_reply_to_id: parent })).id;
  // The reader has favourited and bookmarked some of what they read, as readers do.
  await call(reader.token, `/api/v1/statuses/${statusId}/favourite`);
  await call(reader.token, `/api/v1/statuses/${statusId}/bookmark`);
  return { author, reader, statusId, threadId: thread.id };
}

/** The reads of the table and goals, as the reader makes them. */
export function readEndpoints(s: ReadsState): ReadEndpoint[] {
  const signedIn = { authorization: `Bearer ${s.reader.token}` };
  return [
    { label: "GET /api/v1/instance", path: "/api/v1/instance", headers: {} },
    { label: "GET verify_credentials", path: "/api/v1/accounts/verify_credentials", headers: signedIn },
    { label: "GET /api/v1/statuses/:id (anon)", path: `/api/v1/statuses/${s.statusId}`, headers: {} },
    { label: "GET /api/v1/statuses/:id (signed in)", path: `/api/v1/statuses/${s.statusId}`, headers: signedIn },
    { label: "GET home?limit=20", path: "/api/v1/timelines/home?limit=20", headers: signedIn },
    { label: "GET /api/v1/notifications", path: "/api/v1/notifications", headers: signedIn },
    { label: "GET accounts/:id/statuses", path: `/api/v1/accounts/${s.author.id}/statuses`, headers: signedIn },
    { label: "GET statuses/:id/context", path: `/api/v1/statuses/${s.threadId}/context`, headers: signedIn },
    { label: "GET accounts/search?q=auth", path: "/api/v1/accounts/search?q=auth", headers: signedIn },
    { label: "GET /@author/:id (page)", path: `/@author/${s.statusId}`, headers: { accept: "text/html" } },
  ];
}
