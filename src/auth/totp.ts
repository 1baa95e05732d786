import { createHmac, randomBytes } from "node:crypto";
import { safeEqual } from "./secrets.ts";

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP) as authenticator apps make
 * them by default: HMAC-SHA-1, 6 digits, 30-second steps. Twenty lines of node:crypto; a
 * library would add a dependency for less than it takes to read it.
 */

export const TOTP_PERIOD_S = 30;
export const TOTP_DIGITS = 6;
/**
 * Steps accepted either side of the server's: devise-two-factor's otp_allowed_drift (30 s, one
 * step), which Mastodon's otp_required_for_login sign-in uses, so a phone a little off still signs in.
 */
export const TOTP_DRIFT_STEPS = 1;

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32 without padding, as otpauth:// URIs carry secrets. */
export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/** The bytes of a base32 text (case and padding ignored), or null when it is not base32. */
export function base32Decode(text: string): Uint8Array | null {
  const clean = text.replace(/=+$/, "").toUpperCase();
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const ch of clean) {
    const value = BASE32.indexOf(ch);
    if (value < 0) return null;
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((buffer >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

/** A new secret: 160 bits (RFC 4226's recommendation), 32 base32 characters as Mastodon's otp_secret_length. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** RFC 4226 HOTP value of `counter`, `digits` long. */
export function hotp(key: Uint8Array, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac("sha1", key).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const value = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(value % 10 ** digits).padStart(digits, "0");
}

/** The time step a moment falls in. */
export function totpStep(ms: number): number {
  return Math.floor(ms / 1000 / TOTP_PERIOD_S);
}

/**
 * The step whose code `code` is, among the current one and TOTP_DRIFT_STEPS either side, and
 * later than `after` (the last step used: a code is good once); null when none matches.
 */
export function matchTotp(secret: string, code: string, nowMs: number, after: number | null = null): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const key = base32Decode(secret);
  if (!key || key.length === 0) return null;
  const now = totpStep(nowMs);
  // Oldest first: of two matches (a one-in-a-million coincidence), the earlier spends less of the future.
  for (let step = now - TOTP_DRIFT_STEPS; step <= now + TOTP_DRIFT_STEPS; step++) {
    if (after !== null && step <= after) continue;
    if (safeEqual(hotp(key, step), code)) return step;
  }
  return null;
}

/** The otpauth:// URI an authenticator app reads (Google's Key Uri Format), as ROTP's provisioning_uri makes it. */
export function otpauthUri(issuer: string, account: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  return `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(issuer)}`;
}
