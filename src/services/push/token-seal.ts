import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SetupError } from "../../errors.ts";

const KEY_FILE = "push-token.key";

/**
 * Seals the access tokens that Mastodon's push payload must carry (AES-256-GCM from node:crypto),
 * under a key in its own file in the data directory: the database holds tokens only as hashes
 * and sealed copies, so a copy of the database alone (a backup) gives no token away. Two-factor
 * secrets are sealed the same way under a key file of their own (two-factor.key): losing one
 * key costs only what it sealed.
 */
export class TokenSeal {
  private key: Buffer;

  constructor(dataDir: string, file = KEY_FILE) {
    const path = join(dataDir, file);
    if (!existsSync(path)) {
      writeFileSync(path, randomBytes(32).toString("base64url"), { mode: 0o600, flag: "wx" });
    }
    chmodSync(path, 0o600);
    this.key = Buffer.from(readFileSync(path, "utf8").trim(), "base64url");
    if (this.key.length !== 32) {
      throw new SetupError(`${path} does not hold a 32-byte key: put back the one from the backup, or remove it to make a new one (apps must then subscribe to Web Push again)`);
    }
  }

  seal(token: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const sealed = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
    return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
  }

  /** The token, or null when the key file was replaced since it was sealed. */
  open(sealed: string): string | null {
    try {
      const bytes = Buffer.from(sealed, "base64url");
      const decipher = createDecipheriv("aes-256-gcm", this.key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString("utf8");
    } catch {
      return null;
    }
  }
}
