import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { recoveryCodesPage, twoFactorPage } from "../web/settings/two-factor.ts";
import { field, secret, type MemberPages, type PageRequest, type Viewer } from "./member-pages.ts";
import { signInThrottled } from "./oauth-forms.ts";
import type { Params } from "./params.ts";

/**
 * Two-factor sign-in in the settings: set up (a QR code of the secret, confirmed by a first
 * code), recovery codes made again, disabled. Whatever takes a password or a code is throttled
 * with the sign-in forms, so that a session left open is no way around their limits.
 */
export function settingsTwoFactorRoutes(ctx: AppContext, pages: MemberPages) {
  const { twoFactor } = ctx.services;
  const page = async ({ viewer, csrf }: PageRequest) =>
    twoFactorPage(await twoFactor.state(viewer.account.id), await twoFactor.pending(viewer.account.id, viewer.account.username), csrf);

  const throttle = async (request: Request, viewer: Viewer) => {
    const throttled = await signInThrottled(ctx, request, viewer.account.username);
    if (throttled) throw new ApiError(429, "Too many attempts. Please try again later.");
  };
  const proof = (params: Params) => ({ password: secret(params, "current_password"), code: field(params, "otp_attempt") });

  return new Elysia()
    .get("/settings/two-factor", (c) => pages.show(c, page))
    .post("/settings/two-factor/setup", (c) =>
      pages.act(
        c,
        async ({ viewer }) => {
          await twoFactor.begin(viewer.account.id, viewer.account.username);
          return { to: "/settings/two-factor" };
        },
        page,
      ),
    )
    .post("/settings/two-factor/confirm", (c) =>
      pages.act(
        c,
        async ({ viewer, request, params }) => {
          await throttle(request, viewer);
          const codes = await twoFactor.confirm(viewer.account.id, field(params, "otp_attempt"));
          return { show: recoveryCodesPage(codes), notice: "Two-factor authentication successfully enabled." };
        },
        page,
      ),
    )
    .post("/settings/two-factor/recovery-codes", (c) =>
      pages.act(
        c,
        async ({ viewer, request, params }) => {
          await throttle(request, viewer);
          const codes = await twoFactor.regenerateRecoveryCodes(viewer.account.id, proof(params));
          return { show: recoveryCodesPage(codes), notice: "Recovery codes successfully regenerated." };
        },
        page,
      ),
    )
    .post("/settings/two-factor/disable", (c) =>
      pages.act(
        c,
        async ({ viewer, request, params }) => {
          await throttle(request, viewer);
          await twoFactor.disable(viewer.account.id, proof(params));
          return { notice: "Two-factor authentication successfully disabled.", to: "/settings/two-factor" };
        },
        page,
      ),
    );
}
