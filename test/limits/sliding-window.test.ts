/**
 * The rolling-window store against a brute-force model (every accepted request's timestamp kept),
 * in memory and in a real Redis: for random request schedules it must never accept more than
 * `limit` requests in any window, must accept whenever the model says the budget allows it under
 * the documented bucket rule, and its Retry-After must be exact: refused one millisecond before it,
 * accepted at it.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisWindowStore } from '../../src/limits/redis-sliding-window.ts';
import {
  HOUR_WINDOW,
  MemoryWindowStore,
  MINUTE_WINDOW,
  type WindowShape,
  type WindowStore,
} from '../../src/limits/sliding-window.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** The documented rule: a request stays counted until its whole bucket has left the window. */
function modelCount(accepted: number[], now: number, shape: WindowShape): number {
  const bucket = Math.floor(now / shape.bucketMs);
  const span = shape.windowMs / shape.bucketMs + 1;
  return accepted.filter((t) => Math.floor(t / shape.bucketMs) > bucket - span).length;
}

async function checkAgainstModel(store: WindowStore, shape: WindowShape, seed: number): Promise<void> {
  const rand = lcg(seed);
  const limit = 5 + Math.floor(rand() * 20);
  const key = `k${seed}`;
  const accepted: number[] = [];
  let now = Date.UTC(2026, 2, 10, 12, 0, 0) + Math.floor(rand() * shape.bucketMs);
  for (let i = 0; i < 300; i++) {
    // Bursts and pauses: mostly small steps, sometimes a long gap.
    now += rand() < 0.1 ? Math.floor(rand() * shape.windowMs) : Math.floor(rand() * (shape.windowMs / 40));
    const expected = modelCount(accepted, now, shape) < limit;
    const decision = await store.consume(key, limit, now);
    assert.equal(decision.allowed, expected, `request ${i} at +${now} (seed ${seed})`);
    if (decision.allowed) {
      accepted.push(now);
      assert.equal(decision.count, modelCount(accepted, now, shape));
    } else {
      // Honest Retry-After: one millisecond earlier is still refused, at it a request goes through.
      assert.ok(decision.resetMs > 0);
      assert.ok(modelCount(accepted, now + decision.resetMs - 1, shape) >= limit, 'not free before');
      assert.ok(modelCount(accepted, now + decision.resetMs, shape) < limit, 'free at Retry-After');
    }
    // Never more than `limit` accepted requests within any window's length.
    const inWindow = accepted.filter((t) => t > now - shape.windowMs).length;
    assert.ok(inWindow <= limit, `${inWindow} > ${limit} in one window`);
  }
}

const shapes: Array<[string, WindowShape]> = [
  ['hour of minute buckets', HOUR_WINDOW],
  ['minute of second buckets', MINUTE_WINDOW],
];

describe('rolling window, memory store', () => {
  for (const [name, shape] of shapes) {
    test(`matches the model (${name})`, async () => {
      for (let seed = 1; seed <= 20; seed++)
        await checkAgainstModel(new MemoryWindowStore(shape), shape, seed);
    });
  }

  test('refused requests are not counted; peek counts without consuming', async () => {
    const store = new MemoryWindowStore(HOUR_WINDOW);
    const t0 = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 3; i++) assert.equal(store.consume('a', 3, t0 + i).allowed, true);
    for (let i = 0; i < 5; i++) assert.equal(store.consume('a', 3, t0 + 10).allowed, false);
    assert.deepEqual(await store.peek(['a', 'b'], t0 + 10), [3, 0]);
    // The three requests of the first minute leave together one hour and one minute later.
    const refused = store.consume('a', 3, t0 + 10);
    assert.equal(refused.resetMs, 3_660_000 - 10);
    assert.equal(store.consume('a', 3, t0 + 3_660_000).allowed, true);
    assert.deepEqual(await store.peek(['a'], t0 + 3_660_000), [1]);
  });
});

describe('rolling window, Redis store', async () => {
  const reachable = await redisReachable();
  const prefix = uniquePrefix('window');
  const redis = reachable ? new Redis(REDIS_URL) : undefined;
  after(async () => {
    redis?.disconnect();
    if (reachable) await dropPrefix(prefix);
  });

  for (const [name, shape] of shapes) {
    test(`matches the model (${name})`, { skip: !reachable && 'no Redis at REDIS_TEST_URL' }, async () => {
      const store = new RedisWindowStore(redis as Redis, `${prefix}${name.length}:`, shape);
      for (let seed = 1; seed <= 8; seed++) await checkAgainstModel(store, shape, seed);
    });
  }

  test('concurrent requests share one script call and get what sequential ones would', {
    skip: !reachable && 'no Redis at REDIS_TEST_URL',
  }, async () => {
    const store = new RedisWindowStore(redis as Redis, `${prefix}burst:`, HOUR_WINDOW);
    const memory = new MemoryWindowStore(HOUR_WINDOW);
    const t0 = Date.UTC(2026, 2, 10, 12, 0, 30);
    // 10 earlier requests, then a burst of 50 at once against a limit of 30.
    for (let i = 0; i < 10; i++) {
      await store.consume('k', 30, t0 - 600_000);
      memory.consume('k', 30, t0 - 600_000);
    }
    const calls = store.scriptCalls;
    const burst = await Promise.all(Array.from({ length: 50 }, () => store.consume('k', 30, t0)));
    assert.equal(store.scriptCalls - calls, 1, 'one script call for the whole burst');
    const sequential = Array.from({ length: 50 }, () => memory.consume('k', 30, t0));
    assert.deepEqual(burst, sequential, 'the same decisions, in arrival order, as one at a time');
    assert.equal(burst.filter((d) => d.allowed).length, 20);
    const refused = burst[49];
    assert.ok(refused && !refused.allowed);
    // The Retry-After is honest: one ms before it still refused, at it a request goes through.
    assert.equal((await store.consume('k', 30, t0 + refused.resetMs - 1)).allowed, false);
    assert.equal((await store.consume('k', 30, t0 + refused.resetMs)).allowed, true);
  });
});

test('an unreachable Redis fails open: the request is allowed uncounted and the error reported', async () => {
  const dead = new Redis('redis://127.0.0.1:1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  const errors: unknown[] = [];
  const store = new RedisWindowStore(dead, 'x:', HOUR_WINDOW, (error) => errors.push(error));
  try {
    const decision = await store.consume('k', 1, Date.UTC(2026, 0, 1));
    assert.equal(decision.allowed, true);
    assert.equal(decision.count, 0);
    await store.consume('k', 1, Date.UTC(2026, 0, 1));
    assert.equal(errors.length, 1, 'reported once, not per request');
  } finally {
    dead.disconnect();
  }
});
