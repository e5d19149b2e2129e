// IPv4 address and network arithmetic for validating the inventory and deriving addresses.
import { quote } from '../errors.ts';

/** An IPv4 network: base address as an unsigned 32-bit number and prefix length. */
export interface Network {
  base: number;
  prefix: number;
  text: string;
}

const OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Parses dotted-quad IPv4 into an unsigned number, or undefined if malformed. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => OCTET.test(p))) return undefined;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

/** Formats an unsigned 32-bit number as dotted-quad IPv4. */
export function formatIPv4(n: number): string {
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

function mask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** Result of parsing a CIDR: the network, or why it is not one (with the network that was probably meant). */
export type CidrResult = { ok: true; net: Network } | { ok: false; reason: string; meant?: string };

/** Parses `a.b.c.d/n`, refusing host bits set (and saying which network was meant). */
export function parseCidr(text: string): CidrResult {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(text);
  if (!m) return { ok: false, reason: `${quote(text)} is not in CIDR form a.b.c.d/n` };
  const addr = parseIPv4(m[1]!);
  const prefix = Number(m[2]);
  if (addr === undefined) return { ok: false, reason: `${quote(m[1])} is not a valid IPv4 address` };
  if (prefix > 32) return { ok: false, reason: `prefix /${prefix} is larger than 32` };
  const base = (addr & mask(prefix)) >>> 0;
  if (base !== addr) {
    const meant = `${formatIPv4(base)}/${prefix}`;
    return { ok: false, reason: `"${text}" has host bits set`, meant };
  }
  return { ok: true, net: { base, prefix, text } };
}

/** The number of addresses in a network. */
export function size(net: Network): number {
  return 2 ** (32 - net.prefix);
}

/** True if the address lies inside the network. */
export function contains(net: Network, addr: number): boolean {
  return ((addr & mask(net.prefix)) >>> 0) === net.base;
}

/** True if `inner` lies entirely inside `outer`. */
export function within(inner: Network, outer: Network): boolean {
  return inner.prefix >= outer.prefix && contains(outer, inner.base);
}

/** True if two networks share any address. */
export function overlaps(a: Network, b: Network): boolean {
  return within(a, b) || within(b, a);
}

/** The n-th address of a network (1 = first usable host). */
export function nthAddress(net: Network, n: number): string {
  return formatIPv4(net.base + n);
}
