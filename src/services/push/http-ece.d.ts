// http_ece (web-push-libs, by RFC 8188's author) ships no types: the part Rookery calls.
declare module "http_ece" {
  import type { ECDH } from "node:crypto";
  interface EceParams {
    version: "aes128gcm" | "aesgcm";
    /** The receiver's public key (base64url or bytes), for the ECDH of RFC 8291. */
    dh?: string | Uint8Array;
    privateKey?: ECDH;
    authSecret?: string | Uint8Array;
    salt?: string | Uint8Array;
    keyid?: string;
    rs?: number;
  }
  export function encrypt(buffer: Uint8Array, params: EceParams): Buffer;
  export function decrypt(buffer: Uint8Array, params: EceParams): Buffer;
}
