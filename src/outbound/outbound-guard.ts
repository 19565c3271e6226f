/**
 * The SSRF guard for outbound requests (contract §0 "private targets", §5). Two layers:
 * - `literalHostAddress` + `classifyAddress` refuse a URL whose host is a literal private IP when
 *   a webhook is created or updated (a fast, explainable 400);
 * - `createGuardedDispatcher` checks the address the socket actually connects to, after our own
 *   DNS resolution, so a host name that resolves (or re-resolves, "DNS rebinding") to a private
 *   address at delivery time is refused before a byte is sent.
 * See docs/decisions/009-webhook-configuration-and-ssrf.md for the address classes and why.
 */
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';

export const ALLOW_PRIVATE_HINT = 'set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets';

/** IPv4 ranges that are not public unicast, most specific first. [first octets, prefix, reason]. */
const V4_RANGES: ReadonlyArray<readonly [string, number, string]> = [
  ['255.255.255.255', 32, 'broadcast'],
  ['169.254.169.254', 32, 'cloud metadata'],
  ['169.254.170.2', 32, 'cloud metadata'], // AWS ECS task metadata
  ['0.0.0.0', 8, 'unspecified (0.0.0.0/8)'], // 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8, 'private (RFC 1918)'],
  ['100.64.0.0', 10, 'CGNAT (RFC 6598)'], // includes Alibaba's metadata 100.100.100.200
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.0.0.0', 24, 'reserved (IETF protocol assignments)'],
  ['192.0.2.0', 24, 'documentation (TEST-NET-1)'],
  ['192.88.99.0', 24, 'reserved (6to4 relay anycast)'],
  ['192.168.0.0', 16, 'private (RFC 1918)'],
  ['198.18.0.0', 15, 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'documentation (TEST-NET-2)'],
  ['203.0.113.0', 24, 'documentation (TEST-NET-3)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved (240.0.0.0/4)'],
];

function v4ToNumber(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

const V4_TABLE = V4_RANGES.map(([base, prefix, reason]) => {
  const size = 2 ** (32 - prefix);
  const start = Math.floor(v4ToNumber(base) / size) * size;
  return { start, end: start + size - 1, reason };
});

function classifyV4Number(n: number): string | null {
  for (const range of V4_TABLE) if (n >= range.start && n <= range.end) return range.reason;
  return null;
}

/** Eight 16-bit groups of a valid IPv6 address (zone id dropped, dotted IPv4 tail accepted). */
function parseV6(ip: string): number[] {
  const address = ip.split('%')[0] ?? ip;
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const toGroups = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((g) => {
      if (g.includes('.')) {
        const n = v4ToNumber(g);
        return [Math.floor(n / 65536), n % 65536];
      }
      return [Number.parseInt(g, 16)];
    });
  };
  const left = toGroups(head);
  if (tail === undefined) return left;
  const right = toGroups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const v4FromGroups = (hi: number, lo: number): number => hi * 65536 + lo;

function classifyV6(ip: string): string | null {
  const g = parseV6(ip);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = v4FromGroups(g6, g7);
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (upperZero && g4 === 0 && g5 === 0) {
    if (embedded === 0) return 'unspecified';
    if (embedded === 1) return 'loopback';
    // IPv4-compatible (::a.b.c.d, deprecated): never a legitimate public destination.
    return classifyV4Number(embedded) ?? 'reserved (IPv4-compatible IPv6)';
  }
  // IPv4-mapped ::ffff:a.b.c.d and SIIT ::ffff:0:a.b.c.d reach the IPv4 address itself.
  if (upperZero && ((g4 === 0 && g5 === 0xffff) || (g4 === 0xffff && g5 === 0))) {
    return classifyV4Number(embedded);
  }
  // NAT64 well-known prefix 64:ff9b::/96 translates to the embedded IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return classifyV4Number(embedded);
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private (local-use NAT64, 64:ff9b:1::/48)';
  // 6to4 2002:AABB:CCDD::/48 tunnels to the IPv4 address AABB:CCDD.
  if (g0 === 0x2002) return classifyV4Number(v4FromGroups(g1, g2));
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0) {
    if (g7 === 0x254) return 'cloud metadata';
  }
  if ((g0 & 0xfe00) === 0xfc00) return 'private (unique local, fc00::/7)';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private (site-local, fec0::/10)';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation (2001:db8::/32)';
  if (g0 === 0x3fff && g1 < 0x1000) return 'documentation (3fff::/20)';
  if (g0 === 0x2001 && g1 === 0) return 'reserved (Teredo tunnelling)';
  if (g0 === 0x2001 && g1 === 2 && g2 === 0) return 'reserved (benchmarking)';
  // Everything else outside global unicast 2000::/3 (100::/64 discard, unassigned space…).
  if ((g0 & 0xe000) !== 0x2000) return 'reserved';
  return null;
}

/**
 * Null when `ip` is a public unicast address; otherwise why it is refused ('loopback',
 * 'private (RFC 1918)', 'link-local', 'cloud metadata', …). Not an IP address → 'not an IP address'.
 */
export function classifyAddress(ip: string): string | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  switch (isIP(bare)) {
    case 4:
      return classifyV4Number(v4ToNumber(bare));
    case 6:
      return classifyV6(bare);
    default:
      return 'not an IP address';
  }
}

/**
 * inet_aton(3) numbers-and-dots, the spelling getaddrinfo also accepts: 1–4 parts, each decimal,
 * octal (leading 0) or hex (0x); the last part fills the remaining bytes (`127.1`, `0x7f000001`).
 */
function parseInetAton(host: string): string | null {
  const parts = host.split('.');
  if (parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]*$/.test(part)) value = Number.parseInt(part, 8);
    else if (/^[1-9][0-9]*$/.test(part)) value = Number(part);
    else return null;
    values.push(value);
  }
  const last = values.pop() ?? 0;
  if (values.some((v) => v > 255) || last >= 2 ** (8 * (4 - values.length))) return null;
  const n = values.reduce((acc, v, i) => acc + v * 2 ** (8 * (3 - i)), 0) + last;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * The IP address a URL's host denotes when it is a literal, in any spelling the WHATWG URL
 * parser or the system resolver accepts (`[::ffff:127.0.0.1]`, `0x7f000001`, `2130706433`,
 * `0177.0.0.1`, `127.1`, `127.0.0.1.`); null for a host name. For http(s) URLs the WHATWG parser
 * already normalises IPv4 spellings; the fallback covers URLs of other schemes.
 */
export function literalHostAddress(url: URL): string | null {
  const host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) {
    const inner = host.slice(1, -1);
    return isIP(inner) === 6 ? inner : null;
  }
  const trimmed = host.replace(/\.+$/, '');
  if (isIP(trimmed) !== 0) return trimmed;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    try {
      const normalised = new URL(`http://${host}/`).hostname;
      if (normalised !== host) return literalHostAddress(new URL(`http://${host}/`));
    } catch {
      // Not a valid http host either; fall through to the resolver's numbers-and-dots rules.
    }
  }
  try {
    return parseInetAton(decodeURIComponent(trimmed).toLowerCase());
  } catch {
    return null; // a malformed percent-escape is not an address
  }
}

/** A connection refused because its destination address is not public (contract §0). */
export class ForbiddenTargetError extends Error {
  readonly host: string;
  readonly address: string;
  readonly reason: string;
  constructor(host: string, address: string, reason: string) {
    const what = host === address ? `${address}: it is` : `${host}: it resolves to ${address},`;
    const article = /^[aeiou]/i.test(reason) ? 'an' : 'a';
    super(`Refused to connect to ${what} ${article} ${reason} address (${ALLOW_PRIVATE_HINT})`);
    this.name = 'ForbiddenTargetError';
    this.host = host;
    this.address = address;
    this.reason = reason;
  }
}

export type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

export interface GuardedDispatcherOptions {
  allowPrivate: boolean;
  connectTimeoutMs?: number;
  /** DNS resolution, replaceable in tests (rebinding scenarios); default `dns.lookup` all. */
  lookup?: HostLookup;
  /** Address policy, replaceable in tests to let a loopback receiver stand in for a public one. */
  classify?: (ip: string) => string | null;
  /** Extra trusted certificate authorities (PEM) for HTTPS targets, e.g. a private PKI or tests. */
  ca?: string | string[];
}

const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, order: 'verbatim' });

/**
 * Resolves every address of `hostname` (or takes the literal), refusing the whole host when any
 * address is not public: a mixed answer is how rebinding attacks hide a private address.
 */
export async function resolvePublicAddresses(
  hostname: string,
  lookup: HostLookup = systemLookup,
  classify: (ip: string) => string | null = classifyAddress,
): Promise<string[]> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const addresses = isIP(bare) !== 0 ? [bare] : (await lookup(bare)).map((a) => a.address);
  if (addresses.length === 0) throw new Error(`${bare} did not resolve to any address`);
  for (const address of addresses) {
    const reason = classify(address);
    if (reason !== null) throw new ForbiddenTargetError(bare, address, reason);
  }
  return addresses;
}

/**
 * An undici dispatcher for customer-controlled URLs. Unless `allowPrivate`, its connector
 * resolves the host itself, checks every address, and opens the socket to a checked address
 * (never to the name), so the IP that was checked is the IP connected to. TLS still verifies
 * the certificate against the original host name (undici derives `servername` from `host`).
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Dispatcher {
  const timeout = options.connectTimeoutMs ?? 10_000;
  const tls = options.ca === undefined ? {} : { ca: options.ca };
  if (options.allowPrivate) return new Agent({ connect: { timeout, ...tls } });
  const base = buildConnector({ timeout, ...tls });
  const lookup = options.lookup ?? systemLookup;
  const classify = options.classify ?? classifyAddress;
  const connect: buildConnector.connector = (connectOptions, callback) => {
    resolvePublicAddresses(connectOptions.hostname, lookup, classify).then(
      (addresses) => connectInTurn(base, connectOptions, addresses, callback),
      (error: Error) => callback(error, null),
    );
  };
  return new Agent({ connect });
}

/** Tries the checked addresses in resolver order; reports the last connection error. */
function connectInTurn(
  base: buildConnector.connector,
  connectOptions: buildConnector.Options,
  addresses: string[],
  callback: buildConnector.Callback,
  index = 0,
): void {
  const address = addresses[index] ?? '';
  base({ ...connectOptions, hostname: address }, (...result) => {
    if (result[0] !== null && index + 1 < addresses.length) {
      connectInTurn(base, connectOptions, addresses, callback, index + 1);
    } else callback(...result);
  });
}
