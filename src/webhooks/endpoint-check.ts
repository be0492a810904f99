import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import { blockedReason, isLoopbackAddress, isLoopbackHost } from '../address-guard.js';

/** Resolves a host name to every address it has (dns.lookup with `all`), for tests to replace. */
export type ResolveAll = (hostname: string) => Promise<string[]>;

export const systemResolveAll: ResolveAll = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Names of cloud metadata services: refused by name, whatever they resolve to here. */
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
]);
/** Metadata addresses (GCP, AWS, Azure, OpenStack: 169.254.169.254; AWS IPv6; Alibaba). */
const METADATA_ADDRESSES = new BlockList();
METADATA_ADDRESSES.addAddress('169.254.169.254', 'ipv4');
METADATA_ADDRESSES.addAddress('100.100.100.200', 'ipv4');
METADATA_ADDRESSES.addAddress('fd00:ec2::254', 'ipv6');

const CATEGORIES: [string, BlockList][] = [];
function category(name: string, ranges: [string, number, 'ipv4' | 'ipv6'][]): void {
  const list = new BlockList();
  for (const [net, bits, family] of ranges) list.addSubnet(net, bits, family);
  CATEGORIES.push([name, list]);
}
category('private', [
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
]);
category('link-local', [
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
category('unique-local', [['fc00::', 7, 'ipv6']]);

/**
 * Why an address may not receive webhooks, named by kind (`metadata`, `loopback`, `private`,
 * `link-local`, `unique-local`, `reserved`), or null. Loopback is allowed with the operator's
 * switch for local testing.
 *
 * @example addressRefusal('169.254.169.254', false) // '169.254.169.254 is a cloud metadata address'
 */
export function addressRefusal(address: string, allowLoopback: boolean): string | null {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (METADATA_ADDRESSES.check(address, family)) return `${address} is a cloud metadata address`;
  if (isLoopbackAddress(address)) return allowLoopback ? null : `${address} is a loopback address`;
  for (const [name, list] of CATEGORIES) if (list.check(address, family)) return `${address} is a ${name} address`;
  // the rest of what the send-time guard refuses: documentation, multicast, NAT64, reserved
  return blockedReason(address, allowLoopback) ? `${address} is a reserved address` : null;
}

/**
 * Checks a webhook URL when it is set (API and CLI): https only (plain http only to a loopback
 * host with `DRIVING_WEBHOOK_ALLOW_LOOPBACK`), no credentials, not a metadata name, and every
 * address the host resolves to now must be public. The deliverer checks the addresses again at
 * each connection (DNS rebinding). Returns the reason it is refused, or null.
 *
 * @example await endpointRefusal('https://127.0.0.1/hook', { allowLoopback: false }) // 'url: 127.0.0.1 is a loopback address'
 */
export async function endpointRefusal(
  raw: string,
  options: { allowLoopback: boolean; resolveAll?: ResolveAll },
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url: not an absolute URL';
  }
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (url.protocol === 'http:') {
    if (!options.allowLoopback) return 'url: must be https';
  } else if (url.protocol !== 'https:') return `url: must be https, not ${url.protocol.replace(/:$/, '')}`;
  if (url.username || url.password) return 'url: must not carry credentials';
  if (METADATA_NAMES.has(host)) return `url: ${host} is a cloud metadata address`;
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else if (isLoopbackHost(host)) {
    // `localhost` and `*.localhost` mean this machine whatever a resolver says (RFC 6761)
    if (!options.allowLoopback) return `url: ${host} resolves to 127.0.0.1, a loopback address`;
    addresses = ['127.0.0.1'];
  } else {
    try {
      addresses = await withTimeout((options.resolveAll ?? systemResolveAll)(host), 5_000);
    } catch (error) {
      return `url: ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : 'lookup failed')})`;
    }
    if (addresses.length === 0) return `url: ${host} does not resolve`;
  }
  for (const address of addresses) {
    const refusal = addressRefusal(address, options.allowLoopback);
    if (refusal)
      return `url: ${isIP(host) !== 0 ? refusal : `${host} resolves to ${refusal.replace(`${address} is `, `${address}, `)}`}`;
  }
  // plain http goes to this machine only, as the deliverer's http agent enforces
  if (url.protocol === 'http:' && !addresses.every(isLoopbackAddress))
    return 'url: must be https (plain http only to a loopback host)';
  return null;
}

/** Said with a refusal that only the loopback switch lifts: the switch exists, for local testing. */
export const LOOPBACK_HINT =
  'for local testing, the operator allows loopback hosts (and plain http to them) with DRIVING_WEBHOOK_ALLOW_LOOPBACK=1 on the API, the deliverer and apps.js';

/**
 * `endpointRefusal`, with the loopback switch named when the URL is refused only because its host
 * is this machine (loopback, or plain http to it): never for a private, metadata or other address.
 *
 * @example await explainedRefusal('https://localhost/hook', { allowLoopback: false }) // 'url: localhost resolves to 127.0.0.1, a loopback address (for local testing, …)'
 */
export async function explainedRefusal(
  raw: string,
  options: { allowLoopback: boolean; resolveAll?: ResolveAll },
): Promise<string | null> {
  const refusal = await endpointRefusal(raw, options);
  if (refusal === null || options.allowLoopback) return refusal;
  const withSwitch = await endpointRefusal(raw, { ...options, allowLoopback: true });
  return withSwitch === null ? `${refusal} (${LOOPBACK_HINT})` : refusal;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('lookup timed out'), { code: 'ETIMEOUT' })), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
