import { createECDH } from "node:crypto";
import * as ece from "http_ece";
import { importJWK, jwtVerify } from "jose";

// A push service stand-in on loopback (RFC 8030's side of a browser vendor), for the Web Push
// tests: it records what the server sends, answers what the test asks, and decrypts with the
// subscription's private key by its own RFC 8291 code (WebCrypto), not the library Rookery
// sends with, so the two implementations have to agree.

export interface ReceivedPush {
  path: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface Device {
  /** What the client gives as subscription[keys]. */
  p256dh: string;
  auth: string;
  privateKey: CryptoKey;
  /** The private scalar, for the legacy (aesgcm) decryption through http_ece. */
  privateRaw: Buffer;
}

const text = new TextEncoder();
const b64 = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString("base64url");

/** A browser's subscription keys: a P-256 key pair and a 16-byte auth secret. */
export async function newDevice(): Promise<Device> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  return {
    p256dh: b64(await crypto.subtle.exportKey("raw", pair.publicKey)),
    auth: b64(crypto.getRandomValues(new Uint8Array(16))),
    privateKey: pair.privateKey,
    privateRaw: Buffer.from(jwk.d!, "base64url"),
  };
}

async function hkdf(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, bytes: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", ikm as Uint8Array<ArrayBuffer>, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: salt as Uint8Array<ArrayBuffer>, info: info as Uint8Array<ArrayBuffer> }, key, bytes * 8));
}

/** RFC 8291 section 3 and RFC 8188: an aes128gcm body (header, then records) back to its plaintext. */
export async function decryptAes128gcm(body: Uint8Array, device: Pick<Device, "p256dh" | "auth" | "privateKey">): Promise<string> {
  const salt = body.subarray(0, 16);
  const rs = new DataView(body.buffer, body.byteOffset + 16, 4).getUint32(0);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const uaPublic = Buffer.from(device.p256dh, "base64url");
  const peer = await crypto.subtle.importKey("raw", asPublic as Uint8Array<ArrayBuffer>, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const ecdhSecret = new Uint8Array(await crypto.subtle.deriveBits({ name: "ECDH", public: peer }, device.privateKey, 256));
  const keyInfo = Buffer.concat([text.encode("WebPush: info\0"), uaPublic, asPublic]);
  const ikm = await hkdf(ecdhSecret, Buffer.from(device.auth, "base64url"), keyInfo, 32);
  const cek = await hkdf(ikm, salt, text.encode("Content-Encoding: aes128gcm\0"), 16);
  const nonce = await hkdf(ikm, salt, text.encode("Content-Encoding: nonce\0"), 12);
  const records = body.subarray(21 + idlen);
  if (records.length > rs) throw new Error("more than one record: not expected for a push");
  const key = await crypto.subtle.importKey("raw", cek as Uint8Array<ArrayBuffer>, "AES-GCM", false, ["decrypt"]);
  const padded = new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonce as Uint8Array<ArrayBuffer> }, key, records as Uint8Array<ArrayBuffer>));
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error("the last record lacks its 0x02 delimiter");
  return new TextDecoder().decode(padded.subarray(0, end));
}

/** The draft (aesgcm) encoding older Mastodon clients ask for, through http_ece. */
export function decryptAesgcm(push: ReceivedPush, device: Device): string {
  const salt = /salt=([^;,\s]+)/.exec(push.headers.encryption ?? "")?.[1];
  const dh = /dh=([^;,\s]+)/.exec(push.headers["crypto-key"] ?? "")?.[1];
  const ecdh = createECDH("prime256v1");
  ecdh.setPrivateKey(device.privateRaw);
  return ece.decrypt(push.body, { version: "aesgcm", privateKey: ecdh, dh, salt, authSecret: device.auth }).toString("utf8");
}

/** Decrypts either encoding after checking its headers, and verifies the VAPID JWT (RFC 8292). */
export async function openPush(push: ReceivedPush, device: Device, endpoint: string): Promise<{ payload: Record<string, unknown>; claims: Record<string, unknown>; serverKey: string }> {
  let jwt: string;
  let serverKey: string;
  let plain: string;
  if (push.headers["content-encoding"] === "aes128gcm") {
    const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(push.headers.authorization ?? "");
    if (!m) throw new Error(`not RFC 8292 credentials: ${push.headers.authorization}`);
    [jwt, serverKey] = [m[1]!, m[2]!];
    plain = await decryptAes128gcm(push.body, device);
  } else if (push.headers["content-encoding"] === "aesgcm") {
    const m = /^WebPush (\S+)$/.exec(push.headers.authorization ?? "");
    const k = /p256ecdsa=([A-Za-z0-9_-]+)/.exec(push.headers["crypto-key"] ?? "");
    if (!m || !k) throw new Error("not draft VAPID credentials");
    [jwt, serverKey] = [m[1]!, k[1]!];
    plain = decryptAesgcm(push, device);
  } else throw new Error(`unknown content-encoding ${push.headers["content-encoding"]}`);
  const point = Buffer.from(serverKey, "base64url");
  const key = await importJWK({ kty: "EC", crv: "P-256", x: b64(point.subarray(1, 33)), y: b64(point.subarray(33, 65)) }, "ES256");
  const { payload: claims, protectedHeader } = await jwtVerify(jwt, key, { audience: new URL(endpoint).origin, algorithms: ["ES256"] });
  if (protectedHeader.typ !== "JWT") throw new Error("VAPID JWT without typ JWT");
  return { payload: JSON.parse(plain), claims: claims as Record<string, unknown>, serverKey };
}

export interface PushServiceStandIn {
  url: string;
  received: ReceivedPush[];
  /** What the endpoint at `path` answers from now on (201 by default). */
  answer(path: string, status: number): void;
  close(): Promise<void>;
}

export function startPushService(): PushServiceStandIn {
  const received: ReceivedPush[] = [];
  const answers = new Map<string, number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (request.method !== "POST") return new Response(null, { status: 405 });
      received.push({ path, headers: request.headers.toJSON(), body: new Uint8Array(await request.arrayBuffer()) });
      return new Response(null, { status: answers.get(path) ?? 201 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    received,
    answer: (path, status) => void answers.set(path, status),
    close: async () => void (await server.stop(true)),
  };
}
