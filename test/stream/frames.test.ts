/**
 * The frames the stream hubs of a deployment exchange (ADR 016): packed many messages to a frame,
 * never over the transport's size (PostgreSQL NOTIFY: under 8,000 bytes), a frame too large cut into
 * parts between UTF-8 characters and put together again; what is malformed or incomplete is dropped.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Frame, FrameDecoder, FrameEncoder } from '../../src/stream/frames.ts';
import { NOTIFY_MAX_BYTES } from '../../src/stream/postgres-transport.ts';
import type { StreamMessage } from '../../src/stream/stream-messages.ts';

const W = '0197a0c2-3b11-7a52-9e3f-6a7b8c9d0e11';

function location(i: number, name = `device ${i}`): StreamMessage {
  return {
    event: 'location',
    data: {
      device_id: `0197a0c2-3b16-7fa7-8384-${String(i).padStart(12, '0')}`,
      external_id: null,
      name,
      lng: 13 + i / 1000,
      lat: 52,
      accuracy: null,
      recorded_at: '2026-03-10T12:00:00.000Z',
      inside_geofence_ids: [],
    },
  };
}

function decodeAll(decoder: FrameDecoder, frames: readonly string[]): Frame[] {
  return frames.flatMap((raw) => decoder.decode(raw) ?? []);
}

describe('stream frames', () => {
  test('many messages share frames, each under the NOTIFY limit, and decode in order', () => {
    const encoder = new FrameEncoder('n1', NOTIFY_MAX_BYTES);
    const entries = Array.from({ length: 500 }, (_, i) => [W, location(i)] as const);
    const frames = encoder.messages(entries);
    assert.ok(frames.length > 1 && frames.length < 30, `${frames.length} frames for 500 messages`);
    for (const frame of frames) assert.ok(Buffer.byteLength(frame) <= NOTIFY_MAX_BYTES);
    const decoded = decodeAll(new FrameDecoder(), frames);
    assert.ok(decoded.every((f) => f.kind === 'messages' && f.origin === 'n1'));
    assert.deepEqual(
      decoded.flatMap((f) => (f.kind === 'messages' ? f.messages : [])),
      entries.map(([w, m]) => [w, m]),
    );
  });

  test('a message larger than a frame is cut between characters and put together again', () => {
    const encoder = new FrameEncoder('n1', NOTIFY_MAX_BYTES);
    // Two-, three- and four-byte characters, so that cuts fall inside characters unless avoided.
    const name = 'Zürich €-Lager 😀 '.repeat(2_000);
    const big = location(1, name);
    const frames = encoder.messages([
      [W, location(0)],
      [W, big],
      [W, location(2)],
    ]);
    assert.ok(frames.length >= 6, `${frames.length} frames`);
    for (const frame of frames) {
      assert.ok(Buffer.byteLength(frame) <= NOTIFY_MAX_BYTES, 'every part fits');
      assert.ok(!frame.includes('\uFFFD'), 'no character was cut');
    }
    const decoded = decodeAll(new FrameDecoder(), frames);
    assert.deepEqual(
      decoded.flatMap((f) => (f.kind === 'messages' ? f.messages.map(([, m]) => m) : [])),
      [location(0), big, location(2)],
    );
  });

  test('parts of two nodes may interleave; a frame missing a part is dropped, the next one is not', () => {
    const a = new FrameEncoder('a', 1024);
    const b = new FrameEncoder('b', 1024);
    const bigA = location(1, 'a'.repeat(3000));
    const bigB = location(2, 'b'.repeat(3000));
    const fromA = a.messages([[W, bigA]]);
    const fromB = b.messages([[W, bigB]]);
    const interleaved = fromA.flatMap((part, i) => [part, fromB[i] ?? []].flat());
    const decoded = decodeAll(new FrameDecoder(), interleaved);
    assert.deepEqual(decoded.map((f) => f.origin).sort(), ['a', 'b']);

    const again = a.messages([[W, bigA]]);
    const next = a.messages([[W, location(3)]]);
    const decoder = new FrameDecoder();
    assert.deepEqual(decodeAll(decoder, [...again.filter((_, i) => i !== 1), ...next]), [
      { kind: 'messages', origin: 'a', messages: [[W, location(3)]] },
    ]);
  });

  test('interest, dropped and query frames; malformed frames are dropped', () => {
    const encoder = new FrameEncoder('n1', 300);
    const workspaces = Array.from({ length: 20 }, (_, i) => `workspace-${i}`);
    const interest = encoder.workspaces('interest', workspaces);
    assert.ok(interest.length > 1, 'a long list takes several frames');
    const decoder = new FrameDecoder();
    assert.deepEqual(
      decodeAll(decoder, interest).flatMap((f) => (f.kind === 'interest' ? f.workspaces : [])),
      workspaces,
    );
    assert.deepEqual(decodeAll(decoder, encoder.workspaces('dropped', ['w'])), [
      { kind: 'dropped', origin: 'n1', workspaces: ['w'] },
    ]);
    assert.deepEqual(decodeAll(decoder, encoder.query()), [{ kind: 'query', origin: 'n1' }]);
    for (const raw of [
      '',
      'not json',
      '{"k":"q"}',
      '{"o":"x","k":"z"}',
      '{"o":"x","k":"i","w":[1]}',
      '#x 0 1 2 part',
      '#bad header',
    ]) {
      assert.equal(decoder.decode(raw), undefined, raw);
    }
    // A message entry of the wrong shape is skipped, the others kept.
    assert.deepEqual(
      decoder.decode(
        `{"o":"x","k":"m","m":[["w",{"event":"weather","data":{}}],["w",${JSON.stringify(location(1))}]]}`,
      ),
      {
        kind: 'messages',
        origin: 'x',
        messages: [['w', location(1)]],
      },
    );
  });
});
