import { describe, expect, test } from "bun:test";
import { qrMatrix, qrSvg } from "../../src/web/qr.ts";

// Matrices made by another encoder (python-qrcode 7.4, level M, byte mode, the mask forced),
// one hexadecimal row per line: ours must match them module for module.
const OTPAUTH = "otpauth://totp/rookery.test:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=rookery.test";
const OTPAUTH_MASK_2 = [
  "1fcafbcfa7f",
  "104b499e941",
  "17530eda45d",
  "1759d0a5a5d",
  "175ee540b5d",
  "1058d102941",
  "1fd5555557f",
  "0015b5e3200",
  "17c7e95bc7c",
  "10892f296bd",
  "0a4314860cc",
  "039187e7248",
  "18771336a0d",
  "17a960c26f4",
  "15ea11b2d34",
  "112a40a3009",
  "124f8926326",
  "041c7703571",
  "08fb25531b2",
  "0880d21775a",
  "036d04c3908",
  "1509618dff3",
  "1049e0cf9a4",
  "061640f73e8",
  "106b885fb15",
  "16b2c2ed239",
  "09c8850bc12",
  "18bdb4e101b",
  "1afb32e5b0e",
  "1ba75599371",
  "14e7324b01a",
  "132bb3946a9",
  "11cc6b4a1f7",
  "00152b8f315",
  "1fc1898e150",
  "10598cfa319",
  "175343869fa",
  "1750c5c130c",
  "1752681a0fc",
  "104415b071a",
  "1fd0715e814",
];
const LONG = `${"x".repeat(150)} é`;
const LONG_MASK_6 = [
  "1fd1c77c772c7f",
  "10551d76acfe41",
  "175833db1bc25d",
  "1743fdec75755d",
  "17570a5f51ec5d",
  "104348311bcc41",
  "1fd5555555557f",
  "0007671136b200",
  "13f8d65f5f9597",
  "1eb92e82cddfd2",
  "056211c426b164",
  "1c0ba059f06909",
  "16e798725ddcd2",
  "17aab7cb794d9b",
  "0ed30aa9f06a09",
  "152e2b7d2a202d",
  "0f773b3bfd4e9b",
  "1600aca64b96f6",
  "135d430d2e232d",
  "0486957406e264",
  "1752d1164f35f6",
  "0f23bf41dd7fd2",
  "1340f5f506e164",
  "0699c548b36109",
  "11f1737fdcdbf2",
  "0715c6f1f8491b",
  "115777b5b26759",
  "0b1a9f7132231d",
  "19f7e51fd94ffb",
  "02b2358e6f9656",
  "14d132b03222fd",
  "03b3311a86b046",
  "177c37670f96a6",
  "03a27ea49ddd72",
  "1af420f1c6b234",
  "090f2973b46ba9",
  "09e2ad47d5df82",
  "0c86dce1f14f3b",
  "054a3fdcb46959",
  "1d9945d722928d",
  "1055a38ef91dcb",
  "092abfcc4fc456",
  "1bceddb822c07d",
  "0c02631e07b4c4",
  "02677f7f4d9ff6",
  "0014d3b1dfd512",
  "1fda407507b554",
  "10559f31806919",
  "1756823fcdddf2",
  "17533534e94f6a",
  "174b87169069fa",
  "1046dae36221dd",
  "1fd01216794d68",
];

const hexRows = (m: boolean[][]) => m.map((row) => BigInt(`0b${row.map((d) => (d ? "1" : "0")).join("")}`).toString(16).padStart(Math.ceil(row.length / 4), "0"));

describe("QR codes", () => {
  test("an otpauth URI (version 6) matches another encoder's", () => {
    expect(hexRows(qrMatrix(OTPAUTH, 2))).toEqual(OTPAUTH_MASK_2);
  });

  test("version 9 (with its version information) and UTF-8 text match another encoder's", () => {
    expect(hexRows(qrMatrix(LONG, 6))).toEqual(LONG_MASK_6);
  });

  test("the mask chosen by penalty keeps the fixed patterns", () => {
    const chosen = qrMatrix(OTPAUTH);
    expect(chosen.length).toBe(41);
    // The three finder patterns: a dark 7x7 ring around a 3x3 centre.
    for (const [x0, y0] of [[0, 0], [34, 0], [0, 34]] as const) {
      expect(chosen[y0]!.slice(x0, x0 + 7)).toEqual([true, true, true, true, true, true, true]);
      expect(chosen[y0 + 1]!.slice(x0, x0 + 7)).toEqual([true, false, false, false, false, false, true]);
      expect(chosen[y0 + 3]!.slice(x0, x0 + 7)).toEqual([true, false, true, true, true, false, true]);
    }
    // The timing patterns alternate; the dark module is dark.
    for (let i = 8; i < 33; i++) expect(chosen[6]![i]).toBe(i % 2 === 0);
    expect(chosen[41 - 8]![8]).toBe(true);
  });

  test("the SVG draws every dark module once, in a quiet zone, and escapes its label", () => {
    const svg = qrSvg(OTPAUTH, `Scan "this" <now>`).value;
    expect(svg).toStartWith(`<svg xmlns="http://www.w3.org/2000/svg"`);
    expect(svg).toContain(`viewBox="0 0 49 49"`);
    expect(svg).toContain(`aria-label="Scan &quot;this&quot; &lt;now&gt;"`);
    const dark = qrMatrix(OTPAUTH).flat().filter(Boolean).length;
    const drawn = [...svg.matchAll(/h(\d+)v1/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(drawn).toBe(dark);
  });

  test("a text too long for any version is refused", () => {
    expect(() => qrMatrix("x".repeat(2332))).toThrow("too long");
    expect(qrMatrix("x".repeat(2331)).length).toBe(177);
  });
});
