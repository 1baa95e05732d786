import { hostname } from "node:os";
import { SystemClock } from "../clock.ts";
import { loadConfig } from "../config.ts";
import { ApiError } from "../errors.ts";
import { lazyRookeryFederation } from "../federation/lazy.ts";
import { IdGenerator } from "../ids.ts";
import { mediaStorageFor } from "../media-files/stores.ts";
import { registerConsequences } from "../services/consequences.ts";
import type { Services } from "../services/index.ts";
import { assembleServices } from "../server.ts";
import { loadInstanceKeys } from "../services/instance-keys.ts";
import { CliFailure, parseArgs } from "./admin.ts";
import { withServerDatabase } from "./database.ts";

// `rookery accounts alias` and `rookery accounts move`: the operator names and moves accounts
// as their owners do through the API. These need federation, which the other commands do
// without: handles are resolved through WebFinger, the new account of a move is fetched, and
// what follows (Update of the actor, Move) is put in the database's delivery queue, which the
// running server delivers (or the next one to start).

const out = (line: string) => process.stdout.write(`${line}\n`);

const ALIAS_USAGE = "accounts alias add|remove <username> <url-or-handle>, or accounts alias list <username>";
const MOVE_USAGE = "accounts move <username> --to <handle-or-url> [--redirect-only], or accounts move <username> --cancel";

/** The services as the server assembles them, federation included but delivering nothing itself. */
export async function withFederation<T>(run: (services: Services) => T | Promise<T>): Promise<T> {
  const config = loadConfig();
  if (!config.federation) throw new CliFailure("federation is off (FEDERATION=off): accounts on other servers cannot be reached");
  return withServerDatabase(config, async (database) => {
    const clock = new SystemClock();
    const ids = new IdGenerator(clock);
    ids.seed(await database.largestId());
    const storage = mediaStorageFor(config);
    const { services, urls, core } = assembleServices({ config, port: database.port, clock, ids, storage, keys: await loadInstanceKeys(database.port) }, {
      federation: true,
      // On PostgreSQL the servers' shared queue (ordering keys locked, a NOTIFY wakes them); this command only enqueues.
      sharedQueue: database.postgres ? { sql: database.postgres.sql, worker: `${hostname()}:${process.pid}:command` } : undefined,
    });
    await services.federationDomains.load();
    const federation = lazyRookeryFederation(core!, { urls, services });
    registerConsequences(services.events, services, { federation: federation.subscribe });
    try {
      return await run(services);
    } catch (e) {
      if (e instanceof ApiError) throw new CliFailure(e.message.replace(/^Validation failed: /, ""));
      throw e;
    } finally {
      // What the command sent waits in the queue for the server; nothing is lost when this exits.
      await federation.queued();
      await federation.stop();
      await services.writes.flush();
    }
  });
}

async function localAccount(services: Services, username: string | undefined, usage: string) {
  if (!username) throw new CliFailure(`needs a username: ${usage}`);
  const account = await services.accounts.getLocal(username);
  if (!account) throw new CliFailure(`no local account named ${username}`);
  return account;
}

/** `rookery accounts alias add|remove|list <username> [<url-or-handle>]`. */
export async function aliasCommand(args: string[]) {
  const [sub, username, given] = args;
  if (sub !== "add" && sub !== "remove" && sub !== "list") throw new CliFailure(`unknown accounts alias command "${sub ?? ""}"; use ${ALIAS_USAGE}`);
  if (sub !== "list" && !given) throw new CliFailure(`accounts alias ${sub} needs an account: ${ALIAS_USAGE}`);
  await withFederation(async (services) => {
    const account = await localAccount(services, username, ALIAS_USAGE);
    const aliases = services.accountAliases;
    if (sub === "list") {
      const list = await aliases.list(account.id);
      if (list.length === 0) out(`${account.username} has no aliases.`);
      for (const uri of list) out(uri);
    } else if (sub === "add") {
      out(`${account.username} is also known as ${await aliases.add(account.id, given!)}`);
    } else {
      const removed = await aliases.remove(account.id, given!);
      if (removed === null) throw new CliFailure(`${given} is not an alias of ${account.username}`);
      out(`Removed ${removed} from the aliases of ${account.username}`);
    }
  });
}

/**
 * `rookery accounts move <username> --to <handle-or-url>`: as the API's move, without the
 * password; `--redirect-only` points the profile elsewhere without moving anyone (Mastodon's
 * redirect), `--cancel` takes a redirect (or a move's) back.
 */
export async function moveCommand(args: string[]) {
  const { options, positional } = parseArgs(args, ["redirect-only", "cancel"]);
  const target = options.get("to");
  if (!target && !options.has("cancel")) throw new CliFailure(`accounts move needs --to: ${MOVE_USAGE}`);
  await withFederation(async (services) => {
    const account = await localAccount(services, positional[0], MOVE_USAGE);
    if (options.has("cancel")) {
      out((await services.accountMoving.cancel(account.id)) ? `${account.username} no longer points to another account` : `${account.username} had not moved`);
      return;
    }
    const redirectOnly = options.has("redirect-only");
    const moved = await services.accountMoving.move(account.id, { target }, { checkPassword: false, redirectOnly });
    const where = moved.domain === null ? moved.username : moved.uri;
    if (redirectOnly) {
      out(`${account.username} now points to ${where}; its followers stay`);
      return;
    }
    const followers = (await services.federationActors.remoteFollowers(account.id)).length;
    out(`${account.username} moved to ${where}; its followers here follow the new account, and ${followers} remote follower(s) are being sent the Move`);
  });
}
