import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { BlockList } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { type Dispatcher, request } from 'undici';
import {
  classifyAddress,
  createGuardedDispatcher,
  ForbiddenTargetError,
  literalHostAddress,
} from '../../src/outbound/outbound-guard.ts';

/** An independent oracle: the IANA special-purpose IPv4 blocks we refuse, as a node BlockList. */
const refusedV4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
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
] as const) {
  refusedV4.addSubnet(net, prefix, 'ipv4');
}

const v4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const octets = (ip: string): number[] => ip.split('.').map(Number);

describe('classifyAddress', () => {
  it('names the class of well-known non-public IPv4 addresses', () => {
    const cases: Array<[string, RegExp]> = [
      ['127.0.0.1', /loopback/],
      ['127.255.255.254', /loopback/],
      ['10.1.2.3', /private \(RFC 1918\)/],
      ['172.16.0.1', /RFC 1918/],
      ['172.31.255.255', /RFC 1918/],
      ['192.168.1.1', /RFC 1918/],
      ['169.254.1.1', /link-local/],
      ['169.254.169.254', /cloud metadata/],
      ['169.254.170.2', /cloud metadata/],
      ['100.64.0.1', /CGNAT/],
      ['100.100.100.200', /CGNAT/],
      ['0.0.0.0', /unspecified/],
      ['0.1.2.3', /unspecified/],
      ['224.0.0.1', /multicast/],
      ['239.255.255.250', /multicast/],
      ['255.255.255.255', /broadcast/],
      ['240.0.0.1', /reserved/],
      ['192.0.0.170', /reserved/],
      ['198.18.0.1', /benchmarking/],
      ['192.0.2.1', /documentation/],
    ];
    for (const [ip, reason] of cases) assert.match(classifyAddress(ip) ?? 'public', reason, ip);
  });

  it('lets public IPv4 addresses through, including the neighbours of refused blocks', () => {
    for (const ip of [
      '1.1.1.1',
      '8.8.8.8',
      '93.184.216.34',
      '172.15.255.255',
      '172.32.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '9.255.255.255',
      '11.0.0.0',
      '223.255.255.255',
      '169.253.255.255',
    ]) {
      assert.equal(classifyAddress(ip), null, ip);
    }
  });

  it('names the class of non-public IPv6 addresses, including IPv4 embedded in IPv6', () => {
    const cases: Array<[string, RegExp]> = [
      ['::1', /loopback/],
      ['::', /unspecified/],
      ['::ffff:127.0.0.1', /loopback/],
      ['::ffff:7f00:1', /loopback/],
      ['::ffff:10.0.0.1', /RFC 1918/],
      ['::ffff:169.254.169.254', /cloud metadata/],
      ['::ffff:0:192.168.0.1', /RFC 1918/],
      ['::127.0.0.1', /loopback/],
      ['::8.8.8.8', /IPv4-compatible/],
      ['64:ff9b::10.0.0.1', /RFC 1918/],
      ['64:ff9b::7f00:1', /loopback/],
      ['64:ff9b:1::1', /NAT64/],
      ['2002:7f00:1::1', /loopback/],
      ['2002:c0a8:101::', /RFC 1918/],
      ['fc00::1', /unique local/],
      ['fdff:ffff::1', /unique local/],
      ['fd00:ec2::254', /cloud metadata/],
      ['fe80::1', /link-local/],
      ['fe80::1%eth0', /link-local/],
      ['febf::1', /link-local/],
      ['fec0::1', /site-local/],
      ['ff02::1', /multicast/],
      ['2001:db8::1', /documentation/],
      ['3fff::1', /documentation/],
      ['3fff:fff:ffff::1', /documentation/],
      ['2001::1', /Teredo/],
      ['100::1', /reserved/],
      ['4000::1', /reserved/],
      ['[::1]', /loopback/],
    ];
    for (const [ip, reason] of cases) assert.match(classifyAddress(ip) ?? 'public', reason, ip);
  });

  it('lets public IPv6 addresses through, including public IPv4 embedded in them', () => {
    for (const ip of [
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ]) {
      assert.equal(classifyAddress(ip), null, ip);
    }
  });

  it('refuses what is not an IP address', () => {
    assert.equal(classifyAddress('localhost'), 'not an IP address');
    assert.equal(classifyAddress('127.1'), 'not an IP address');
  });

  it('refuses every address of 10.0.0.0/8, 127.0.0.0/8, 172.16.0.0/12 and 192.168.0.0/16', () => {
    const inBlock = (base: number, prefix: number) =>
      fc.integer({ min: 0, max: 2 ** (32 - prefix) - 1 }).map((offset) => v4(base + offset));
    fc.assert(
      fc.property(
        fc.oneof(
          inBlock(10 * 2 ** 24, 8),
          inBlock(127 * 2 ** 24, 8),
          inBlock((172 * 256 + 16) * 2 ** 16, 12),
          inBlock((192 * 256 + 168) * 2 ** 16, 16),
        ),
        (ip) => {
          assert.match(classifyAddress(ip) ?? 'public', /RFC 1918|loopback/);
          assert.notEqual(classifyAddress(`::ffff:${ip}`), null);
          assert.notEqual(classifyAddress(`64:ff9b::${ip}`), null);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('agrees with an independent BlockList oracle on random IPv4 addresses', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        assert.equal(classifyAddress(ip) !== null, refusedV4.check(ip, 'ipv4'), ip);
        // The IPv4-mapped form reaches the same host, so it gets the same answer.
        assert.equal(classifyAddress(`::ffff:${ip}`) !== null, refusedV4.check(ip, 'ipv4'), ip);
      }),
      { numRuns: 5000 },
    );
  });

  it('lets random global unicast IPv6 through and refuses random ULA, link-local and multicast', () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((g) => g.toString(16));
    const rest = fc.array(group, { minLength: 7, maxLength: 7 }).map((gs) => gs.join(':'));
    // 2400:: … 3fff:ffff:: is global unicast outside the special 2001::/16 and 2002::/16 blocks,
    // except the documentation block 3fff::/20 (3fff:0000 … 3fff:0fff).
    const globalFirst = fc.integer({ min: 0x2400, max: 0x3fff }).map((g) => g.toString(16));
    fc.assert(
      fc.property(globalFirst, rest, (first, tail) => {
        const ip = `${first}:${tail}`;
        const documentation = first === '3fff' && Number.parseInt(tail.split(':')[0] ?? '0', 16) < 0x1000;
        assert.equal(classifyAddress(ip) !== null, documentation, ip);
      }),
      { numRuns: 2000 },
    );
    const prefixed = (min: number, max: number) =>
      fc.tuple(fc.integer({ min, max }), rest).map(([g, tail]) => `${g.toString(16)}:${tail}`);
    fc.assert(
      fc.property(
        fc.oneof(prefixed(0xfc00, 0xfdff), prefixed(0xfe80, 0xfebf), prefixed(0xff00, 0xffff)),
        (ip) => {
          assert.notEqual(classifyAddress(ip), null, ip);
        },
      ),
    );
  });
});

describe('literalHostAddress', () => {
  const literal = (url: string) => literalHostAddress(new URL(url));

  it('finds the loopback address in every spelling of it', () => {
    for (const host of [
      '127.0.0.1',
      '0x7f000001',
      '2130706433',
      '0177.0.0.1',
      '127.1',
      '0x7f.1',
      '127.0.0.1.',
      '017700000001',
      '%31%32%37.0.0.1',
      '１２７.０.０.１',
    ]) {
      assert.equal(literal(`http://${host}:8080/hook`), '127.0.0.1', host);
      assert.equal(literal(`https://user:pw@${host}/`), '127.0.0.1', host);
    }
    assert.equal(literal('http://[::1]/'), '::1');
    assert.equal(classifyAddress(literal('http://[::ffff:127.0.0.1]/') ?? ''), 'loopback');
    assert.equal(classifyAddress(literal('http://[0:0:0:0:0:ffff:7f00:0001]/') ?? ''), 'loopback');
    assert.equal(classifyAddress(literal('http://0/') ?? ''), 'unspecified (0.0.0.0/8)');
  });

  it('returns null for host names, including ones that merely contain digits', () => {
    for (const url of [
      'https://example.com/',
      'http://127.0.0.1.nip.io/',
      'http://1.2.3.4.example/',
      'http://0x7f.example/',
      'http://localhost/',
    ]) {
      assert.equal(literal(url), null, url);
    }
  });

  it('also normalises numbers-and-dots hosts of URLs the WHATWG parser leaves alone', () => {
    assert.equal(literal('foo://0x7f000001/'), '127.0.0.1');
    assert.equal(literal('foo://127.1/'), '127.0.0.1');
    assert.equal(literal('foo://example/'), null);
  });

  it('maps every inet_aton spelling of a random IPv4 address to that address', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.constantFrom('http', 'https', 'foo'),
        (n, scheme) => {
          const dotted = v4(n);
          const [a = 0, b = 0, c = 0, d = 0] = octets(dotted);
          const spellings = [
            dotted,
            `${dotted}.`,
            String(n),
            `0x${n.toString(16)}`,
            `0${n.toString(8)}`,
            [a, b, c, d].map((o) => `0${o.toString(8)}`).join('.'),
            [a, b, c, d].map((o) => `0x${o.toString(16)}`).join('.'),
            `${a}.${b}.${c * 256 + d}`,
            `${a}.${b * 65536 + c * 256 + d}`,
          ];
          for (const spelling of spellings) {
            assert.equal(literal(`${scheme}://${spelling}/`), dotted, `${scheme}://${spelling}`);
          }
          const mapped = literal(`${scheme}://[::ffff:${dotted}]/`);
          assert.equal(classifyAddress(mapped ?? '') !== null, refusedV4.check(dotted, 'ipv4'));
        },
      ),
      { numRuns: 500 },
    );
  });
});

interface Receiver {
  server: Server;
  port: number;
  requests: IncomingMessage[];
}

async function startReceiver(
  server: Server,
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok'),
): Promise<Receiver> {
  const requests: IncomingMessage[] = [];
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, requests };
}

const fixedLookup =
  (...answers: string[][]) =>
  async (): Promise<LookupAddress[]> => {
    const answer = answers.length > 1 ? answers.shift() : answers[0];
    return (answer ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

/** Treats 127.0.0.1 as if it were public, so a loopback receiver can stand in for the internet. */
const loopbackIsPublic = (ip: string) => (ip === '127.0.0.1' ? null : classifyAddress(ip));

async function refusal(url: string, dispatcher: Dispatcher): Promise<ForbiddenTargetError> {
  try {
    await request(url, { dispatcher });
  } catch (error) {
    assert.ok(error instanceof ForbiddenTargetError, `expected ForbiddenTargetError, got ${String(error)}`);
    return error;
  }
  throw new assert.AssertionError({ message: `${url} was not refused` });
}

describe('createGuardedDispatcher', () => {
  let receiver: Receiver;
  const dispatchers: Dispatcher[] = [];
  const track = (d: Dispatcher) => {
    dispatchers.push(d);
    return d;
  };

  before(async () => {
    receiver = await startReceiver(createHttpServer(), (req, res) => {
      // Closing each connection makes the next request connect (and resolve) again.
      res.setHeader('connection', 'close');
      res.end(`host=${req.headers.host}`);
    });
  });
  after(async () => {
    await Promise.all(dispatchers.map((d) => d.close()));
    await new Promise((resolve) => receiver.server.close(resolve));
  });

  it('refuses a literal loopback target; nothing reaches the server', async () => {
    const guarded = track(createGuardedDispatcher({ allowPrivate: false }));
    const before = receiver.requests.length;
    const error = await refusal(`http://127.0.0.1:${receiver.port}/hook`, guarded);
    assert.equal(
      error.message,
      'Refused to connect to 127.0.0.1: it is a loopback address (set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets)',
    );
    assert.equal(error.reason, 'loopback');
    await refusal(`http://[::1]:${receiver.port}/hook`, guarded);
    await refusal(`http://[::ffff:127.0.0.1]:${receiver.port}/hook`, guarded);
    await refusal(`http://2130706433:${receiver.port}/hook`, guarded);
    assert.equal(receiver.requests.length, before);
  });

  it('refuses a host name on the address it resolves to (localhost)', async () => {
    const guarded = track(createGuardedDispatcher({ allowPrivate: false }));
    const before = receiver.requests.length;
    const error = await refusal(`http://localhost:${receiver.port}/hook`, guarded);
    assert.match(
      error.message,
      /^Refused to connect to localhost: it resolves to (127\.0\.0\.1|::1), a loopback address \(set WEBHOOK_ALLOW_PRIVATE_TARGETS=true/,
    );
    assert.equal(error.host, 'localhost');
    assert.equal(receiver.requests.length, before);
  });

  it('delivers to a loopback target when private targets are allowed', async () => {
    const open = track(createGuardedDispatcher({ allowPrivate: true }));
    const before = receiver.requests.length;
    const response = await request(`http://localhost:${receiver.port}/hook`, { dispatcher: open });
    assert.equal(response.statusCode, 200);
    assert.equal(await response.body.text(), `host=localhost:${receiver.port}`);
    assert.equal(receiver.requests.length, before + 1);
  });

  it('refuses a host whose answer mixes public and private addresses', async () => {
    const guarded = track(
      createGuardedDispatcher({ allowPrivate: false, lookup: fixedLookup(['93.184.216.34', '10.0.0.5']) }),
    );
    const error = await refusal('http://mixed.test/hook', guarded);
    assert.match(
      error.message,
      /^Refused to connect to mixed\.test: it resolves to 10\.0\.0\.5, a private \(RFC 1918\) address/,
    );
  });

  it('connects to the address it checked, keeping the Host header (DNS only through the guard)', async () => {
    const guarded = track(
      createGuardedDispatcher({
        allowPrivate: false,
        lookup: fixedLookup(['127.0.0.1']),
        classify: loopbackIsPublic,
      }),
    );
    const response = await request(`http://receiver.test:${receiver.port}/hook`, { dispatcher: guarded });
    assert.equal(await response.body.text(), `host=receiver.test:${receiver.port}`);
  });

  it('resolves again on every connection, so a rebinding to a private address is refused', async () => {
    const guarded = track(
      createGuardedDispatcher({
        allowPrivate: false,
        lookup: fixedLookup(['127.0.0.1'], ['169.254.169.254']),
        classify: loopbackIsPublic,
      }),
    );
    const first = await request(`http://rebind.test:${receiver.port}/hook`, { dispatcher: guarded });
    assert.equal(first.statusCode, 200);
    await first.body.text();
    const before = receiver.requests.length;
    const error = await refusal(`http://rebind.test:${receiver.port}/hook`, guarded);
    assert.match(error.message, /resolves to 169\.254\.169\.254, a cloud metadata address/);
    assert.equal(receiver.requests.length, before);
  });

  it('tries the next checked address when one refuses the connection', async () => {
    // The receiver listens on 127.0.0.1 only, so 127.0.0.3 refuses the connection.
    const guarded = track(
      createGuardedDispatcher({
        allowPrivate: false,
        lookup: fixedLookup(['127.0.0.3', '127.0.0.1']),
        classify: (ip) => (ip.startsWith('127.') ? null : classifyAddress(ip)),
      }),
    );
    const response = await request(`http://two.test:${receiver.port}/hook`, { dispatcher: guarded });
    assert.equal(response.statusCode, 200);
    await response.body.text();
  });
});

describe('createGuardedDispatcher over HTTPS', () => {
  let dir = '';
  let cert = '';
  let receiver: Receiver | undefined;
  const dispatchers: Dispatcher[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'guard-tls-'));
    // A throwaway self-signed certificate for receiver.test only.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=receiver.test',
        '-addext',
        'subjectAltName=DNS:receiver.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const key = readFileSync(join(dir, 'key.pem'), 'utf8');
    receiver = await startReceiver(createHttpsServer({ key, cert }));
  });
  after(async () => {
    await Promise.all(dispatchers.map((d) => d.close()));
    if (receiver) await new Promise((resolve) => receiver?.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the certificate against the URL host name, not the connected IP', async () => {
    const make = () => {
      const d = createGuardedDispatcher({
        allowPrivate: false,
        lookup: fixedLookup(['127.0.0.1']),
        classify: loopbackIsPublic,
        ca: cert,
      });
      dispatchers.push(d);
      return d;
    };
    const port = receiver?.port ?? 0;
    const ok = await request(`https://receiver.test:${port}/hook`, { dispatcher: make() });
    assert.equal(ok.statusCode, 200);
    assert.equal(await ok.body.text(), 'ok');
    await assert.rejects(
      request(`https://other.test:${port}/hook`, { dispatcher: make() }),
      /altnames|ERR_TLS_CERT_ALTNAME_INVALID/,
    );
  });
});
