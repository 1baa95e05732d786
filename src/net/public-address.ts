import { cidrContains, parseCidr, type Cidr, type Ip } from "./ip.ts";

/**
 * Addresses no request to "another server" may reach: the host's own network, the
 * provider's, and every range that is not a unicast address on the internet (IANA's
 * special-purpose registries for IPv4 and IPv6). IPv4 is matched in its IPv4-mapped form
 * (parseIp), so `::ffff:127.0.0.1` is loopback too.
 */
const NOT_PUBLIC: Cidr[] = [
  "0.0.0.0/8", // "this network", 0.0.0.0 included
  "10.0.0.0/8",
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8",
  "169.254.0.0/16", // link-local, cloud metadata
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.88.99.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, broadcast
  "::/128", // unspecified
  "::1/128",
  "::/96", // IPv4-compatible (deprecated): never a public peer
  "100::/64", // discard
  "2001::/23", // IETF protocol assignments (Teredo, ORCHID...)
  "2001:db8::/32",
  "fc00::/7", // unique local
  "fe80::/10", // link-local
  "fec0::/10", // site-local (deprecated)
  "ff00::/8", // multicast
].map(parseCidr);

/** IPv6 prefixes that carry an IPv4 address, which is what is then reached. */
const NAT64 = ["64:ff9b::/96", "64:ff9b:1::/48"].map(parseCidr);
const SIX_TO_FOUR = parseCidr("2002::/16");

function embeddedV4(bytes: Uint8Array, offset: number): Ip {
  const mapped = new Uint8Array(16);
  mapped[10] = 0xff;
  mapped[11] = 0xff;
  mapped.set(bytes.subarray(offset, offset + 4), 12);
  return { v4: true, bytes: mapped };
}

/** Whether the address is a unicast address on the public internet (also through NAT64 and 6to4). */
export function isPublicAddress(ip: Ip): boolean {
  if (NOT_PUBLIC.some((range) => cidrContains(range, ip))) return false;
  if (!ip.v4 && NAT64.some((range) => cidrContains(range, ip))) return isPublicAddress(embeddedV4(ip.bytes, 12));
  if (!ip.v4 && cidrContains(SIX_TO_FOUR, ip)) return isPublicAddress(embeddedV4(ip.bytes, 2));
  return true;
}
