import { SignJWT, jwtVerify, type JWTPayload } from "jose";
import type { Clock } from "../clock.ts";

/**
 * Short-lived signed tickets for the HTML sign-in and consent forms (HS256 via jose). A
 * consent ticket is proof that whoever submits the form signed in moments ago, so the
 * approval needs no cookie and cannot be forged cross-site.
 */
export class TicketSigner {
  /** jti -> expiry (seconds) of tickets already used; kept only until they expire. */
  private used = new Map<string, number>();

  constructor(
    private key: Uint8Array,
    private clock: Clock,
  ) {}

  /** Marks a single-use ticket used; false if it was already. */
  claim(jti: string | undefined, exp: number | undefined): boolean {
    if (!jti || exp === undefined) return false;
    const now = Math.floor(this.clock.now() / 1000);
    for (const [id, expiry] of this.used) if (expiry < now) this.used.delete(id);
    if (this.used.has(jti)) return false;
    this.used.set(jti, exp);
    return true;
  }

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
