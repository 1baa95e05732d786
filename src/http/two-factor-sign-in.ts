import type { JWTPayload } from "jose";
import type { AppContext } from "../context.ts";
import type { Verdict } from "../infra/rate-limits.ts";
import { INVALID_SIGN_IN_CODE } from "../services/accounts/two-factor.ts";
import { cookie, FORM_COOKIE, fromOwnPages, signInThrottled } from "./oauth-forms.ts";
import { str, type Params } from "./params.ts";

/**
 * The second step of the sign-in forms (the OAuth sign-in and the pages' member sign-in) for an
 * account with two-factor: after the right password, a page asks for the code (Mastodon's
 * prompt_for_two_factor). What the first step proved travels in a signed ticket bound to the
 * browser's form cookie, with a stamp of the account's password and two-factor state so that
 * changing either sends a waiting sign-in back to its start (Mastodon's attempt_user_updated_at).
 * The code is throttled with the password (the same per-address and per-account buckets).
 */

const TICKET = "two_factor";
/** Long enough to find the phone; a sign-in waiting longer starts again. */
const TICKET_LIFETIME_S = 10 * 60;
const EXPIRED = "Your sign-in expired. Please sign in again.";

export interface PendingSignIn extends JWTPayload {
  /** The account whose password was right. */
  sub: string;
  stamp: string;
  /** What the sign-in goes on to: the OAuth request's parameters, or the member page to return to. */
  next: Record<string, string>;
}

/** The ticket the code page carries after the password step of `accountId`. */
export async function pendingSignIn(ctx: AppContext, accountId: number, next: Record<string, string | undefined>, formCookie: string): Promise<string> {
  const kept = Object.fromEntries(Object.entries(next).filter((e): e is [string, string] => typeof e[1] === "string"));
  const payload = { sub: String(accountId), stamp: await ctx.services.twoFactor.stamp(accountId), next: kept };
  return ctx.services.tickets.sign(TICKET, payload, TICKET_LIFETIME_S, formCookie);
}

export type SecondStep =
  /** The code was right: sign the browser in and go on. */
  | { kind: "signed-in"; accountId: number; next: Record<string, string> }
  /** Ask again, with this error, the ticket posted (its lifetime is not extended). */
  | { kind: "again"; status: number; error: string; ticket: string; next: Record<string, string>; limits?: Verdict }
  /** The waiting sign-in is over (expired, used, the password changed): back to the password form. */
  | { kind: "restart"; status: number; error: string }
  /** Not posted from this browser's form of ours. */
  | { kind: "refused"; status: number; error: string };

export async function secondStep(ctx: AppContext, request: Request, p: Params): Promise<SecondStep> {
  const { services } = ctx;
  if (!fromOwnPages(request, ctx.config.publicUrl)) return { kind: "refused", status: 403, error: "The request did not come from this server's pages." };
  const ticket = str(p.ticket, "ticket");
  const pending = await services.tickets.verify<PendingSignIn>(TICKET, ticket);
  if (!pending || ticket === undefined) return { kind: "restart", status: 422, error: EXPIRED };
  if (!services.tickets.isBoundTo(pending, cookie(request, FORM_COOKIE))) {
    return { kind: "refused", status: 403, error: "Your sign-in form was opened in another browser. Please try again." };
  }
  const accountId = Number(pending.sub);
  const account = await services.accounts.get(accountId);
  if (!account || pending.stamp !== (await services.twoFactor.stamp(accountId))) return { kind: "restart", status: 422, error: EXPIRED };
  const next = pending.next ?? {};
  const throttled = await signInThrottled(ctx, request, account.username);
  if (throttled) return { kind: "again", status: 429, error: "Too many sign-in attempts. Please try again later.", ticket, next, limits: throttled };
  if ((await services.twoFactor.verify(accountId, str(p.otp_attempt, "otp_attempt"))) === null) return { kind: "again", status: 401, error: INVALID_SIGN_IN_CODE, ticket, next };
  // One sign-in per password step.
  if (!services.tickets.claim(pending.jti, pending.exp)) return { kind: "restart", status: 422, error: EXPIRED };
  return { kind: "signed-in", accountId, next };
}

export const limitHeaders = (v: Verdict | undefined): Record<string, string> =>
  v ? { "x-ratelimit-limit": v.limit, "x-ratelimit-remaining": v.remaining, "x-ratelimit-reset": v.reset } : {};
