/**
 * CPU per remote status's life, before and after the inbox's status writes moved to the database
 * port (issue 31), in-process: a remote Note stored (PostingService.publishRemote through the
 * group commit, as RemoteNotes stores it: a tag, a mention of a local account), edited
 * (EditingService.applyRemoteEdit, as an Update) and removed (RemovalService.remove, as a
 * Delete). The signed deliveries around them are measured by federation-inbound.ts; this is the
 * writes alone, with their `within` consequences (counters, notifications). Each checkout's
 * services run on a fresh database of their own, 16 lives at once, alternately round after round.
 *
 *   bun scripts/bench/remote-statuses.ts --before=<dir of the other checkout> [--rounds=6] [--lives=3000]
 */
import { join } from "node:path";
import type { startTestServices as Start } from "../../test/support/services.ts";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const beforeRoot = arg("before");
if (!beforeRoot) throw new Error("--before=<dir of the other checkout> is required");
const rounds = Number(arg("rounds") ?? 6);
const lives = Number(arg("lives") ?? 3000);

type Harness = Awaited<ReturnType<typeof Start>>;
const open = async (root: string): Promise<Harness> => ((await import(join(root, "test/support/services.ts"))) as { startTestServices: typeof Start }).startTestServices();
const sides = { before: await open(beforeRoot), after: await open(join(import.meta.dir, "../..")) };

async function measure(t: Harness, round: number): Promise<number> {
  const reader = (await t.services.accounts.getLocal("reader")) ?? (await t.local("reader"));
  const carol = (await t.services.accounts.getRemote("carol", "remote.example")) ?? (await t.remote("carol", "remote.example"));
  const s = t.services;
  const start = process.cpuUsage();
  let next = 0;
  const flow = async () => {
    while (next < lives) {
      const n = next++;
      const input = {
        accountId: carol.id,
        uri: `https://remote.example/users/carol/statuses/${round}-${n}`,
        url: null,
        html: `<p>note ${n} @reader #bench</p>`,
        text: `note ${n} @reader #bench`,
        spoilerText: "",
        sensitive: false,
        tags: ["bench"],
        visibility: "public" as const,
        language: null,
        createdAt: t.clock.now(),
        inReplyToId: null,
        inReplyToUri: null,
        mentions: [{ id: reader.id, username: "reader" }],
        media: [],
        emojis: [],
        poll: null,
      };
      const row = await s.writes.run(() => s.posting.publishRemote(input));
      if (!row) throw new Error("not stored");
      const edited = await s.editing.applyRemoteEdit(row, { html: `<p>edited ${n}</p>`, text: `edited ${n}`, spoilerText: "", sensitive: false, tags: ["bench"], emojis: [], editedAt: t.clock.now() });
      await s.removal.remove(edited);
    }
  };
  await Promise.all(Array.from({ length: 16 }, flow));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / lives;
}

const figures: Record<"before" | "after", number[]> = { before: [], after: [] };
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? (["before", "after"] as const) : (["after", "before"] as const);
  for (const name of order) figures[name].push(await measure(sides[name], round));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`a remote status stored, edited and removed: CPU µs per life (16 at once, ${lives} a round, ${rounds} rounds):`);
console.log(`before ${median(figures.before).toFixed(1)}  after ${median(figures.after).toFixed(1)}  ratio ${(median(figures.after) / median(figures.before)).toFixed(2)}`);
console.log(`rounds: ${figures.before.map((b, i) => `${b.toFixed(1)}/${figures.after[i]!.toFixed(1)}`).join(" ")}`);
sides.before.close();
sides.after.close();
