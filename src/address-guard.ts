import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';

/**
 * Addresses a webhook must never reach (SSRF): private, loopback, link-local, CGNAT, NAT64,
 * documentation, multicast and reserved ranges, IPv4 and IPv6. IPv4-mapped IPv6 addresses
 * (::ffff:10.0.0.1) are matched against the IPv4 ranges by BlockList itself; IPv4-compatible
 * (::/96) and IPv4-translated (::ffff:0:0:0/96) ones are refused whole.
 */
const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True when `address` (an IP literal) is a loopback address (127/8, ::1, or either mapped). */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** Why a connection to `address` is refused, or null when it is allowed. */
export function blockedReason(address: string, allowLoopback: boolean): string | null {
  const family = isIP(address);
  if (family === 0) return `'${address}' is not an IP address`;
  if (isLoopbackAddress(address)) return allowLoopback ? null : `${address} is a loopback address`;
  return BLOCKED.check(address, family === 6 ? 'ipv6' : 'ipv4') ? `${address} is a private or reserved address` : null;
}

/** A host name that means this machine, allowed only with the loopback opt-in. */
export function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare.endsWith('.localhost') || isLoopbackAddress(bare);
}

type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;
type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for HTTP agents that checks every address a name resolves to, at connect time, so a
 * name that was public when the URL was saved cannot lead to a private address later (DNS
 * rebinding). `refusal` says why an address is not allowed (null: allowed). Refused addresses are
 * dropped; when none is left the connection fails.
 */
export function guardedLookup(
  refusal: (address: string) => string | null,
  resolve: Resolver = dnsLookup as unknown as Resolver,
) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number | string } | undefined,
    callback: LookupCallback,
  ): void => {
    const family = options?.family === 'IPv4' ? 4 : options?.family === 'IPv6' ? 6 : Number(options?.family ?? 0);
    resolve(hostname, { all: true, family: family === 4 || family === 6 ? family : 0 }, (error, addresses) => {
      if (error) return callback(error, []);
      const allowed = addresses.filter((a) => refusal(a.address) === null);
      if (allowed.length === 0) {
        const reasons = addresses.map((a) => refusal(a.address)).join('; ');
        const refused = Object.assign(
          new Error(`blocked: ${hostname} resolves only to refused addresses (${reasons || 'none'})`),
          { code: 'EBLOCKED' },
        );
        return callback(refused, []);
      }
      if (options?.all) return callback(null, allowed);
      const first = allowed[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** For https: public addresses, and loopback ones with the opt-in. */
export const publicOnly =
  (allowLoopback: boolean) =>
  (address: string): string | null =>
    blockedReason(address, allowLoopback);

/** For plain http (opt-in only): a loopback host must really resolve to loopback addresses. */
export const loopbackOnly = (address: string): string | null =>
  isLoopbackAddress(address) ? null : `${address} is not a loopback address (plain http)`;

/**
 * Checks a webhook URL before an attempt: https, or http only to a loopback host with the opt-in;
 * no credentials; an IP literal must be allowed (names are checked at connect time).
 * Returns the reason it is refused, or null.
 */
export function urlRefusal(raw: string, allowLoopback: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'blocked: not a URL';
  }
  if (url.username || url.password) return 'blocked: the URL carries credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol === 'http:') {
    if (!(allowLoopback && isLoopbackHost(host)))
      return 'blocked: plain http is allowed only to loopback hosts with DRIVING_WEBHOOK_ALLOW_LOOPBACK';
  } else if (url.protocol !== 'https:') return `blocked: ${url.protocol} is not https`;
  if (isIP(host) !== 0) {
    const reason = blockedReason(host, allowLoopback);
    if (reason) return `blocked: ${reason}`;
  }
  return null;
}
