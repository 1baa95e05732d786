import { timingSafeEqual } from "node:crypto";

/** A random secret for tokens, codes and sessions: 32 bytes, base64url. */
export function randomSecret(bytes = 32): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return Buffer.from(buf).toString("base64url");
}

/** Tokens are stored only as this digest; a leaked database does not leak live tokens. */
export function digest(secret: string): string {
  return new Bun.CryptoHasher("sha256").update(secret).digest("hex");
}

export function sha256Base64Url(value: string): string {
  return new Bun.CryptoHasher("sha256").update(value).digest("base64url");
}

/** Constant-time string comparison (length differences still return false early). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) return false;
  return timingSafeEqual(ab, bb);
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash);
}
