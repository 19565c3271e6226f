/**
 * Contract §1: a client still sending a body over the limit receives the 413. Over a real socket,
 * a client that writes its whole body before it reads (as most HTTP clients do) reads the 413 and
 * its error body, with `Content-Length` and chunked alike, and never meets a reset: the server
 * reads and discards the rest up to 4× the route's limit, keeping the connection usable, and past
 * that closes its side only after the answer (src/http/unread-body.ts).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DISCARD_FACTOR } from '../../src/http/unread-body.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { API, createApiKey, signUp } from '../helpers/identity.ts';

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;

interface Exchange {
  /** Everything the server sent, in order. */
  received: string;
  /** Socket errors the client met (ECONNRESET, EPIPE, …), in order. */
  errors: string[];
  /** Bytes of body written before the client stopped (all of them unless the socket broke). */
  written: number;
  /** The server ended its side (FIN). */
  ended: boolean;
  socket: net.Socket;
}

/**
 * Writes the request head and `total` body bytes in 64 KiB pieces, each after the last was taken
 * (back-pressure) and a turn of the event loop, reading whatever arrives meanwhile; only then waits
 * for a full answer. `allowHalfOpen`: like most clients outside Node, a FIN from the server does
 * not stop it writing.
 */
async function postOverSocket(
  port: number,
  path: string,
  headers: Record<string, string>,
  total: number,
  framing: 'content-length' | 'chunked',
): Promise<Exchange> {
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  const exchange: Exchange = { received: '', errors: [], written: 0, ended: false, socket };
  socket.on('data', (data: Buffer) => {
    exchange.received += data.toString('latin1');
  });
  socket.on('end', () => {
    exchange.ended = true;
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    exchange.errors.push(error.code ?? error.message);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const head = [
    `POST ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...Object.entries({ 'Content-Type': 'application/json', ...headers }).map(
      ([name, value]) => `${name}: ${value}`,
    ),
    framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${total}`,
  ];
  const write = (data: string | Buffer) =>
    new Promise<void>((resolve) => {
      if (socket.destroyed) return resolve();
      socket.write(data, () => resolve());
    });
  await write(`${head.join('\r\n')}\r\n\r\n`);
  // Spaces: a body that is not yet invalid JSON, so nothing but its size can be refused.
  const piece = Buffer.alloc(CHUNK, 0x20);
  while (exchange.written < total && !socket.destroyed) {
    const data = piece.subarray(0, Math.min(CHUNK, total - exchange.written));
    await write(framing === 'chunked' ? Buffer.concat([chunkHead(data.length), data, CRLF]) : data);
    exchange.written += data.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (framing === 'chunked') await write('0\r\n\r\n');
  await until(exchange, () => completeAnswer(exchange.received) !== undefined || socket.destroyed);
  return exchange;
}

const CRLF = Buffer.from('\r\n');
const chunkHead = (size: number) => Buffer.from(`${size.toString(16)}\r\n`);

/** The first full HTTP answer in `text` (by its Content-Length), or undefined. */
function completeAnswer(text: string): { status: number; headers: string; body: string } | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const headers = text.slice(0, end);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? Number.NaN);
  const body = text.slice(end + 4, end + 4 + length);
  if (Number.isNaN(length) || body.length < length) return undefined;
  return { status: Number(headers.split(' ')[1]), headers, body };
}

function until(exchange: Exchange, done: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!done()) return;
      exchange.socket.off('data', check).off('end', check).off('close', check);
      resolve();
    };
    // Registered after the exchange's own listeners, so they have recorded the event first.
    exchange.socket.on('data', check).on('end', check).on('close', check);
    check();
  });
}

function closeSocket(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    socket.once('close', () => resolve());
    socket.end();
  });
}

describe('a body over the limit, still being sent over a real socket', () => {
  let t: TestApp;
  let port: number;
  let auth: Record<string, string>;

  before(async () => {
    t = await startTestApp();
    const owner = await signUp(t, 'big-bodies');
    const key = await createApiKey(t, owner.tokens.access_token, ['*']);
    auth = { Authorization: `Bearer ${key.key}` };
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  after(async () => t?.close());

  const cases = [
    { route: `${API}/geofences`, size: 2 * MiB, limit: '1 MiB' },
    { route: `${API}/locations/batch`, size: 6 * MiB, limit: '5 MiB' },
  ];
  for (const { route, size, limit } of cases) {
    for (const framing of ['content-length', 'chunked'] as const) {
      test(`${size / MiB} MiB to POST ${route} (limit ${limit}, ${framing}): 413 read whole, no reset, connection reusable`, async () => {
        const exchange = await postOverSocket(port, route, auth, size, framing);
        assert.deepEqual(exchange.errors, [], 'no ECONNRESET / EPIPE');
        assert.equal(exchange.written, size, 'the whole body was taken');
        const answer = completeAnswer(exchange.received);
        assert.equal(answer?.status, 413, exchange.received.slice(0, 300));
        assert.match(answer.headers, /\r\ncontent-type: application\/json/i);
        assert.deepEqual(JSON.parse(answer.body), { detail: 'Request body is too large' });
        assert.doesNotMatch(answer.headers, /\r\nconnection: close/i);
        // The rest was read and discarded exactly, so the next request on the same connection works.
        const next = exchange.received.length;
        exchange.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        await until(exchange, () => completeAnswer(exchange.received.slice(next)) !== undefined);
        assert.equal(completeAnswer(exchange.received.slice(next))?.status, 200);
        assert.equal(exchange.ended, false);
        await closeSocket(exchange.socket);
      });
    }
  }

  for (const framing of ['content-length', 'chunked'] as const) {
    test(`a body past ${DISCARD_FACTOR}× the limit (${framing}): the server closes, after the 413, which the client reads`, async () => {
      const size = (DISCARD_FACTOR + 3) * MiB;
      const exchange = await postOverSocket(port, `${API}/geofences`, auth, size, framing);
      const answer = completeAnswer(exchange.received);
      assert.equal(answer?.status, 413, exchange.received.slice(0, 300));
      assert.deepEqual(JSON.parse(answer.body), { detail: 'Request body is too large' });
      await until(exchange, () => exchange.ended || exchange.socket.destroyed);
      assert.equal(exchange.ended, true, 'the server shut its side (FIN) rather than resetting');
      // It kept reading while it lingered, so this client, which does not stop at a FIN, could
      // send everything and met no reset.
      assert.equal(exchange.written, size);
      assert.deepEqual(exchange.errors, []);
      assert.equal(exchange.received.length, answer.headers.length + 4 + answer.body.length, 'one answer');
      await closeSocket(exchange.socket);
    });
  }

  test('a client that asked to close (Connection: close): the 413 read whole, then the server closes cleanly', async () => {
    const exchange = await postOverSocket(
      port,
      `${API}/geofences`,
      { ...auth, Connection: 'close' },
      2 * MiB,
      'content-length',
    );
    const answer = completeAnswer(exchange.received);
    assert.equal(answer?.status, 413, exchange.received.slice(0, 300));
    assert.deepEqual(JSON.parse(answer.body), { detail: 'Request body is too large' });
    await until(exchange, () => exchange.ended || exchange.socket.destroyed);
    assert.equal(exchange.ended, true, 'closed by a FIN once the body had ended');
    assert.equal(exchange.written, 2 * MiB);
    assert.deepEqual(exchange.errors, []);
    await closeSocket(exchange.socket);
  });

  test('another early answer, 415 for a body that is not JSON, is read the same way', async () => {
    const exchange = await postOverSocket(
      port,
      `${API}/geofences`,
      { ...auth, 'Content-Type': 'text/plain' },
      2 * MiB,
      'chunked',
    );
    assert.deepEqual(exchange.errors, []);
    assert.equal(exchange.written, 2 * MiB);
    assert.equal(completeAnswer(exchange.received)?.status, 415, exchange.received.slice(0, 300));
    await closeSocket(exchange.socket);
  });

  test('an answer before the body is read (401, bad key) is read the same way', async () => {
    const exchange = await postOverSocket(
      port,
      `${API}/geofences`,
      { Authorization: 'Bearer gf_live_not_a_key' },
      2 * MiB,
      'chunked',
    );
    assert.deepEqual(exchange.errors, []);
    assert.equal(exchange.written, 2 * MiB);
    assert.equal(completeAnswer(exchange.received)?.status, 401);
    await closeSocket(exchange.socket);
  });
});
