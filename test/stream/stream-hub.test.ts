/**
 * The stream hub's own rules (ADR 016), with hubs joined by an in-memory channel that behaves like
 * NOTIFY and Redis pub/sub (every frame to every hub, the sender's own included, in the order
 * sent): local delivery at once; other nodes only once they said they watch the workspace;
 * exactly once per node; interests exchanged on connect, refreshed, expired and dropped; many
 * messages to a frame. Interest expiry runs on an injected clock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FrameDecoder } from '../../src/stream/frames.ts';
import { LiveStreamHub, type StreamTransport } from '../../src/stream/stream-hub.ts';
import type { StreamMessage } from '../../src/stream/stream-messages.ts';

const silent = { warn: () => {} };

class Channel {
  readonly frames: string[] = [];
  readonly members: ChannelTransport[] = [];
  #waiters: Array<() => void> = [];

  join(maxFrameBytes = 7_900): ChannelTransport {
    const transport = new ChannelTransport(this, maxFrameBytes);
    this.members.push(transport);
    return transport;
  }

  publish(frame: string): void {
    this.frames.push(frame);
    // Delivered on a later turn, as a socket would, in the order sent.
    setImmediate(() => {
      for (const member of this.members) if (member.connected) member.receive(frame);
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    });
  }

  /** Waits (driven by deliveries) until `check` holds; fails after 2 s. */
  async until(check: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 2_000;
    while (!check()) {
      if (Date.now() > deadline) assert.fail(`not within 2 s: ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 20);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  kinds(from = 0): string[] {
    const decoder = new FrameDecoder();
    return this.frames.slice(from).flatMap((raw) => {
      const frame = decoder.decode(raw);
      return frame ? [frame.kind] : [];
    });
  }
}

class ChannelTransport implements StreamTransport {
  connected = false;
  readonly #frameHandlers: Array<(raw: string) => void> = [];
  readonly #connectHandlers: Array<() => void> = [];
  readonly channel: Channel;
  readonly maxFrameBytes: number;
  constructor(channel: Channel, maxFrameBytes: number) {
    this.channel = channel;
    this.maxFrameBytes = maxFrameBytes;
  }
  onFrame(handler: (raw: string) => void): void {
    this.#frameHandlers.push(handler);
  }
  onConnect(handler: () => void): void {
    this.#connectHandlers.push(handler);
  }
  async send(frames: readonly string[]): Promise<void> {
    if (!this.connected) return;
    for (const frame of frames) this.channel.publish(frame);
  }
  receive(frame: string): void {
    for (const handler of this.#frameHandlers) handler(frame);
  }
  connect(): void {
    this.connected = true;
    for (const handler of this.#connectHandlers) handler();
  }
  async close(): Promise<void> {
    this.connected = false;
  }
}

function message(i: number): StreamMessage {
  return {
    event: 'location',
    data: {
      device_id: `d${i}`,
      external_id: null,
      name: `device ${i}`,
      lng: i,
      lat: 0,
      accuracy: null,
      recorded_at: '2026-03-10T12:00:00.000Z',
      inside_geofence_ids: [],
    },
  };
}

interface Node {
  hub: LiveStreamHub;
  transport: ChannelTransport;
}

function node(channel: Channel, now: () => number = () => 0, options: { refreshMs?: number } = {}): Node {
  const transport = channel.join();
  const hub = new LiveStreamHub({ transport, logger: silent, now, flushMs: 1, ttlMs: 1_000, ...options });
  transport.connect();
  return { hub, transport };
}

describe('stream hub', () => {
  test('without a transport: local delivery only, and only to the workspace’s listeners', async () => {
    const hub = new LiveStreamHub({ logger: silent });
    const got: string[] = [];
    const a = hub.subscribe('A', (m) => got.push(`A:${m.event}`));
    const b = hub.subscribe('B', (m) => got.push(`B:${m.event}`));
    await a.announced;
    assert.equal(hub.wanted('A'), true);
    hub.publish('A', message(1));
    assert.deepEqual(got, ['A:location'], 'at once, in process');
    a.unsubscribe();
    b.unsubscribe();
    assert.equal(hub.wanted('A'), false);
    hub.publish('A', message(2));
    assert.deepEqual(got, ['A:location']);
    await hub.close();
  });

  test('another node gets a workspace’s messages once it watches it; each node exactly once', async () => {
    const channel = new Channel();
    const one = node(channel);
    const two = node(channel);
    const onOne: StreamMessage[] = [];
    const onTwo: StreamMessage[] = [];

    // Nobody watches: nothing but the start-up queries goes out.
    one.hub.publish('W', message(0));
    assert.equal(one.hub.wanted('W'), false);

    const subTwo = two.hub.subscribe('W', (m) => onTwo.push(m));
    await subTwo.announced;
    await channel.until(() => one.hub.wanted('W'), 'node 1 hears of node 2’s subscriber');
    const subOne = one.hub.subscribe('W', (m) => onOne.push(m));
    await subOne.announced;
    for (let i = 1; i <= 50; i++) one.hub.publish('W', message(i));
    two.hub.publish('W', message(100));
    await channel.until(() => onTwo.length === 51 && onOne.length === 51, 'every message on both nodes');
    // The channel also returned each node's own frames to it; a last round trip shows none was delivered twice.
    one.hub.publish('W', message(200));
    await channel.until(() => onTwo.length === 52, 'the last message on node 2');
    two.hub.publish('W', message(201));
    await channel.until(() => onOne.length === 53, 'the last message on node 1');
    const numbers = (list: StreamMessage[]) => list.map((m) => (m.data as { lng: number }).lng);
    assert.deepEqual(numbers(onOne), [...Array.from({ length: 50 }, (_, i) => i + 1), 100, 200, 201]);
    assert.deepEqual(
      numbers(onTwo)
        .slice(0, 51)
        .sort((a, b) => a - b),
      [...Array.from({ length: 50 }, (_, i) => i + 1), 100],
    );
    assert.ok(!numbers(onTwo).includes(0), 'published before anyone watched: gone');
    // Fifty messages of one flush shared a frame.
    assert.ok(channel.kinds().filter((k) => k === 'messages').length <= 6, `${channel.kinds()}`);
    subOne.unsubscribe();
    subTwo.unsubscribe();
    await one.hub.close();
    await two.hub.close();
  });

  test('a workspace watched only locally sends nothing; a dropped interest stops the sending', async () => {
    const channel = new Channel();
    const one = node(channel);
    const two = node(channel);
    const sub = one.hub.subscribe('W', () => {});
    await sub.announced;
    const from = channel.frames.length;
    for (let i = 0; i < 10; i++) one.hub.publish('W', message(i));
    const other = two.hub.subscribe('X', () => {});
    await channel.until(() => one.hub.wanted('X'), 'a later frame of node 2');
    assert.ok(!channel.kinds(from).includes('messages'), 'no message frame: only node 1 watches W');

    other.unsubscribe();
    await channel.until(() => !one.hub.wanted('X'), 'node 1 hears the interest dropped');
    sub.unsubscribe();
    await one.hub.close();
    await two.hub.close();
  });

  test('interests expire unless refreshed; a node joining late asks and learns them', async () => {
    let now = 0;
    const channel = new Channel();
    const one = node(channel, () => now);
    const two = node(channel, () => now, { refreshMs: 60_000 });
    const sub = two.hub.subscribe('W', () => {});
    await channel.until(() => one.hub.wanted('W'), 'node 1 hears of the subscriber');
    now = 999;
    assert.equal(one.hub.wanted('W'), true, 'within the TTL');
    now = 1_000;
    assert.equal(one.hub.wanted('W'), false, 'expired: node 2 may be gone');

    // A node that connects now asks; node 2 answers with its interests.
    const three = node(channel, () => now);
    await channel.until(() => three.hub.wanted('W'), 'the late node learns node 2’s interest');
    sub.unsubscribe();
    await Promise.all([one.hub.close(), two.hub.close(), three.hub.close()]);
  });

  test('close sends what is queued and drops the node’s interests', async () => {
    const channel = new Channel();
    const one = node(channel);
    const two = node(channel);
    const got: StreamMessage[] = [];
    const sub = two.hub.subscribe('W', (m) => got.push(m));
    one.hub.subscribe('Z', () => {});
    await channel.until(() => one.hub.wanted('W') && two.hub.wanted('Z'), 'both hear of the other');
    one.hub.publish('W', message(7));
    await one.hub.close();
    await channel.until(() => got.length === 1, 'the message queued at close');
    await channel.until(() => !two.hub.wanted('Z'), 'node 2 hears node 1’s interests dropped');
    one.hub.publish('W', message(8));
    two.hub.publish('Z', message(9));
    assert.equal(channel.kinds().filter((k) => k === 'messages').length, 1, 'nothing after close');
    sub.unsubscribe();
    await two.hub.close();
  });
});
