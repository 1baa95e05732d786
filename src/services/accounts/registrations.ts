import type { AccountRow } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import type { AccountService, NewAccount } from "./accounts.ts";
import { InviteUnusable, type InviteService } from "./invites.ts";

export type RegistrationsMode = "open" | "approval" | "closed";

/** How a sign-up is let in (RegistrationService decides; AccountService.create writes it). */
export interface Admission {
  /** False: staff approve the account before it may sign in (REGISTRATIONS=approval). */
  approved: boolean;
  /** The invite link it came with. */
  inviteId: number | null;
  /** Writes of the sign-up that stand or fall with the account (an invite's use), in its transaction. */
  within?: (accountId: number) => Promise<void> | void;
}

/** The user columns an admission sets; an account of the CLI (no admission) is approved and came with nothing. */
export function admitted(admission: Admission | undefined, reason: string) {
  return { approved: admission?.approved ?? true, signUpReason: reason === "" ? null : reason, inviteId: admission?.inviteId ?? null };
}

export interface SignUp extends NewAccount {
  /** An invite link's code given to the API (Mastodon's `invite_code`). */
  inviteCode?: string;
}

/**
 * Who may sign up, and how they are let in (Mastodon's RegistrationHelper and User#set_approved):
 * under `open` anyone, approved at once; under `approval` anyone, waiting for staff (they may
 * sign in once approved); under `closed` nobody through the API. An invite link lets its holder
 * in whatever the mode, approved at once (invited users are vouched for). Either way staff are
 * told (account.registered).
 */
export class RegistrationService {
  constructor(
    /** The mode now (an admin may change it while the server runs: InstanceInfo). */
    private currentMode: () => Promise<RegistrationsMode>,
    private accounts: AccountService,
    private invites: InviteService,
  ) {}

  /** The mode now (read at each call: an admin may change it, another process too). */
  mode(): Promise<RegistrationsMode> {
    return this.currentMode();
  }

  /**
   * POST /api/v1/accounts. Closed registrations refuse before anything is looked at, an
   * invite code included (Mastodon checks the mode without the invite there). Under approval a
   * usable invite code spares the wait; an unusable one is ignored, as Mastodon ignores it.
   */
  async signUp(input: SignUp): Promise<AccountRow> {
    const mode = await this.mode();
    if (mode === "closed") throw new ApiError(403, "Forbidden");
    const invite = input.inviteCode ? await this.invites.usable(input.inviteCode) : null;
    if (invite) return this.withInvite(invite.id, input);
    return this.accounts.create(input, { api: true }, { approved: mode === "open", inviteId: null });
  }

  /** The invite page's sign-up: open whatever the mode; throws InviteUnusable for a link that lets nobody in. */
  async signUpWithInvite(code: string, input: NewAccount): Promise<AccountRow> {
    const { invite, state } = await this.invites.find(code);
    if (!invite || state !== "usable") throw new InviteUnusable(state === "usable" ? "unknown" : state);
    return this.withInvite(invite.id, input);
  }

  // The use is counted in the account's own transaction: two sign-ups for the last use of an
  // invite cannot both have it.
  private withInvite(inviteId: number, input: NewAccount): Promise<AccountRow> {
    return this.accounts.create(input, { api: true }, { approved: true, inviteId, within: () => this.invites.use(inviteId) });
  }
}
