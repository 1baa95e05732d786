import { createECDH, randomBytes } from "node:crypto";
import * as ece from "http_ece";
import { importJWK, SignJWT } from "jose";
import type { Clock } from "../../clock.ts";

/** How long a push service keeps a message for an offline device: Mastodon's 48 hours. */
const TTL_SECONDS = 48 * 60 * 60;
/** A VAPID JWT lives 12 hours (RFC 8292 allows 24) and is reused for an audience until 1 hour before that. */
const JWT_LIFETIME_MS = 12 * 60 * 60 * 1000;
const JWT_REUSE_MARGIN_MS = 60 * 60 * 1000;

export interface PushTarget {
  endpoint: string;
  /** The device's P-256 public key and auth secret, base64url, as the subscription gave them. */
  p256dh: string;
  auth: string;
  /** RFC 8291/8292 (aes128gcm, `vapid` scheme) rather than the drafts older clients asked for. */
  standard: boolean;
}

export interface PushRequest {
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * Signs VAPID (RFC 8292) JWTs with the server's key pair (made once, kept in instance_settings),
 * one per push service origin, reused while it has more than an hour left.
 */
export class VapidSigner {
  private key: Promise<CryptoKey | Uint8Array>;
  private tokens = new Map<string, { jwt: string; expiresAt: number }>();

  constructor(
    privateJwk: string,
    /** Uncompressed P-256 point, base64url: the `server_key` clients were given. */
    readonly publicKey: string,
    /** `mailto:` of the contact address, or the server's URL: who the push service can reach. */
    private subject: string,
    private clock: Clock,
  ) {
    this.key = importJWK(JSON.parse(privateJwk), "ES256");
  }

  async jwt(audience: string): Promise<string> {
    const now = this.clock.now();
    const cached = this.tokens.get(audience);
    if (cached && cached.expiresAt - JWT_REUSE_MARGIN_MS > now) return cached.jwt;
    const expiresAt = now + JWT_LIFETIME_MS;
    const jwt = await new SignJWT({ sub: this.subject })
      .setProtectedHeader({ typ: "JWT", alg: "ES256" })
      .setAudience(audience)
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(await this.key);
    this.tokens.set(audience, { jwt, expiresAt });
    return jwt;
  }
}

/**
 * One push message as RFC 8030 wants it sent: the payload encrypted for the device with
 * http_ece (RFC 8188/8291; checked against RFC 8291's Appendix A in test/unit), with a fresh
 * sender key pair and salt per message, and the VAPID credentials. `standard` subscriptions get
 * aes128gcm and `Authorization: vapid t=, k=`; the others (Mastodon's default before 4.4, still
 * what most apps ask for) the aesgcm draft with `Encryption`/`Crypto-Key` and `WebPush <jwt>`,
 * as Mastodon's Web::PushNotificationWorker sends each.
 */
export async function buildPushRequest(target: PushTarget, payload: string, vapid: VapidSigner): Promise<PushRequest> {
  const sender = createECDH("prime256v1");
  const senderPublic = sender.generateKeys().toString("base64url");
  const salt = randomBytes(16).toString("base64url");
  const jwt = await vapid.jwt(new URL(target.endpoint).origin);
  const common = { "content-type": "application/octet-stream", ttl: String(TTL_SECONDS), urgency: "normal" };
  if (target.standard) {
    const body = ece.encrypt(Buffer.from(payload), { version: "aes128gcm", dh: target.p256dh, privateKey: sender, salt, authSecret: target.auth });
    return { body, headers: { ...common, "content-encoding": "aes128gcm", authorization: `vapid t=${jwt}, k=${vapid.publicKey}` } };
  }
  const body = ece.encrypt(Buffer.from(payload), { version: "aesgcm", dh: target.p256dh, privateKey: sender, salt, authSecret: target.auth });
  return {
    body,
    headers: {
      ...common,
      "content-encoding": "aesgcm",
      encryption: `salt=${salt}`,
      "crypto-key": `dh=${senderPublic};p256ecdsa=${vapid.publicKey}`,
      authorization: `WebPush ${jwt}`,
    },
  };
}
