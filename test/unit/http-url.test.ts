import { describe, expect, test } from "bun:test";
import { httpUrlOrNull, REMOTE_URL_MAX } from "../../src/net/http-url.ts";

describe("httpUrlOrNull (every URL taken from another server)", () => {
  test("absolute http and https URLs are kept, normalized", () => {
    expect(httpUrlOrNull("https://files.example/a b.png")).toBe("https://files.example/a%20b.png");
    expect(httpUrlOrNull("HTTP://Files.Example:8080/x?y=1#z")).toBe("http://files.example:8080/x?y=1#z");
    expect(httpUrlOrNull(new URL("https://xn--bcher-kva.example/"))).toBe("https://xn--bcher-kva.example/");
    expect(httpUrlOrNull("https://bücher.example/")).toBe("https://xn--bcher-kva.example/");
  });

  test("other schemes, relative addresses, credentials and overlong ones are null", () => {
    for (const bad of [
      "javascript:alert(1)",
      "JavaScript:alert(1)",
      " javascript:alert(1)",
      "data:image/png;base64,AAAA",
      "file:///etc/passwd",
      "vbscript:msgbox(1)",
      "ftp://files.example/x",
      "blob:https://files.example/uuid",
      "gemini://g.example/",
      "/relative/path",
      "//files.example/x",
      "files.example/x",
      "",
      "https://",
      "https://trusted.example@evil.example/",
      "https://user:pass@files.example/",
      `https://files.example/${"a".repeat(REMOTE_URL_MAX)}`,
    ]) {
      expect([bad.slice(0, 40), httpUrlOrNull(bad)]).toEqual([bad.slice(0, 40), null]);
    }
    expect(httpUrlOrNull(new URL("javascript:alert(1)"))).toBeNull();
    expect(httpUrlOrNull(null)).toBeNull();
    expect(httpUrlOrNull(undefined)).toBeNull();
    // At the limit exactly: kept.
    const longest = `https://files.example/${"a".repeat(REMOTE_URL_MAX - "https://files.example/".length)}`;
    expect(httpUrlOrNull(longest)).toBe(longest);
  });
});
