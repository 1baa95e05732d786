import { SystemClock } from "../clock.ts";
import { loadConfig } from "../config.ts";
import { relaysReport } from "../federation/cli-report.ts";
import type { RelayKind } from "../services/remote/relays.ts";
import { CliFailure, parseArgs } from "./admin.ts";
import { withPortDatabase } from "./database.ts";
import { withFederation } from "./moves.ts";

// `rookery relays add|remove|list`: the instance actor's subscriptions to relays. Adding or
// removing one puts the Follow (or its Undo) in the database's delivery queue, which the
// running server delivers; the relay's answer arrives at the server, and `relays list` (or
// `federation status`) shows it.

const out = (line: string) => process.stdout.write(`${line}\n`);

/** Said when the kind was found out by elimination: no relay actor answered at the URL. */
export const GUESSED_NOTE = "No relay actor answered at that URL, so it is taken for a Mastodon relay's inbox; if it is a LitePub relay's actor, remove it and add it again with --kind litepub.";
const USAGE = "relays add <url> [--kind mastodon|litepub], relays remove <url>, or relays list";

export async function relaysCommand(args: string[]) {
  const { options, positional } = parseArgs(args);
  const [sub, url] = positional;
  if (sub === "list") {
    const report = await withPortDatabase(loadConfig(), (database) => relaysReport(database.port, new SystemClock()));
    process.stdout.write(report);
    return;
  }
  if (sub !== "add" && sub !== "remove") throw new CliFailure(`unknown relays command "${sub ?? ""}"; use ${USAGE}`);
  if (!url) throw new CliFailure(`relays ${sub} needs the relay's URL: ${USAGE}`);
  const kind = options.get("kind");
  if (kind !== undefined && kind !== "mastodon" && kind !== "litepub") throw new CliFailure(`--kind is mastodon (the URL is the relay's inbox) or litepub (the URL is its actor)`);
  await withFederation(async (services) => {
    if (sub === "add") {
      const { relay, created, guessed } = await services.relays.add(url, kind as RelayKind | undefined);
      const what = relay.kind === "litepub" ? `a LitePub relay (actor ${relay.url}, inbox ${relay.inboxUrl})` : `a Mastodon relay (inbox ${relay.inboxUrl})`;
      out(created ? `Subscribing to ${what}: Follow sent, pending until it answers` : `Already subscribed to ${relay.url} (${relay.state})`);
      if (guessed) out(GUESSED_NOTE);
      return;
    }
    const removed = await services.relays.remove(url);
    if (removed === null) throw new CliFailure(`${url} is not a relay of this server`);
    out(`Unsubscribed from ${removed.url}: Undo of the Follow sent`);
  });
}
