import { OPERATOR } from "../services/admin/audit-log.ts";
import { CliFailure, withServices } from "./admin.ts";

/**
 * `rookery accounts two-factor <username> status|off`: what the operator does for a member who
 * lost both the authenticator app and the recovery codes (Mastodon's admin "disable 2FA"). The
 * member signs in with the password alone afterwards and may set it up again.
 */
export async function twoFactorCommand(args: string[]) {
  const [username, action] = args;
  if (!username || (action !== "status" && action !== "off")) throw new CliFailure("usage: rookery accounts two-factor <username> status|off");
  await withServices(async (services) => {
    const account = await services.accounts.getLocal(username);
    if (!account || account.domain !== null) throw new CliFailure(`no local account named ${username}`);
    const state = await services.twoFactor.state(account.id);
    if (action === "status") {
      process.stdout.write(state.enabled ? `on since ${new Date(state.enabledAt!).toISOString()}, ${state.recoveryCodesLeft} recovery codes left\n` : "off\n");
      return;
    }
    if (!state.enabled) throw new CliFailure(`two-factor sign-in is not on for ${username}`);
    // Through the staff rule, so that the audit log has it, as the operator's.
    await services.adminAccounts.disableTwoFactor(OPERATOR, account.id);
    process.stdout.write(`Two-factor sign-in turned off for ${username}; the password alone signs in now.\n`);
  });
}
