import { CustomEmojiService } from "./services/custom-emojis.ts";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { SystemClock } from "./clock.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { largestId, migrate, openDatabase, SchemaTooNewError } from "./db/connection.ts";
import { ApiError } from "./errors.ts";
import { federationStatus } from "./federation/cli-report.ts";
import { IdGenerator } from "./ids.ts";
import { log } from "./log.ts";
import { MediaStorage } from "./media-files/storage.ts";
import { startServer } from "./server.ts";
import { AccountService } from "./services/accounts/accounts.ts";
import { ProfileImageService } from "./services/accounts/profile-images.ts";
import { EventBus } from "./infra/events.ts";
import { ROOKERY_VERSION, VERSION_STRING } from "./version.ts";
import { aliasCommand, moveCommand } from "./cli/moves.ts";
import { exportCommand, importCommand } from "./cli/portability.ts";
import { exportArchiveCommand, importArchiveCommand } from "./cli/archive.ts";
import { relaysCommand } from "./cli/relays.ts";
import { twoFactorCommand } from "./cli/two-factor.ts";
import { announcementsCommand, CliFailure, descriptionCommand, emojiCommand, parseArgs, reportsCommand, rulesCommand, withServices } from "./cli/admin.ts";

const HELP = `Rookery ${ROOKERY_VERSION}: a Mastodon-compatible server in one file.

Usage:
  rookery [serve]                         Start the server in the foreground
  rookery accounts create <username> --email <address> (--password <password> | --password-stdin)
                                          Create a local account; prints its id
  rookery accounts list                   List local accounts
  rookery accounts two-factor <username> status|off
                                          Whether it signs in with two-factor; off turns it off (a lost phone)
  rookery accounts alias add|remove <username> <url-or-handle>
                                          Name (or unname) an account this one comes from (alsoKnownAs)
  rookery accounts alias list <username>  List its aliases
  rookery accounts move <username> --to <handle-or-url> [--redirect-only]
                                          Move the account to one that names it among its aliases:
                                          its followers are sent Move, and it posts no more
                                          (--redirect-only: point the profile there, move nobody)
  rookery accounts move <username> --cancel
                                          Take a redirect back: the account shows no move, posts again
  rookery accounts export <username> --csv <dir>
                                          Write the account's lists as Mastodon's CSV files into <dir>
  rookery accounts import <username> <file> --type following|blocks|mutes|domain_blocks|bookmarks|lists
                          [--overwrite] [--no-wait]
                                          Queue a Mastodon CSV file for the running server to work off,
                                          and follow its progress (--overwrite: what the file lacks goes)
  rookery accounts export-archive <username> <file.zip|file.tar.gz>
                                          Write the account's archive in Mastodon's layout (posts, media,
                                          likes, bookmarks, profile)
  rookery accounts import-archive <username> <archive.zip|archive.tar.gz> [--with-replies]
                                          Bring the public and unlisted posts of an archive from another
                                          server in, dated as written (not sent to followers); again adds nothing
  rookery federation status               Deliveries waiting, domains failing lately, and the relays
  rookery relays add <url> [--kind mastodon|litepub]
                                          Subscribe to a relay: a Mastodon relay's inbox or a LitePub
                                          relay's actor (found out unless --kind says); what it brings
                                          fills the federated timeline, local public posts go to it
  rookery relays remove <url>             Unsubscribe (Undo of the Follow)
  rookery relays list                     Each relay's kind, state (pending, accepted, refused) and activity
  rookery domains block <domain>          Suspend a domain and its subdomains: nothing is taken from,
                                          sent to or fetched from them; their accounts here are removed
  rookery domains unblock <domain>        Lift a suspension
  rookery domains allow <domain>          Federate with a domain under WHITELIST_MODE (allow list)
  rookery domains disallow <domain>       Take a domain off the allow list
  rookery domains list                    List blocked and allowed domains
  rookery emoji add <shortcode> <image-file> [--category <name>]
                                          Add a custom emoji (PNG, GIF or WebP, under 256 KB)
  rookery emoji list                      List the custom emojis
  rookery emoji remove <shortcode>        Remove one
  rookery announcements create "<text>" [--starts-at <time> --ends-at <time>] [--all-day]
                                          Announce something to every user (times in ISO 8601); prints its id
  rookery announcements list              List announcements
  rookery announcements delete <id>       Take one down
  rookery rules add "<text>" [--hint "<hint>"]
                                          Add a server rule (shown by the instance endpoints); prints its id
  rookery rules list                      List the rules
  rookery rules remove <id>               Remove a rule
  rookery description set "<text>" | --file <file>
                                          Set the extended description (/api/v1/instance/extended_description)
  rookery description show                Print it
  rookery reports list [--all]            Reports users made, unresolved ones unless --all
  rookery reports resolve <id>            Mark a report handled
  rookery migrate                         Apply database migrations and exit
  rookery backup <file>                   Write a consistent copy of the database, also while serving
  rookery --version                       Print the version
  rookery --help                          Print this help

Settings come from the environment:
  PORT (3000)  HOST (127.0.0.1)  DATA_DIR (./data)  PUBLIC_URL (http://localhost:$PORT)
  REGISTRATIONS (open|closed, closed)  WHITELIST_MODE (true|false, false)
  RATE_LIMITS (on|off, on)  TRUSTED_PROXIES (none)  INSTANCE_TITLE (Rookery)
  CONTACT_EMAIL (none)  LOG_REQUESTS (true)  MEDIA_WORKERS (cores - 1; ffmpeg: 1)
  FEDERATION (on|off, on)  ALLOW_PRIVATE_ADDRESSES (false)  AUTHORIZED_FETCH (false)
  TMPDIR (/tmp; must allow executables: libvips is loaded from there)
  FFMPEG_PATH, FFPROBE_PATH (the built-in ffmpeg, unpacked under DATA_DIR/tools; else the system's)
`;

function fail(message: string): never {
  process.stderr.write(`rookery: ${message}\n`);
  process.exit(1);
}

async function serve() {
  const config = loadConfig();
  // PORT=0 without PUBLIC_URL: the kernel picks the port, and the public URL follows it.
  const running = await startServer(config, { derivePublicUrl: !process.env.PUBLIC_URL?.trim() });
  log("info", "Rookery is listening", {
    version: VERSION_STRING,
    url: running.ctx.config.publicUrl,
    listen: running.url,
    data: config.dataDir,
    registrations: config.registrations,
  });
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log("info", "shutting down", { signal });
    await running.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

async function accounts(args: string[]) {
  if (args[0] === "export") return exportCommand(args.slice(1));
  if (args[0] === "import") return importCommand(args.slice(1));
  if (args[0] === "export-archive") return exportArchiveCommand(args.slice(1));
  if (args[0] === "import-archive") return importArchiveCommand(args.slice(1));
  const config = loadConfig();
  const handle = openDatabase(config.dataDir);
  const clock = new SystemClock();
  const storage = new MediaStorage(config.dataDir, config.publicUrl);
  const ids = new IdGenerator(clock);
  ids.seed(largestId(handle.sqlite));
  const emojis = new CustomEmojiService(handle.db, ids, clock, storage);
  const service = new AccountService(handle.db, ids, clock, config.publicUrl, new ProfileImageService(storage), new EventBus(handle.sqlite), (texts) => emojis.inTexts(texts));
  try {
    const [sub, ...rest] = args;
    if (sub === "create") {
      const { options, positional } = parseArgs(rest, ["password-stdin"]);
      const username = positional[0];
      if (!username) fail("accounts create needs a username: accounts create <username> --email <address> --password <password>");
      const email = options.get("email");
      // --password-stdin keeps the password out of the process list and shell history.
      const password = options.has("password-stdin") ? (await new Response(Bun.stdin.stream()).text()).replace(/\r?\n$/, "") : options.get("password");
      if (!email) fail("accounts create needs --email <address>");
      if (!password) fail("accounts create needs --password <password> (or --password-stdin)");
      try {
        const account = await service.create({ username, email, password }, { api: false });
        process.stdout.write(`${account.id}\n`);
      } catch (e) {
        if (e instanceof ApiError) fail(e.message.replace(/^Validation failed: /, ""));
        throw e;
      }
    } else if (sub === "list") {
      const rows = service.list();
      if (rows.length === 0) process.stdout.write("No accounts yet.\n");
      for (const { account, email } of rows) process.stdout.write(`${account.id}\t${account.username}\t${email}\n`);
    } else {
      fail(`unknown accounts command "${sub ?? ""}"; use accounts create, list, alias, move, export, import, export-archive or import-archive`);
    }
  } finally {
    handle.close();
  }
}

/**
 * Domain blocks and the allow list, written straight to the database (a running server reads
 * them on every check, and notices the accounts a block removed: see server.ts).
 */
async function domains(args: string[]) {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  await withServices((services, config) => {
    const rules = services.federationDomains;
    const [sub, domain] = args;
    const needsDomain = (name: string) => {
      if (!domain) throw new CliFailure(`domains ${name} needs a domain: domains ${name} <domain>`);
      return domain;
    };
    switch (sub) {
      case "block": {
        const r = rules.block(needsDomain("block"));
        out(`${r.created ? "Blocked" : "Already blocked:"} ${r.domain} and its subdomains${r.removedAccounts ? `; ${r.removedAccounts} account(s) from there removed` : ""}`);
        break;
      }
      case "unblock": {
        const r = rules.unblock(needsDomain("unblock"));
        out(r.removed ? `Unblocked ${r.domain}` : `${r.domain} was not blocked`);
        break;
      }
      case "allow": {
        const r = rules.allow(needsDomain("allow"));
        out(`${r.created ? "Allowed" : "Already allowed:"} ${r.domain}${config.whitelistMode ? "" : " (the allow list applies under WHITELIST_MODE=true)"}`);
        break;
      }
      case "disallow": {
        const r = rules.disallow(needsDomain("disallow"));
        out(r.removed ? `Disallowed ${r.domain}` : `${r.domain} was not allowed`);
        break;
      }
      case "list": {
        const { blocked, allowed } = rules.list();
        if (blocked.length === 0 && allowed.length === 0) out("No blocked or allowed domains.");
        for (const r of blocked) out(`blocked\t${r.domain}`);
        for (const r of allowed) out(`allowed\t${r.domain}`);
        break;
      }
      default:
        throw new CliFailure(`unknown domains command "${sub ?? ""}"; use domains block, unblock, allow, disallow or list`);
    }
  });
}

async function main(argv: string[]) {
  const [command = "serve", ...args] = argv;
  if (argv.includes("--help") || argv.includes("-h") || command === "help") {
    process.stdout.write(HELP);
    return;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    process.stdout.write(`rookery ${ROOKERY_VERSION} (${VERSION_STRING})\n`);
    return;
  }
  try {
    switch (command) {
      case "serve":
        return await serve();
      case "accounts":
        // Those two need federation (WebFinger, fetches, deliveries): cli/moves.ts.
        if (args[0] === "alias") return await aliasCommand(args.slice(1));
        if (args[0] === "move") return await moveCommand(args.slice(1));
        if (args[0] === "two-factor") return await twoFactorCommand(args.slice(1));
        return await accounts(args);
      case "federation": {
        if (args[0] !== "status") fail(`unknown federation command "${args[0] ?? ""}"; use federation status`);
        const config = loadConfig();
        const handle = openDatabase(config.dataDir);
        try {
          process.stdout.write(await federationStatus(handle.sqlite, new SystemClock()));
        } finally {
          handle.close();
        }
        return;
      }
      case "domains":
        return await domains(args);
      case "relays":
        return await relaysCommand(args);
      case "emoji":
        return await emojiCommand(args);
      case "announcements":
        return await announcementsCommand(args);
      case "rules":
        return await rulesCommand(args);
      case "description":
        return await descriptionCommand(args);
      case "reports":
        return await reportsCommand(args);
      case "migrate": {
        const config = loadConfig();
        const handle = openDatabase(config.dataDir, { migrate: false });
        let applied: number;
        try {
          applied = migrate(handle.db, handle.path);
        } finally {
          handle.close();
        }
        process.stdout.write(`Applied ${applied} migration(s) to ${handle.path}\n`);
        return;
      }
      case "backup": {
        const target = args[0];
        if (!target) fail("backup needs a target file: rookery backup <file>");
        const file = resolve(target);
        if (existsSync(file)) fail(`${file} already exists; choose a new file`);
        const config = loadConfig();
        // A copy of the database as it is: never migrated first (the backup taken before an
        // upgrade must be the old schema), and possible of one a newer Rookery has migrated.
        const handle = openDatabase(config.dataDir, { migrate: false });
        // VACUUM INTO reads one consistent snapshot, even while the server writes.
        handle.sqlite.run("VACUUM INTO ?", [file]);
        handle.close();
        process.stdout.write(`Backed up ${handle.path} to ${file}\n`);
        // The sealing key stays out of the database on purpose (see TokenSeal): say so.
        process.stdout.write(`Not in it: ${config.dataDir}/push-token.key (copy it too, or apps must subscribe to Web Push again)\n`);
        process.stdout.write(`Not in it: ${config.dataDir}/two-factor.key (copy it too, or members with two-factor must sign in with recovery codes)\n`);
        return;
      }
      default:
        fail(`unknown command "${command}"; see rookery --help`);
    }
  } catch (e) {
    if (e instanceof ConfigError || e instanceof CliFailure || e instanceof SchemaTooNewError) fail(e.message);
    throw e;
  }
}

// No top-level await: the executable is compiled to bytecode, which needs a CommonJS entry.
main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`rookery: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
