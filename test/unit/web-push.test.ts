import { describe, expect, test } from "bun:test";
import { createECDH } from "node:crypto";
import * as ece from "http_ece";
import { decryptAes128gcm } from "../support/push-service.ts";

// RFC 8291 Appendix A: the worked example of Web Push message encryption. http_ece (what the
// server encrypts pushes with) must produce its ciphertext from its keys and salt, and the push
// stand-in's own decryption (WebCrypto) must read it back.
const A = {
  plaintext: "When I grow up, I want to be a watermelon",
  asPrivate: "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw",
  uaPublic: "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
  uaPrivate: "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94",
  auth: "BTBZMqHH6r4Tts7J_aSIgg",
  salt: "DGv6ra1nlYgDCS1FRnbzlw",
  body: "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN",
};

describe("Web Push encryption (RFC 8291 Appendix A)", () => {
  test("http_ece encrypts the example to the RFC's bytes", () => {
    const sender = createECDH("prime256v1");
    sender.setPrivateKey(Buffer.from(A.asPrivate, "base64url"));
    const body = ece.encrypt(Buffer.from(A.plaintext), { version: "aes128gcm", dh: A.uaPublic, privateKey: sender, salt: A.salt, authSecret: A.auth, rs: 4096 });
    expect(body.toString("base64url")).toBe(A.body);
  });

  test("the stand-in's WebCrypto decryption reads the RFC's bytes, and refuses them with another auth secret", async () => {
    const d = Buffer.from(A.uaPrivate, "base64url").toString("base64url");
    const point = Buffer.from(A.uaPublic, "base64url");
    const jwk = { kty: "EC", crv: "P-256", d, x: point.subarray(1, 33).toString("base64url"), y: point.subarray(33, 65).toString("base64url") };
    const privateKey = await crypto.subtle.importKey("jwk", jwk, { name: "ECDH", namedCurve: "P-256" }, false, ["deriveBits"]);
    const body = Buffer.from(A.body, "base64url");
    expect(await decryptAes128gcm(body, { p256dh: A.uaPublic, auth: A.auth, privateKey })).toBe(A.plaintext);
    await expect(decryptAes128gcm(body, { p256dh: A.uaPublic, auth: Buffer.alloc(16).toString("base64url"), privateKey })).rejects.toThrow();
  });
});
