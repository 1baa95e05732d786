import type { InviteListing } from "../services/accounts/invites.ts";
import { InviteUnusable } from "../services/accounts/invites.ts";
import { CliFailure, parseArgs, withServices } from "./admin.ts";

const out = (line: string) => process.stdout.write(`${line}\n`);

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `30m`, `12h`, `1d`, `2w`, or `never` (null); undefined when it is none of those. */
export function parseDuration(text: string): number | null | undefined {
  if (text.trim().toLowerCase() === "never") return null;
  const m = /^(\d{1,6})([mhdw])$/.exec(text.trim().toLowerCase());
  return m ? Number(m[1]) * UNITS[m[2] as string]! : undefined;
}

const STATES: Record<InviteListing["state"], string> = { usable: "usable", expired: "expired", used_up: "used up", unknown: "unknown", disabled: "maker cannot sign in" };

function listing({ invite, maker, state }: InviteListing): string {
  const uses = `${invite.uses}/${invite.maxUses ?? "∞"} uses`;
  const expiry = invite.expiresAt === null ? "never expires" : `${state === "expired" ? "expired" : "expires"} ${new Date(invite.expiresAt).toISOString()}`;
  return [invite.id, `@${maker}`, STATES[state], uses, expiry, invite.comment ?? ""].join("\t").trimEnd();
}

/**
 * `rookery invites create|list|revoke`: the operator's invite links (members make theirs at
 * /settings/invites, admins revoke any at /admin/invites). The link is printed once: only its
 * digest is stored, so it cannot be shown again.
 */
export async function invitesCommand(args: string[]) {
  const [sub, ...rest] = args;
  const { options, positional } = parseArgs(rest);
  await withServices(async (services) => {
    const invites = services.invites;
    switch (sub) {
      case "create": {
        const by = options.get("by");
        const maker = by !== undefined ? (await services.accounts.getLocal(by.replace(/^@/, "")))?.id : await invites.operator();
        if (maker === undefined) throw new CliFailure(`no local account named ${by}`);
        if (maker === null) throw new CliFailure("no owner or admin account to make the invite: name its maker with --by <username>");
        const expires = options.has("expires") ? parseDuration(options.get("expires")!) : 7 * UNITS.d!;
        if (expires === undefined) throw new CliFailure(`--expires must be a duration such as 30m, 12h, 1d or 2w, or never (got "${options.get("expires")}")`);
        const usesText = options.get("uses");
        const maxUses = usesText === undefined ? null : /^\d{1,7}$/.test(usesText) && Number(usesText) > 0 ? Number(usesText) : NaN;
        if (Number.isNaN(maxUses)) throw new CliFailure(`--uses must be a whole number of sign-ups from 1 (got "${usesText}")`);
        let issued;
        try {
          issued = await invites.create(maker, { maxUses, expiresInMs: expires, comment: options.get("comment") });
        } catch (e) {
          if (e instanceof InviteUnusable) throw new CliFailure("that account cannot make invites (it waits for approval or is suspended)");
          throw e;
        }
        // The link alone on standard output (for scripts); what to know about it on standard error.
        out(issued.url);
        const { invite } = issued;
        process.stderr.write(
          `Invite ${invite.id}: ${invite.maxUses === null ? "any number of sign-ups" : `${invite.maxUses} sign-up(s)`}, ${invite.expiresAt === null ? "never expires" : `until ${new Date(invite.expiresAt).toISOString()}`}. ` +
            "It lets its holder sign up even while registrations are closed, approved at once. " +
            "Copy the link now: only its digest is kept, so it cannot be shown again.\n",
        );
        return;
      }
      case "list": {
        const rows = await invites.list();
        if (rows.length === 0) out("No invites yet.");
        for (const row of rows) out(listing(row));
        return;
      }
      case "revoke": {
        const id = Number(positional[0]);
        if (!positional[0] || !/^\d{1,19}$/.test(positional[0])) throw new CliFailure("invites revoke needs the invite's id (see invites list): invites revoke <id>");
        const result = await invites.revoke(id);
        if (result === null) throw new CliFailure(`no invite with id ${positional[0]}`);
        out(result === "revoked" ? `Revoked invite ${positional[0]}: its link lets nobody in now` : `Invite ${positional[0]} had already expired`);
        return;
      }
      default:
        throw new CliFailure(`unknown invites command "${sub ?? ""}"; use invites create, list or revoke`);
    }
  });
}
