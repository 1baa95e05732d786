import { describe, expect, test } from "bun:test";
import { cidrContains, clientIp, formatIp, parseCidr, parseCidrList, parseIp, rateLimitKey } from "../../src/net/ip.ts";

describe("addresses", () => {
  test("parse IPv4, IPv6 and mapped forms", () => {
    expect(formatIp(parseIp("10.1.2.3")!)).toBe("10.1.2.3");
    expect(formatIp(parseIp("::ffff:127.0.0.1")!)).toBe("127.0.0.1");
    expect(formatIp(parseIp("2001:db8::1")!)).toBe("2001:db8:0:0:0:0:0:1");
    expect(parseIp("not an ip")).toBeNull();
    expect(parseIp("[::1]")!.v4).toBe(false);
  });

  test("CIDR ranges", () => {
    expect(cidrContains(parseCidr("10.0.0.0/8"), parseIp("10.9.9.9")!)).toBe(true);
    expect(cidrContains(parseCidr("10.0.0.0/8"), parseIp("11.0.0.1")!)).toBe(false);
    expect(cidrContains(parseCidr("2001:db8::/32"), parseIp("2001:db8:ffff::1")!)).toBe(true);
    expect(cidrContains(parseCidr("127.0.0.1"), parseIp("::ffff:127.0.0.1")!)).toBe(true);
    expect(() => parseCidrList("10.0.0.0/99")).toThrow();
    expect(() => parseCidrList("nonsense")).toThrow();
    expect(parseCidrList("")).toEqual([]);
  });

  test("IPv6 clients are counted per /64", () => {
    expect(rateLimitKey(parseIp("2001:db8:1:2:aaaa::1")!)).toBe(rateLimitKey(parseIp("2001:db8:1:2:bbbb::9")!));
    expect(rateLimitKey(parseIp("2001:db8:1:3::1")!)).not.toBe(rateLimitKey(parseIp("2001:db8:1:2::1")!));
    expect(rateLimitKey(parseIp("192.0.2.1")!)).toBe("192.0.2.1");
  });

  test("X-Forwarded-For is read only from trusted proxies", () => {
    const trusted = parseCidrList("127.0.0.1, 10.0.0.0/8");
    expect(formatIp(clientIp("203.0.113.9", "1.2.3.4", trusted)!)).toBe("203.0.113.9");
    expect(formatIp(clientIp("127.0.0.1", "1.2.3.4", trusted)!)).toBe("1.2.3.4");
    expect(formatIp(clientIp("127.0.0.1", "9.9.9.9, 1.2.3.4, 10.0.0.5", trusted)!)).toBe("1.2.3.4");
    expect(formatIp(clientIp("127.0.0.1", "1.2.3.4", [])!)).toBe("127.0.0.1");
    expect(formatIp(clientIp("127.0.0.1", "garbage", trusted)!)).toBe("127.0.0.1");
  });
});
