import { describe, expect, test } from "bun:test";
import { accountDomain, domainAndParents, hostOf, normalizeDomain, normalizeHost } from "../../src/net/domains.ts";
import { keyHost, refusedSigner, signatureKeyIds } from "../../src/http/federation-gate.ts";

describe("normalizeDomain (Mastodon's DomainNormalizable and DomainValidator)", () => {
  test("trimmed, lower case, IDNA, one trailing slash and one trailing dot dropped (Addressable's normalized_host)", () => {
    expect(normalizeDomain("  Example.COM ")).toEqual({ domain: "example.com" });
    expect(normalizeDomain("Example.COM.")).toEqual({ domain: "example.com" });
    expect(normalizeDomain("BÜCHER.de.")).toEqual({ domain: "xn--bcher-kva.de" });
    expect(normalizeDomain("example.com/")).toEqual({ domain: "example.com" });
    expect(normalizeDomain("Bücher.de")).toEqual({ domain: "xn--bcher-kva.de" });
    expect(normalizeDomain("127.0.0.3")).toEqual({ domain: "127.0.0.3" });
    expect(normalizeDomain("a-b.social")).toEqual({ domain: "a-b.social" });
  });

  test("blank and invalid", () => {
    for (const blank of [undefined, null, "", "   ", "/"]) expect(normalizeDomain(blank)).toEqual({ error: "blank" });
    for (const bad of ["exa mple.com", "https://example.com", "example.com/path", "user@example.com", "example.com:443", "exa_mple.com", "example..com", "example.com..", ".", `${"a".repeat(64)}.com`, `${"a.".repeat(128)}com`, "[::1]", "?"]) {
      expect(normalizeDomain(bad)).toEqual({ error: "invalid" });
    }
  });
});

describe("hosts and rules", () => {
  test("hostOf reads URLs and stored account domains, port dropped", () => {
    expect(hostOf("https://Social.Example.com:8443/users/a")).toBe("social.example.com");
    // Every spelling of a host is the host: upper case, trailing dots, a port, an IDN in Unicode.
    for (const spelling of ["https://BLOCKED.example./x", "https://blocked.example..:8443/x", new URL("http://Blocked.Example.:80/"), "BLOCKED.example.", "blocked.example.:8443", " Blocked.Example "]) {
      expect([String(spelling), hostOf(spelling)]).toEqual([String(spelling), "blocked.example"]);
    }
    for (const spelling of ["https://Bücher.Example./x", "BÜCHER.example.:443", "xn--bcher-kva.example"]) expect(hostOf(spelling)).toBe("xn--bcher-kva.example");
    expect(hostOf(new URL("http://127.0.0.3:4000/inbox"))).toBe("127.0.0.3");
    expect(hostOf("127.0.0.3:4000")).toBe("127.0.0.3");
    expect(hostOf("example.com")).toBe("example.com");
    expect(hostOf("[::1]:80")).toBe("[::1]");
    expect(hostOf("http://[")).toBeNull();
    expect(hostOf("exa mple.com")).toBeNull();
    expect(hostOf("")).toBeNull();
  });

  test("hosts and account domains are normalized as rules are; an account domain keeps its port", () => {
    expect(normalizeHost("Blocked.Example..")).toBe("blocked.example");
    expect(normalizeHost("[::1]")).toBe("[::1]");
    expect(normalizeHost("[")).toBeNull();
    expect(accountDomain("BLOCKED.example.:8443")).toBe("blocked.example:8443");
    expect(accountDomain("Bücher.example")).toBe("xn--bcher-kva.example");
    expect(accountDomain("[::1]:80")).toBe("[::1]:80");
    for (const bad of ["", "a:b:c", "example.com:port", "exa mple.com"]) expect([bad, accountDomain(bad)]).toEqual([bad, null]);
  });

  test("a domain and its parents, longest first (Mastodon's DomainBlock.rule_for)", () => {
    expect(domainAndParents("a.social.example.com")).toEqual(["a.social.example.com", "social.example.com", "example.com", "com"]);
  });

  test("every key id a signed request names, draft-cavage or RFC 9421, and its host", async () => {
    const cavage = new Request("http://x/inbox", { headers: { signature: 'keyId="https://blocked.example/users/a#main-key",algorithm="rsa-sha256",headers="(request-target) host date",signature="abc="' } });
    expect(signatureKeyIds(cavage)).toEqual(["https://blocked.example/users/a#main-key"]);
    const rfc = new Request("http://x/inbox", { headers: { "signature-input": 'sig1=("@method" "@target-uri");keyid="https://b.example/k";alg="rsa-v1_5-sha256";created=1' } });
    expect(signatureKeyIds(rfc)).toEqual(["https://b.example/k"]);
    expect(signatureKeyIds(new Request("http://x/inbox"))).toEqual([]);
    // A decoy beside an RFC 9421 signature, and a key id quoted with escapes, are all read.
    const decoy = new Request("http://x/inbox", {
      headers: { "signature-input": 'sig1=("@method");keyid="https://blocked.example/k";created=1, sig2=("@method");keyid="https://a.example/\\"x";created=1', signature: 'sig1=:YWJj:, keyid="https://allowed.example/x"' },
    });
    expect(signatureKeyIds(decoy)).toEqual(["https://allowed.example/x", "https://blocked.example/k", 'https://a.example/"x']);
    const refused = refusedSigner(decoy, (host) => host === "blocked.example");
    expect([refused?.status, await refused?.json()]).toEqual([403, { error: "Public key not found for key https://blocked.example/k" }]);
    expect(refusedSigner(decoy, () => false)).toBeNull();
    expect(keyHost("acct:mal@Blocked.example")).toBe("Blocked.example");
    expect(keyHost("not a url")).toBeNull();
  });
});
