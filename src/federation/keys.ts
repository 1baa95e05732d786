import { exportJwk, generateCryptoKeyPair, importJwk } from "@fedify/fedify";
import { eq, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";

export type KeyAlgorithm = "RSASSA-PKCS1-v1_5" | "Ed25519";
const ALGORITHMS: readonly KeyAlgorithm[] = ["RSASSA-PKCS1-v1_5", "Ed25519"];

export interface AccountKeyPair {
  algorithm: KeyAlgorithm;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/**
 * The key pairs of local accounts, which sign what they send: made on first need and stored;
 * private keys stay in the database and are handed only to Fedify's signer.
 */
export class AccountKeys {
  /**
   * The imported pairs of each account, read (or made) once per account and process: every
   * activity an account sends asks for them (a read and four imports each time), and a stored
   * pair never changes (nothing rotates or replaces keys; the row goes only with its account).
   * Kept from the first ask on, so that concurrent first asks share one read and one generation.
   */
  private kept = new Map<number, Promise<AccountKeyPair[]>>();

  /** An account's stored pairs: read once per account and process, prepared all the same. */
  private readonly stored;

  constructor(
    private db: DatabasePort,
    private clock: Clock,
  ) {
    const { accountKeys } = db.tables;
    this.stored = db.orm.select().from(accountKeys).where(eq(accountKeys.accountId, sql.placeholder("accountId"))).prepare();
  }

  keyPairs(accountId: number): Promise<AccountKeyPair[]> {
    let kept = this.kept.get(accountId);
    if (!kept) {
      kept = this.load(accountId);
      this.kept.set(accountId, kept);
      // A failure (an account that does not exist, a database error) is not kept.
      kept.catch(() => this.kept.delete(accountId));
    }
    return kept;
  }

  private async load(accountId: number): Promise<AccountKeyPair[]> {
    const stored = await this.stored.execute({ accountId });
    if (stored.length === ALGORITHMS.length) return Promise.all(ALGORITHMS.map((a) => this.imported(stored.find((k) => k.algorithm === a)!)));
    return this.generate(accountId, new Set(stored.map((k) => k.algorithm)));
  }

  private async generate(accountId: number, existing: Set<string>): Promise<AccountKeyPair[]> {
    for (const algorithm of ALGORITHMS) {
      if (existing.has(algorithm)) continue;
      // RSA 2048 as Mastodon makes them (Fedify's default, 4096, costs more on every signature).
      const pair =
        algorithm === "Ed25519"
          ? await generateCryptoKeyPair("Ed25519")
          : ((await crypto.subtle.generateKey({ name: algorithm, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair);
      await this.db.orm
        .insert(this.db.tables.accountKeys)
        .values({
          accountId,
          algorithm,
          publicKey: JSON.stringify(await exportJwk(pair.publicKey)),
          privateKey: JSON.stringify(await exportJwk(pair.privateKey)),
          createdAt: this.clock.now(),
        })
        .onConflictDoNothing();
    }
    const stored = await this.stored.execute({ accountId });
    return Promise.all(ALGORITHMS.map((a) => this.imported(stored.find((k) => k.algorithm === a)!)));
  }

  private async imported(row: { algorithm: string; publicKey: string; privateKey: string }): Promise<AccountKeyPair> {
    return {
      algorithm: row.algorithm as KeyAlgorithm,
      publicKey: await importJwk(JSON.parse(row.publicKey), "public"),
      privateKey: await importJwk(JSON.parse(row.privateKey), "private"),
    };
  }
}
