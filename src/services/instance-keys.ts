import { eq } from "drizzle-orm";
import type { DatabasePort } from "../db/port.ts";
import { randomSecret } from "../auth/secrets.ts";

export interface InstanceKeys {
  /** HMAC key for the sign-in and consent pages' signed tickets. */
  secret: Uint8Array;
  /** Web Push application server key (P-256, uncompressed point, base64url). */
  vapidPublicKey: string;
  /** Its private half, a JWK (JSON text): signs the VAPID JWTs of pushes. */
  vapidPrivateJwk: string;
}

/** Keys made on first start and kept in the database, so restarts keep sessions valid. */
export async function loadInstanceKeys(db: DatabasePort): Promise<InstanceKeys> {
  const { instanceSettings } = db.tables;
  const get = async (key: string) => (await db.orm.select({ value: instanceSettings.value }).from(instanceSettings).where(eq(instanceSettings.key, key)).limit(1))[0]?.value;
  const put = async (key: string, value: string) => void (await db.orm.insert(instanceSettings).values({ key, value }).onConflictDoNothing());

  if (!(await get("secret_key"))) await put("secret_key", randomSecret(48));
  if (!(await get("vapid_public_key"))) {
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const publicRaw = Buffer.from(await crypto.subtle.exportKey("raw", pair.publicKey)).toString("base64url");
    const privateJwk = JSON.stringify(await crypto.subtle.exportKey("jwk", pair.privateKey));
    await put("vapid_private_key", privateJwk);
    await put("vapid_public_key", publicRaw);
  }
  return {
    secret: Buffer.from((await get("secret_key")) as string, "base64url"),
    vapidPublicKey: (await get("vapid_public_key")) as string,
    vapidPrivateJwk: (await get("vapid_private_key")) as string,
  };
}

/** What the server says of itself (the instance entity, the about page). */
export const INSTANCE_DESCRIPTION = "A Rookery server: Mastodon-compatible microblogging in one file.";
