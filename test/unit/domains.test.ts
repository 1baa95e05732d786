import { describe, expect, test } from "bun:test";
import { domainAndParents, hostOf, normalizeDomain } from "../../src/net/domains.ts";
import { keyHost, signatureKeyId } from "../../src/http/federation-gate.ts";

describe("normalizeDomain (Mastodon's DomainNormalizable and DomainValidator)", () => {
  test("trimmed, lower case, IDNA, one trailing slash dropped", () => {
    expect(normalizeDomain("  Example.COM ")).toEqual({ domain: "example.com" });
    expect(normalizeDomain("example.com/")).toEqual({ domain: "example.com" });
    expect(normalizeDomain("Bücher.de")).toEqual({ domain: "xn--bcher-kva.de" });
    expect(normalizeDomain("127.0.0.3")).toEqual({ domain: "127.0.0.3" });
    expect(normalizeDomain("a-b.social")).toEqual({ domain: "a-b.social" });
  });

  test("blank and invalid", () => {
    for (const blank of [undefined, null, "", "   ", "/"]) expect(normalizeDomain(blank)).toEqual({ error: "blank" });
    for (const bad of ["exa mple.com", "https://example.com", "example.com/path", "user@example.com", "example.com:443", "exa_mple.com", "example..com", "example.com.", `${"a".repeat(64)}.com`, `${"a.".repeat(128)}com`, "[::1]", "?"]) {
      expect(normalizeDomain(bad)).toEqual({ error: "invalid" });
    }
  });
});

describe("hosts and rules", () => {
  test("hostOf reads URLs and stored account domains, port dropped", () => {
    expect(hostOf("https://Social.Example.com:8443/users/a")).toBe("social.example.com");
    expect(hostOf(new URL("http://127.0.0.3:4000/inbox"))).toBe("127.0.0.3");
    expect(hostOf("127.0.0.3:4000")).toBe("127.0.0.3");
    expect(hostOf("example.com")).toBe("example.com");
    expect(hostOf("[::1]:80")).toBe("[::1]");
    expect(hostOf("http://[")).toBeNull();
  });

  test("a domain and its parents, longest first (Mastodon's DomainBlock.rule_for)", () => {
    expect(domainAndParents("a.social.example.com")).toEqual(["a.social.example.com", "social.example.com", "example.com", "com"]);
  });

  test("the key id of a signed request, draft-cavage or RFC 9421, and its host", () => {
    const cavage = new Request("http://x/inbox", { headers: { signature: 'keyId="https://blocked.example/users/a#main-key",algorithm="rsa-sha256",headers="(request-target) host date",signature="abc="' } });
    expect(signatureKeyId(cavage)).toBe("https://blocked.example/users/a#main-key");
    const rfc = new Request("http://x/inbox", { headers: { "signature-input": 'sig1=("@method" "@target-uri");keyid="https://b.example/k";alg="rsa-v1_5-sha256";created=1' } });
    expect(signatureKeyId(rfc)).toBe("https://b.example/k");
    expect(signatureKeyId(new Request("http://x/inbox"))).toBeNull();
    expect(keyHost("acct:mal@Blocked.example")).toBe("Blocked.example");
    expect(keyHost("not a url")).toBeNull();
  });
});
