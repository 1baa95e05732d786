import { SignJWT, jwtVerify, type JWTPayload } from "jose";
import type { Clock } from "../clock.ts";
import { digest, safeEqual } from "./secrets.ts";

/**
 * Short-lived signed tickets for the HTML sign-in and consent forms (HS256 via jose). A
 * consent ticket is proof that whoever submits the form signed in moments ago. A ticket
 * can be bound to a browser: it then carries the digest of that browser's form cookie and
 * is worth nothing without the cookie (a token copied out of one browser's page does not
 * work from another, nor from a script that never got the cookie).
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

  /** A signed ticket; with `boundTo`, only valid together with that cookie value (see isBoundTo). */
  async sign(audience: string, payload: JWTPayload, lifetimeSeconds: number, boundTo?: string): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    return new SignJWT(boundTo === undefined ? payload : { ...payload, bnd: digest(boundTo) })
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

  /** Whether a verified ticket was bound to this cookie value; constant-time comparison. */
  isBoundTo(payload: JWTPayload, cookie: string | undefined): boolean {
    return typeof payload.bnd === "string" && cookie !== undefined && safeEqual(payload.bnd, digest(cookie));
  }
}
