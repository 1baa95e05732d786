import { CustomEmojiService } from "./services/custom-emojis.ts";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { SystemClock } from "./clock.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { migrate, openDatabase, SchemaTooNewError } from "./db/connection.ts";
import { ApiError } from "./errors.ts";
import { federationStatus } from "./federation/cli-report.ts";
import { IdGenerator } from "./ids.ts";
import { log } from "./log.ts";
import { mediaStorageFor } from "./media-files/stores.ts";
import { startServer } from "./server.ts";
import { AccountService } from "./services/accounts/accounts.ts";
import { ProfileImageService } from "./services/accounts/profile-images.ts";
import { EventBus } from "./infra/events.ts";
import { ROOKERY_VERSION, VERSION_STRING } from "./version.ts";
import { exportCommand, importCommand } from "./cli/portability.ts";
import { exportArchiveCommand, importArchiveCommand } from "./cli/archive.ts";
import { invitesCommand } from "./cli/invites.ts";
import { STAFF_COMMANDS, staffAccountCommand } from "./cli/staff.ts";
import { twoFactorCommand } from "./cli/two-factor.ts";
import { announcementsCommand, CliFailure, descriptionCommand, emojiCommand, parseArgs, reportsCommand, rulesCommand, withServices } from "./cli/admin.ts";
import { setting, settingsHelp } from "./settings.ts";
import { dataDirNotice, requireDatabase } from "./cli/data-dir.ts";
import { sqliteOnly, withPortDatabase, withServerDatabase } from "./cli/database.ts";
import { openPortDatabase } from "./server-database.ts";
import { listenFailure, ordinaryFailure } from "./cli/failures.ts";

const HELP = `Rookery ${ROOKERY_VERSION}: a Mastodon-compatible server in one file.

Usage:
  rookery [serve]                         Start the server in the foreground
  rookery accounts create <username> --email <address> (--password <password> | --password-stdin)
                                          Create a local account; prints its id
  rookery accounts list                   List local accounts
  rookery accounts suspend <username|user@domain>
                                          Suspend an account: hidden everywhere, signed out, refused at
                                          sign-in; its followers' servers are told (unsuspend: undo)
  rookery accounts unsuspend <username|user@domain>
  rookery accounts delete <username|user@domain>
                                          Delete an account's statuses, follows and profile; its name
                                          stays taken, its actor answers 410, its followers' servers get Delete
  rookery accounts password <username> [--password-stdin]
                                          Set a new password (random and printed, unless given on stdin);
                                          signs the account out everywhere
  rookery accounts role <username> user|moderator|admin|owner
                                          Give a local account a staff role (Mastodon's roles)
  rookery accounts approve <username>     Let a sign-up waiting for approval sign in
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
  rookery invites create [--expires 1d|12h|2w|never] [--uses <n>] [--comment "<text>"] [--by <username>]
                                          Make an invite link (7 days, any number of sign-ups unless
                                          told; the owner's unless --by): its holder signs up at
                                          /invite/<code> even while REGISTRATIONS=closed, approved at
                                          once. Printed once: only its digest is kept
  rookery invites list                    Every invite: maker, state, uses, expiry, comment
  rookery invites revoke <id>             Expire an invite now
  rookery federation status               Deliveries waiting, domains failing lately, and the relays
  rookery federation check [--time-from <url>]
                                          Check what other servers will see: PUBLIC_URL over https, its
                                          certificate, host-meta, WebFinger, NodeInfo, the proxy's
                                          forwarded addresses, the clock (against <url>'s Date header)
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
  rookery media migrate-to-s3             Copy the files under DATA_DIR/media to the bucket the S3_
                                          settings name (run it with them, MEDIA_STORAGE=s3 included);
                                          again skips what is there; switches nothing (docs/scaling.md)
  rookery migrate                         Apply database migrations and exit
  rookery backup <file>                   Write a consistent copy of the database, also while serving
  rookery migrate-to-postgres <DATABASE_URL>
                                          Copy the stopped server's database, every table, into an empty
                                          PostgreSQL database, and check the copy (docs/scaling.md)
  rookery --version                       Print the version
  rookery --help                          Print this help

Settings come from the environment (a bad value stops with a message naming it):
`;

const HELP_NOTES = `
Also read: MALLOC_ARENA_MAX (by glibc; 2 keeps image decoding's memory from piling up in
per-thread arenas: set it for the server, as npm start and the systemd unit do).
`;

/** Every command but these needs a data directory with a database in it. */
const MAKES_DATABASE = new Set(["serve", "migrate"]);
const COMMANDS = new Set(["serve", "accounts", "federation", "domains", "relays", "invites", "emoji", "announcements", "rules", "description", "reports", "migrate", "backup", "media", "migrate-to-postgres"]);

/** The key files the data directory holds (push-token.key, and any a later version adds). */
/** What is lost without each key file the data directory holds beside the database. */
const KEY_FILE_NOTES: Record<string, string> = {
  "push-token.key": " (without it, apps must subscribe to Web Push again)",
  "two-factor.key": " (without it, members with two-factor must sign in with recovery codes)",
};

function keyFiles(dataDir: string): string[] {
  return existsSync(dataDir) ? readdirSync(dataDir).filter((f) => f.endsWith(".key")).sort() : [];
}

function fail(message: string): never {
  process.stderr.write(`rookery: ${message}\n`);
  process.exit(1);
}

async function serve() {
  const config = loadConfig();
  // PORT=0 without PUBLIC_URL: the kernel picks the port, and the public URL follows it.
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer(config, { derivePublicUrl: setting("PUBLIC_URL") === undefined });
  } catch (e) {
    const refused = listenFailure(e, config);
    if (refused !== null) fail(refused);
    throw e;
  }
  log("info", "Rookery is listening", {
    version: VERSION_STRING,
    url: running.ctx.config.publicUrl,
    listen: running.url,
    data: config.dataDir,
    // On PostgreSQL, where the data is (without the URL's password).
    ...(running.database.postgres ? { database: running.database.path } : {}),
    migrations_applied: running.database.migrationsApplied,
    registrations: await running.ctx.services.registrations.mode(),
  });
  // The executable starts with the JIT held back (scripts/build.ts): start-up code runs once,
  // and compiling it cost time and memory. Requests get the normal policy.
  Bun.unsafe.setJITPolicy(1);
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

/** The password piped in (`--password-stdin`), without its final newline; nothing piped is refused. */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) fail("--password-stdin reads the password from a pipe: printf '%s' 'the password' | rookery ...; or give --password");
  const password = (await new Response(Bun.stdin.stream()).text()).replace(/\r?\n$/, "");
  if (password === "") fail("--password-stdin read nothing from standard input: pipe the password in (printf '%s' 'the password' | rookery ...)");
  return password;
}

async function accounts(args: string[]) {
  if (args[0] === "export") return exportCommand(args.slice(1));
  if (args[0] === "import") return importCommand(args.slice(1));
  if (args[0] === "export-archive") return exportArchiveCommand(args.slice(1));
  if (args[0] === "import-archive") return importArchiveCommand(args.slice(1));
  if (STAFF_COMMANDS.includes(args[0] ?? "")) return staffAccountCommand(args);
  const config = loadConfig();
  await withServerDatabase(config, async (handle) => {
    const clock = new SystemClock();
    const storage = mediaStorageFor(config);
    const ids = new IdGenerator(clock);
    ids.seed(await handle.largestId());
    const emojis = new CustomEmojiService(handle.port, ids, clock, storage);
    const service = new AccountService(handle.port, ids, clock, config.publicUrl, new ProfileImageService(storage), new EventBus(handle.port), (texts) => emojis.inTexts(texts));
    const [sub, ...rest] = args;
    if (sub === "create") {
      const { options, positional } = parseArgs(rest, ["password-stdin"]);
      const username = positional[0];
      if (!username) fail("accounts create needs a username: accounts create <username> --email <address> --password <password>");
      const email = options.get("email");
      // --password-stdin keeps the password out of the process list and shell history.
      const password = options.has("password-stdin") ? await passwordFromStdin() : options.get("password");
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
      const rows = await service.list();
      if (rows.length === 0) process.stdout.write("No accounts yet.\n");
      for (const { account, email } of rows) process.stdout.write(`${account.id}\t${account.username}\t${email}\n`);
    } else {
      fail(`unknown accounts command "${sub ?? ""}"; use accounts create, list, suspend, unsuspend, delete, password, role, approve, alias, move, export, import, export-archive or import-archive`);
    }
  });
}

/**
 * Domain blocks and the allow list, written straight to the database (a running server reads
 * them on every check, and notices the accounts a block removed: see server.ts).
 */
async function domains(args: string[]) {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  await withServices(async (services, config) => {
    const rules = services.federationDomains;
    const [sub, domain] = args;
    const needsDomain = (name: string) => {
      if (!domain) throw new CliFailure(`domains ${name} needs a domain: domains ${name} <domain>`);
      return domain;
    };
    switch (sub) {
      case "block": {
        const r = await rules.block(needsDomain("block"));
        out(`${r.created ? "Blocked" : "Already blocked:"} ${r.domain} and its subdomains${r.removedAccounts ? `; ${r.removedAccounts} account(s) from there removed` : ""}`);
        break;
      }
      case "unblock": {
        const r = await rules.unblock(needsDomain("unblock"));
        out(r.removed ? `Unblocked ${r.domain}` : `${r.domain} was not blocked`);
        break;
      }
      case "allow": {
        const r = await rules.allow(needsDomain("allow"));
        out(`${r.created ? "Allowed" : "Already allowed:"} ${r.domain}${config.whitelistMode ? "" : " (the allow list applies under WHITELIST_MODE=true)"}`);
        break;
      }
      case "disallow": {
        const r = await rules.disallow(needsDomain("disallow"));
        out(r.removed ? `Disallowed ${r.domain}` : `${r.domain} was not allowed`);
        break;
      }
      case "list": {
        const { blocked, allowed } = await rules.list();
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
    process.stdout.write(HELP + settingsHelp() + HELP_NOTES);
    return;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    process.stdout.write(`rookery ${ROOKERY_VERSION} (${VERSION_STRING})\n`);
    return;
  }
  try {
    if (!COMMANDS.has(command)) fail(`unknown command "${command}"; see rookery --help`);
    if (command !== "serve") {
      // The server logs it at start; every command says it first, on standard error.
      const config = loadConfig();
      // On PostgreSQL the commands open DATABASE_URL as the server does (cli/database.ts), which
      // refuses a database without Rookery's schema; migrate-to-postgres reads SQLite in DATA_DIR.
      if (!MAKES_DATABASE.has(command) && (config.database.kind === "sqlite" || command === "migrate-to-postgres")) requireDatabase(config);
      process.stderr.write(dataDirNotice(config));
    }
    switch (command) {
      case "serve":
        return await serve();
      case "accounts":
        // Those two need federation (WebFinger, fetches, deliveries): cli/moves.ts.
        // Commands that reach other servers load Fedify; `serve` loads it at first use (federation/lazy.ts).
        if (args[0] === "alias") return await (await import("./cli/moves.ts")).aliasCommand(args.slice(1));
        if (args[0] === "move") return await (await import("./cli/moves.ts")).moveCommand(args.slice(1));
        if (args[0] === "two-factor") return await twoFactorCommand(args.slice(1));
        return await accounts(args);
      case "federation": {
        if (args[0] === "check") return await (await import("./cli/federation-check.ts")).federationCheckCommand(args.slice(1));
        if (args[0] !== "status") fail(`unknown federation command "${args[0] ?? ""}"; use federation status or check`);
        const report = await withPortDatabase(loadConfig(), (database) => federationStatus(database.port, new SystemClock()));
        process.stdout.write(report);
        return;
      }
      case "domains":
        return await domains(args);
      case "relays":
        return await (await import("./cli/relays.ts")).relaysCommand(args);
      case "invites":
        return await invitesCommand(args);
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
      case "media":
        return await (await import("./cli/media.ts")).mediaCommand(args);
      case "migrate": {
        const config = loadConfig();
        if (config.database.kind === "postgres") {
          // migrations-pg/, under the same lock the servers take at start.
          const database = await openPortDatabase(config, { makes: true });
          await database.close();
          process.stdout.write(`Applied ${database.migrationsApplied} migration(s) to ${database.path}\n`);
          return;
        }
        const handle = openDatabase(config.dataDir, { migrate: false });
        let applied: number;
        try {
          applied = migrate(handle.sqlite, handle.path);
        } finally {
          handle.close();
        }
        process.stdout.write(`Applied ${applied} migration(s) to ${handle.path}\n`);
        return;
      }
      case "migrate-to-postgres": {
        // Its source is SQLite in DATA_DIR whatever DATABASE_URL says; its target is the argument.
        const notice = sqliteOnly(loadConfig(), `migrate-to-postgres copies SQLite's database in DATA_DIR, not DATABASE_URL's`);
        if (notice !== null) process.stderr.write(`rookery: ${notice}\n`);
        return await (await import("./cli/migrate-to-postgres.ts")).migrateToPostgresCommand(args);
      }
      case "backup": {
        const target = args[0];
        const pg = sqliteOnly(loadConfig(), "backup copies SQLite's database in DATA_DIR; back PostgreSQL up with its own tools (pg_dump)");
        if (pg !== null) fail(pg);
        if (!target) fail("backup needs a target file: rookery backup <file>");
        const file = resolve(target);
        if (existsSync(file)) fail(`${file} already exists; choose a new file`);
        if (!existsSync(dirname(file))) fail(`${dirname(file)} does not exist; make the folder first (mkdir -p ${dirname(file)})`);
        const config = loadConfig();
        // A copy of the database as it is: never migrated first (the backup taken before an
        // upgrade must be the old schema), and possible of one a newer Rookery has migrated.
        const handle = openDatabase(config.dataDir, { migrate: false });
        try {
          // VACUUM INTO reads one consistent snapshot, even while the server writes. SQLite's alone:
          // a PostgreSQL database is backed up with its own tools (pg_dump).
          handle.sqlite.run("VACUUM INTO ?", [file]);
        } finally {
          handle.close();
        }
        process.stdout.write(`Backed up ${handle.path} to ${file}\n`);
        // The keys stay out of the database on purpose (see TokenSeal), the media are files: say so.
        const media = config.mediaStorage.kind === "s3" ? `the bucket ${config.mediaStorage.bucket} (the media)` : `${join(config.dataDir, "media")}/ (the media)`;
        const besides = [...keyFiles(config.dataDir).map((f) => `${join(config.dataDir, f)}${KEY_FILE_NOTES[f] ?? ""}`), media];
        process.stdout.write(`Not in it, to copy too: ${besides.join(", ")}\n`);
        return;
      }
      default:
        fail(`unknown command "${command}"; see rookery --help`);
    }
  } catch (e) {
    if (e instanceof ConfigError || e instanceof CliFailure || e instanceof SchemaTooNewError) fail(e.message);
    const ordinary = ordinaryFailure(e);
    if (ordinary !== null) fail(ordinary);
    throw e;
  }
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`rookery: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
