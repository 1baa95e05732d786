import { describe, expect, test } from "bun:test";
import { byteRange } from "../../src/http/files.ts";
import { reducedRate } from "../../src/media-files/probe.ts";
import { avTypeGuess, isAnimatedPng, sniff } from "../../src/media-files/sniff.ts";
import { ANIMATION_PIXEL_BUDGET, checkAnimation, MAX_VIDEO_FRAMES } from "../../src/media-files/video.ts";
import { lengthOf } from "../../src/services/media/av.ts";

const bytes = (...parts: (string | number[])[]) => new Uint8Array(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)).concat(Array(16).fill(0)));

describe("the rules of video uploads", () => {
  test("frame rates read as Ruby's Rational prints them", () => {
    expect(reducedRate("60/2")?.text).toBe("30/1");
    expect(reducedRate("30000/1001")).toEqual({ text: "30000/1001", value: 30000 / 1001 });
    expect(reducedRate("0/0")).toBeNull();
    expect(reducedRate("abc")).toBeNull();
  });

  test("the legacy length rounds to hundredths without a 60th second", () => {
    expect(lengthOf(88.654)).toBe("0:01:28.65");
    expect(lengthOf(59.999)).toBe("0:01:00.00");
    expect(lengthOf(3600.5)).toBe("1:00:00.50");
  });

  test("animations past the frame cap or the pixel budget are refused before any decoding", () => {
    expect(() => checkAnimation({ width: 8, height: 8, pages: MAX_VIDEO_FRAMES + 1 })).toThrow("8x8 animations of 36001 frames are not supported");
    expect(() => checkAnimation({ width: 960, height: 960, pages: Math.ceil(ANIMATION_PIXEL_BUDGET / 921_600) + 1 })).toThrow("are not supported");
    expect(() => checkAnimation({ width: 960, height: 960, pages: 100 })).not.toThrow();
  });

  test("sniffing: by the bytes, never the name", () => {
    expect(sniff(bytes([0, 0, 0, 0x18], "ftypisom"))).toBe("av");
    expect(sniff(bytes([0, 0, 0, 0x18], "ftypqt  "))).toBe("av");
    expect(sniff(bytes([0, 0, 0, 0x18], "ftypavif"))).toBe("image");
    expect(sniff(bytes([0x1a, 0x45, 0xdf, 0xa3]))).toBe("av");
    expect(sniff(bytes("OggS"))).toBe("av");
    expect(sniff(bytes("ID3"))).toBe("av");
    expect(sniff(bytes("GIF89a"))).toBe("image");
    expect(sniff(bytes("RIFF", [0, 0, 0, 0], "WAVE"))).toBe("av");
    expect(sniff(bytes("RIFF", [0, 0, 0, 0], "WEBP"))).toBe("image");
    expect(sniff(bytes("<html>"))).toBeNull();
    expect(avTypeGuess(bytes([0, 0, 0, 0x18], "ftypM4A "))).toBe("audio");
    expect(avTypeGuess(bytes([0, 0, 0, 0x18], "ftypmp42"))).toBe("video");
    expect(isAnimatedPng(bytes("\x89PNG\r\n\x1a\n", [0, 0, 0, 8], "acTL"))).toBe(true);
    expect(isAnimatedPng(bytes("\x89PNG\r\n\x1a\n", [0, 0, 0, 0], "IDAT"))).toBe(false);
  });

  test("byte ranges: one range, suffixes, clamping; past the end or of an empty file unsatisfiable", () => {
    expect(byteRange("bytes=0-99", 1000)).toEqual({ start: 0, end: 99 });
    expect(byteRange("bytes=900-", 1000)).toEqual({ start: 900, end: 999 });
    expect(byteRange("bytes=-100", 1000)).toEqual({ start: 900, end: 999 });
    expect(byteRange("bytes=-5000", 1000)).toEqual({ start: 0, end: 999 });
    expect(byteRange("bytes=500-99999999999", 1000)).toEqual({ start: 500, end: 999 });
    expect(byteRange("bytes=1000-", 1000)).toBe("unsatisfiable");
    expect(byteRange("bytes=0-", 0)).toBe("unsatisfiable");
    expect(byteRange("bytes=5-1", 1000)).toBeNull();
    expect(byteRange("bytes=0-1,5-6", 1000)).toBeNull();
    expect(byteRange("items=0-1", 1000)).toBeNull();
  });
});
