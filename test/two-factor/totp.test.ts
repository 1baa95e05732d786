import { describe, expect, test } from "bun:test";
import { base32Decode, base32Encode, hotp, matchTotp, newTotpSecret, otpauthUri, totpStep } from "../../src/auth/totp.ts";

const RFC_KEY = new TextEncoder().encode("12345678901234567890");

describe("TOTP", () => {
  test("RFC 6238's SHA-1 test vectors (8 digits)", () => {
    for (const [seconds, code] of [
      [59, "94287082"],
      [1111111109, "07081804"],
      [1111111111, "14050471"],
      [1234567890, "89005924"],
      [2000000000, "69279037"],
      [20000000000, "65353130"],
    ] as const) {
      expect(hotp(RFC_KEY, totpStep(seconds * 1000), 8)).toBe(code);
    }
  });

  test("RFC 4226's HOTP values (6 digits)", () => {
    const expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];
    expect(expected.map((_, counter) => hotp(RFC_KEY, counter))).toEqual(expected);
  });

  test("base32 round-trips and refuses what is not base32", () => {
    expect(base32Encode(RFC_KEY)).toBe("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
    expect(base32Decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")).toEqual(RFC_KEY);
    expect(base32Decode("gezdgnbvgy3tqojq")).toEqual(RFC_KEY.slice(0, 10));
    expect(base32Decode("GEZ1")).toBeNull();
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(secret)!.length).toBe(20);
  });

  test("a code is good one step either side of now, not two, and only after the last step used", () => {
    const secret = base32Encode(RFC_KEY);
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    const codeAt = (s: number) => hotp(RFC_KEY, s);
    expect(matchTotp(secret, codeAt(step), now)).toBe(step);
    expect(matchTotp(secret, codeAt(step - 1), now)).toBe(step - 1);
    expect(matchTotp(secret, codeAt(step + 1), now)).toBe(step + 1);
    expect(matchTotp(secret, codeAt(step - 2), now)).toBeNull();
    expect(matchTotp(secret, codeAt(step + 2), now)).toBeNull();
    // Replay: the step used, and those before it, are spent.
    expect(matchTotp(secret, codeAt(step), now, step)).toBeNull();
    expect(matchTotp(secret, codeAt(step - 1), now, step)).toBeNull();
    expect(matchTotp(secret, codeAt(step + 1), now, step)).toBe(step + 1);
    for (const bad of ["", "12345", "1234567", "12345a", " 123456"]) expect(matchTotp(secret, bad, now)).toBeNull();
  });

  test("the otpauth URI names the issuer, escaped (a port's colon too), and the account", () => {
    expect(otpauthUri("example.com:8443", "alice", "ABC")).toBe("otpauth://totp/example.com%3A8443:alice?secret=ABC&issuer=example.com%3A8443");
  });
});
