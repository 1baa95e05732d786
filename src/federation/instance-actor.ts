import { exportJwk, generateCryptoKeyPair, importJwk, type Context } from "@fedify/fedify";
import { Application, Endpoints } from "@fedify/fedify/vocab";
import { eq } from "drizzle-orm";
import type { DatabasePort } from "../db/port.ts";

const SETTING = "federation_instance_actor_keys";

/** Read once per process (the pairs are kept in memory after), so not prepared. */
async function storedValue(db: DatabasePort): Promise<string | undefined> {
  const { instanceSettings } = db.tables;
  return (await db.orm.select({ value: instanceSettings.value }).from(instanceSettings).where(eq(instanceSettings.key, SETTING)).limit(1))[0]?.value;
}

/** The instance actor's public keys as this database holds them (none until first needed): `rookery federation check` compares them with what PUBLIC_URL serves. */
export async function storedInstanceActorKeys(db: DatabasePort): Promise<JsonWebKey[]> {
  const value = await storedValue(db);
  return value ? (JSON.parse(value) as { publicKey: JsonWebKey }[]).map((p) => p.publicKey) : [];
}

/**
 * The server's own actor, which signs what Rookery fetches from other servers. GoToSocial
 * answers every unsigned GET of an actor or a status with 401, and so does Mastodon with
 * AUTHORIZED_FETCH: lookups, and the actors of activities arriving at the shared inbox, are
 * fetched with this actor's key (Mastodon's instance actor; Fedify's manual names it after the
 * host). It lives at /users/<hostname>, a name no account can take (usernames have no dots), is
 * found by WebFinger as <hostname>@<domain>, and its RSA and Ed25519 key pairs are made on first
 * need and kept in instance_settings.
 */
export class InstanceActor {
  private pending: Promise<CryptoKeyPair[]> | null = null;

  constructor(
    private db: DatabasePort,
    /** The identifier in its URI: PUBLIC_URL's hostname. */
    readonly identifier: string,
  ) {}

  keyPairs(): Promise<CryptoKeyPair[]> {
    this.pending ??= this.load().catch((error) => {
      this.pending = null;
      throw error;
    });
    return this.pending;
  }

  async actor(ctx: Context<void>): Promise<Application> {
    const keys = await ctx.getActorKeyPairs(this.identifier);
    return new Application({
      id: ctx.getActorUri(this.identifier),
      preferredUsername: this.identifier,
      name: this.identifier,
      url: new URL(ctx.canonicalOrigin),
      manuallyApprovesFollowers: true,
      inbox: ctx.getInboxUri(this.identifier),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      publicKey: keys[0]?.cryptographicKey ?? null,
      assertionMethods: keys.map((k) => k.multikey),
    });
  }

  private async load(): Promise<CryptoKeyPair[]> {
    if (!(await storedValue(this.db))) {
      // RSA 2048 as Mastodon makes them (draft-cavage signatures), and Ed25519.
      const rsa = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
      const ed = await generateCryptoKeyPair("Ed25519");
      const stored = await Promise.all([rsa, ed].map(async (pair) => ({ publicKey: await exportJwk(pair.publicKey), privateKey: await exportJwk(pair.privateKey) })));
      // Another process (the CLI) may have made them meanwhile: the first write stays.
      await this.db.orm.insert(this.db.tables.instanceSettings).values({ key: SETTING, value: JSON.stringify(stored) }).onConflictDoNothing();
    }
    const pairs = JSON.parse((await storedValue(this.db))!) as { publicKey: JsonWebKey; privateKey: JsonWebKey }[];
    return Promise.all(pairs.map(async (p) => ({ publicKey: await importJwk(p.publicKey, "public"), privateKey: await importJwk(p.privateKey, "private") })));
  }
}
