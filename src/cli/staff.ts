import { loadConfig } from "../config.ts";
import type { AccountRow } from "../db/schema.ts";
import { isRole, ROLES } from "../models/roles.ts";
import { OPERATOR } from "../services/admin/audit-log.ts";
import type { Services } from "../services/index.ts";
import { CliFailure, parseArgs, withServices } from "./admin.ts";
import { withFederation } from "./moves.ts";

// `rookery accounts suspend|unsuspend|delete|password|role|approve`: the operator's staff
// actions, through the same services (src/services/admin) as the admin API and pages, as the
// operator (allowed everything, logged without an account). What other servers are to be told
// (an Update of a suspended actor, a Delete of a deleted one) waits in the delivery queue for
// the running server.

export const STAFF_COMMANDS = ["suspend", "unsuspend", "delete", "password", "role", "approve"];

const out = (line: string) => process.stdout.write(`${line}\n`);

const USAGE: Record<string, string> = {
  suspend: "accounts suspend <username|user@domain>",
  unsuspend: "accounts unsuspend <username|user@domain>",
  delete: "accounts delete <username|user@domain>",
  password: "accounts password <username> [--password-stdin]",
  role: `accounts role <username> ${ROLES.join("|")}`,
  approve: "accounts approve <username>",
};

/** A local account by username, or a stored remote one by user@domain. */
async function accountNamed(services: Services, name: string | undefined, usage: string): Promise<AccountRow> {
  if (!name) throw new CliFailure(`needs an account: ${usage}`);
  const handle = name.replace(/^@/, "");
  const at = handle.indexOf("@");
  const account = at < 0 ? await services.accounts.getLocal(handle) : await services.accounts.getRemote(handle.slice(0, at), handle.slice(at + 1));
  if (!account) throw new CliFailure(at < 0 ? `no local account named ${handle}` : `no account ${handle} is known here`);
  return account;
}

const acct = (a: AccountRow) => (a.domain === null ? a.username : `${a.username}@${a.domain}`);

export async function staffAccountCommand(args: string[]) {
  const [sub, ...rest] = args;
  const { options, positional } = parseArgs(rest, ["password-stdin"]);
  const usage = USAGE[sub ?? ""]!;
  const role = positional[1];
  if (sub === "role" && !isRole(role)) throw new CliFailure(`needs one of ${ROLES.join(", ")}: ${usage}`);
  // Read before the database is opened: the new password, kept out of the process list.
  let password: string | undefined;
  if (sub === "password" && options.has("password-stdin")) {
    password = (await new Response(Bun.stdin.stream()).text()).replace(/\r?\n$/, "");
    if (password === "") throw new CliFailure("--password-stdin read nothing: pipe the new password in, or leave the option out for a random one");
  }
  // Suspending and deleting local accounts are told to other servers, when there is federation.
  const body = async (services: Services) => {
    const admin = services.adminAccounts;
    const account = await accountNamed(services, positional[0], usage);
    const user = account.domain === null ? await services.accounts.getUser(account.id) : undefined;
    const deleted = account.domain === null && !user;
    if (deleted) throw new CliFailure(`${acct(account)} was deleted`);
    switch (sub) {
      case "suspend": {
        if (account.suspendedAt !== null) throw new CliFailure(`${acct(account)} is suspended already`);
        await admin.suspend(OPERATOR, account.id);
        out(`Suspended ${acct(account)}: ${account.domain === null ? "signed out everywhere, hidden, and its followers' servers told" : "hidden here, its follows of local accounts rejected"}`);
        return;
      }
      case "unsuspend": {
        if (account.suspendedAt === null) throw new CliFailure(`${acct(account)} is not suspended`);
        await admin.unsuspend(OPERATOR, account.id);
        out(`Unsuspended ${acct(account)}`);
        return;
      }
      case "delete": {
        // The operator deletes at once (as tootctl does): suspended first, then its data removed.
        if (account.suspendedAt === null) await admin.suspend(OPERATOR, account.id);
        await admin.remove(OPERATOR, account.id);
        out(`Deleted ${acct(account)}: its statuses, follows and profile are gone, its name stays taken${account.domain === null ? "; its followers' servers are sent Delete" : ""}`);
        return;
      }
      case "password": {
        if (!user) throw new CliFailure(`${acct(account)} is not a local account`);
        const reset = await admin.resetPassword(OPERATOR, account.id, password);
        out(password === undefined ? `New password for ${account.username}: ${reset.password}` : `Password of ${account.username} changed`);
        out("Signed out of every app and browser");
        return;
      }
      case "role": {
        if (!user) throw new CliFailure(`${acct(account)} is not a local account`);
        if (user.role === role) throw new CliFailure(`${account.username} is ${role} already`);
        await admin.changeRole(OPERATOR, account.id, role as string);
        out(`${account.username} is now ${role} (was ${user.role})`);
        return;
      }
      case "approve": {
        if (!user) throw new CliFailure(`${acct(account)} is not a local account`);
        if (user.approved) throw new CliFailure(`${account.username} is approved already`);
        await admin.approve(OPERATOR, account.id);
        out(`Approved ${account.username}: they can sign in now`);
        return;
      }
    }
  };
  await (loadConfig().federation ? withFederation(body) : withServices(body));
}
