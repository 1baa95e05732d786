import { SignJWT, jwtVerify, type JWTPayload } from "jose";
import type { Clock } from "../clock.ts";

/**
 * Short-lived signed tickets for the HTML sign-in and consent forms (HS256 via jose). A
 * consent ticket is proof that whoever submits the form signed in moments ago, so the
 * approval needs no cookie and cannot be forged cross-site.
 */
export class TicketSigner {
  constructor(
    private key: Uint8Array,
    private clock: Clock,
  ) {}

  async sign(audience: string, payload: JWTPayload, lifetimeSeconds: number): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    return new SignJWT(payload)
      .setProtectedHeader({ alg: "HS256" })
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + lifetimeSeconds)
      .setJti(crypto.randomUUID())
      .sign(this.key);
  }

  /** The payload, or null when the ticket is forged, expired or meant for something else. */
  async verify<T extends JWTPayload>(audience: string, ticket: string | undefined): Promise<T | null> {
    if (!ticket || ticket.length > 8192) return null;
    try {
      const { payload } = await jwtVerify(ticket, this.key, {
        audience,
        algorithms: ["HS256"],
        currentDate: new Date(this.clock.now()),
      });
      return payload as T;
    } catch {
      return null;
    }
  }
}
