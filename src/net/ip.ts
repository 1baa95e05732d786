import { isIPv4, isIPv6 } from "node:net";

/** An address as 16 bytes; IPv4 is stored IPv4-mapped (::ffff:a.b.c.d) so one matcher serves both. */
export interface Ip {
  v4: boolean;
  bytes: Uint8Array;
}

export interface Cidr {
  bytes: Uint8Array;
  /** Prefix length in bits over the 16-byte form. */
  bits: number;
  text: string;
}

function parseV4(text: string, out: Uint8Array, offset: number) {
  const parts = text.split(".");
  for (let i = 0; i < 4; i++) out[offset + i] = Number(parts[i]);
}

export function parseIp(input: string): Ip | null {
  let text = input.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const bytes = new Uint8Array(16);
  if (isIPv4(text)) {
    bytes[10] = 0xff;
    bytes[11] = 0xff;
    parseV4(text, bytes, 12);
    return { v4: true, bytes };
  }
  if (!isIPv6(text)) return null;
  let tail = text;
  let v4Tail: string | null = null;
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    v4Tail = text.slice(lastColon + 1);
    tail = text.slice(0, lastColon + 1) + "0:0";
  }
  const [head, rest] = tail.includes("::") ? tail.split("::") : [tail, null];
  const headGroups = head ? head.split(":").filter((g) => g !== "") : [];
  const restGroups = rest ? rest.split(":").filter((g) => g !== "") : [];
  const groups =
    rest === null ? headGroups : [...headGroups, ...Array(8 - headGroups.length - restGroups.length).fill("0"), ...restGroups];
  if (groups.length !== 8) return null;
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  });
  if (v4Tail) parseV4(v4Tail, bytes, 12);
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return { v4: mapped, bytes };
}

export function parseCidr(text: string): Cidr {
  const [addr, prefix] = text.trim().split("/");
  const ip = parseIp(addr ?? "");
  if (!ip) throw new Error(`has an invalid address "${text}"`);
  const max = ip.v4 ? 32 : 128;
  let bits = max;
  if (prefix !== undefined) {
    if (!/^\d+$/.test(prefix) || Number(prefix) > max) throw new Error(`has an invalid prefix length "${text}"`);
    bits = Number(prefix);
  }
  return { bytes: ip.bytes, bits: ip.v4 ? bits + 96 : bits, text: text.trim() };
}

/** Comma- or space-separated addresses and CIDR ranges. */
export function parseCidrList(text: string): Cidr[] {
  return text
    .split(/[\s,]+/)
    .filter((s) => s !== "")
    .map(parseCidr);
}

export function cidrContains(cidr: Cidr, ip: Ip): boolean {
  let bits = cidr.bits;
  for (let i = 0; i < 16 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((cidr.bytes[i] as number) & mask) !== ((ip.bytes[i] as number) & mask)) return false;
  }
  return true;
}

export function formatIp(ip: Ip): string {
  if (ip.v4) return Array.from(ip.bytes.slice(12)).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((ip.bytes[i] as number) << 8) | (ip.bytes[i + 1] as number)).toString(16));
  return groups.join(":");
}

/**
 * The key a client is counted under: the whole IPv4 address, or the /64 an IPv6 client
 * sits in (one subscriber usually owns a whole /64, so counting single addresses is useless).
 */
export function rateLimitKey(ip: Ip): string {
  if (ip.v4) return formatIp(ip);
  const prefix = new Uint8Array(16);
  prefix.set(ip.bytes.slice(0, 8));
  return `${formatIp({ v4: false, bytes: prefix })}/64`;
}

/**
 * The client's address: the socket peer, unless the peer is a trusted proxy, in which case
 * X-Forwarded-For is read from the right, skipping further trusted proxies.
 */
export function clientIp(peer: string | null | undefined, forwardedFor: string | null, trusted: Cidr[]): Ip | null {
  const peerIp = peer ? parseIp(peer) : null;
  if (!peerIp) return null;
  const isTrusted = (ip: Ip) => trusted.some((c) => cidrContains(c, ip));
  if (trusted.length === 0 || !forwardedFor || !isTrusted(peerIp)) return peerIp;
  const hops = forwardedFor.split(",").map((s) => s.trim()).filter(Boolean);
  let result = peerIp;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseIp(hops[i] as string);
    if (!hop) break;
    result = hop;
    if (!isTrusted(hop)) break;
  }
  return result;
}
