import { base32Decode, hotp, totpStep } from "../../src/auth/totp.ts";
import type { TestServer } from "../support/server.ts";

/** A fixed moment, in the middle of a 30-second step: the tests move the clock by whole steps. */
export const START = Date.UTC(2026, 5, 1, 12, 0, 15);
export const STEP_MS = 30_000;

/** The code an authenticator app shows for `secret` at the server's time (or `offsetSteps` from it). */
export function codeFor(server: TestServer, secret: string, offsetSteps = 0): string {
  return hotp(base32Decode(secret)!, totpStep(server.clock.now()) + offsetSteps);
}

/**
 * Two-factor turned on for an account through its rules (the pages' enrolment has its own
 * tests), the clock then moved to the next step: the code that confirmed it is spent.
 */
export async function enableTwoFactor(server: TestServer, accountId: number, username: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const { twoFactor } = server.ctx.services;
  const { secret } = await twoFactor.begin(accountId, username);
  const recoveryCodes = await twoFactor.confirm(accountId, codeFor(server, secret));
  server.clock.advance(STEP_MS);
  return { secret, recoveryCodes };
}

export const count = async (server: TestServer, table: string, where = "1 = 1") =>
  (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`))!.n;
