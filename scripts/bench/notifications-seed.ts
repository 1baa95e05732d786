import { seedUser } from "./lib.ts";

/**
 * What before-after.ts's notifications family reads (`--family=notifications`): the reader's ten
 * statuses, each favourited by two fans (grouped two by two in v2), five boosted by one of them,
 * both fans' follows, and a direct mention from a stranger held back by the policy (a request):
 * 27 notifications and a request.
 */
export async function seedNotifications(server: Parameters<typeof seedUser>[0], token: string): Promise<void> {
  const call = async (path: string, body: unknown, as: string) => {
    const r = await fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${as}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${path}: ${r.status}`);
    return (await r.json()) as { id: string; account: { id: string; acct: string } };
  };
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await call("/api/v1/statuses", { status: `post ${i}` }, token)).id);
  const reader = (await call("/api/v1/statuses", { status: "one more" }, token)).account;
  for (const name of ["fan1", "fan2"]) {
    const fan = await seedUser(server, name);
    await call(`/api/v1/accounts/${reader.id}/follow`, {}, fan.token);
    for (const id of ids) await call(`/api/v1/statuses/${id}/favourite`, {}, fan.token);
    if (name === "fan1") for (const id of ids.slice(0, 5)) await call(`/api/v1/statuses/${id}/reblog`, {}, fan.token);
  }
  const stranger = await seedUser(server, "stranger");
  await call("/api/v1/statuses", { status: `@${reader.acct} psst`, visibility: "direct" }, stranger.token);
}
