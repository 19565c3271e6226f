/**
 * The rolling-window store against a brute-force model (every accepted request's timestamp kept),
 * in memory and in a real Redis: for random request schedules it must accept exactly when the model
 * says the budget allows it under the documented rule (a request counts until its second is a whole
 * window old), never accept more than `limit` requests within a window less its last second, and
 * its Retry-After must be exact and never longer than the window: refused one millisecond before
 * it, accepted at it.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisWindowStore } from '../../src/limits/redis-sliding-window.ts';
import {
  BUCKET_MS,
  HOUR_MS,
  MemoryWindowStore,
  MINUTE_MS,
  type WindowStore,
  wholeSeconds,
} from '../../src/limits/sliding-window.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** The documented rule: a request stays counted until its second is a whole window old. */
function modelCount(accepted: number[], now: number, windowMs: number): number {
  const second = Math.floor(now / BUCKET_MS);
  const span = windowMs / BUCKET_MS;
  return accepted.filter((t) => Math.floor(t / BUCKET_MS) > second - span).length;
}

async function checkAgainstModel(store: WindowStore, seed: number): Promise<void> {
  const windowMs = store.windowMs;
  const rand = lcg(seed);
  const limit = 5 + Math.floor(rand() * 20);
  const key = `k${seed}`;
  const accepted: number[] = [];
  let now = Date.UTC(2026, 2, 10, 12, 0, 0) + Math.floor(rand() * BUCKET_MS);
  for (let i = 0; i < 300; i++) {
    // Bursts and pauses: mostly small steps, sometimes a long gap.
    now += rand() < 0.1 ? Math.floor(rand() * windowMs) : Math.floor(rand() * (windowMs / 40));
    const expected = modelCount(accepted, now, windowMs) < limit;
    const decision = await store.consume(key, limit, now);
    assert.equal(decision.allowed, expected, `request ${i} at +${now} (seed ${seed})`);
    assert.ok(decision.resetMs >= 1 && decision.resetMs <= windowMs, `reset ${decision.resetMs} ms`);
    if (decision.allowed) {
      accepted.push(now);
      assert.equal(decision.count, modelCount(accepted, now, windowMs));
    } else {
      // Honest Retry-After: one millisecond earlier is still refused, at it a request goes through.
      assert.ok(modelCount(accepted, now + decision.resetMs - 1, windowMs) >= limit, 'not free before');
      assert.ok(modelCount(accepted, now + decision.resetMs, windowMs) < limit, 'free at Retry-After');
    }
    // Never more than `limit` accepted requests within the window less its last second.
    const inWindow = accepted.filter((t) => t > now - (windowMs - BUCKET_MS)).length;
    assert.ok(inWindow <= limit, `${inWindow} > ${limit} in one window`);
  }
}

const windows: Array<[string, number]> = [
  ['an hour', HOUR_MS],
  ['a minute', MINUTE_MS],
  ['a second', 1000],
];

describe('rolling window, memory store', () => {
  for (const [name, windowMs] of windows) {
    test(`matches the model (${name})`, async () => {
      for (let seed = 1; seed <= 20; seed++) await checkAgainstModel(new MemoryWindowStore(windowMs), seed);
    });
  }

  test('refused requests are not counted; peek counts without consuming', async () => {
    const store = new MemoryWindowStore(HOUR_MS);
    const t0 = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 3; i++) assert.equal((await store.consume('a', 3, t0 + i)).allowed, true);
    for (let i = 0; i < 5; i++) assert.equal((await store.consume('a', 3, t0 + 10)).allowed, false);
    assert.deepEqual(await store.peek(['a', 'b'], t0 + 10), [3, 0]);
    // The three requests of the first second leave together exactly one hour after it began.
    const refused = await store.consume('a', 3, t0 + 10);
    assert.equal(refused.resetMs, HOUR_MS - 10);
    assert.equal(wholeSeconds(refused.resetMs, HOUR_MS), 3600);
    assert.equal((await store.consume('a', 3, t0 + HOUR_MS - 1)).allowed, false);
    assert.equal((await store.consume('a', 3, t0 + HOUR_MS)).allowed, true);
    assert.deepEqual(await store.peek(['a'], t0 + HOUR_MS), [1]);
  });

  test('a key used in many seconds keeps each one until it is a window old', async () => {
    const store = new MemoryWindowStore(MINUTE_MS);
    const t0 = Date.UTC(2026, 0, 1);
    // One request in each of 50 seconds: the ring grows past its first size and keeps the order.
    for (let i = 0; i < 50; i++) assert.equal((await store.consume('k', 50, t0 + i * 1000)).allowed, true);
    const refused = await store.consume('k', 50, t0 + 50_000);
    assert.equal(refused.allowed, false);
    assert.equal(refused.resetMs, 10_000, 'the first second leaves at t0 + 60 s');
    assert.equal((await store.consume('k', 50, t0 + 60_000)).allowed, true);
    assert.equal((await store.consume('k', 50, t0 + 60_500)).allowed, false);
    assert.deepEqual(await store.peek(['k'], t0 + 61_000), [49], 'seconds 2–49 and the one at 60 s');
    assert.deepEqual(await store.peek(['k'], t0 + 200_000), [0]);
  });

  test('a limit lowered below the count waits for enough buckets to leave', async () => {
    const store = new MemoryWindowStore(MINUTE_MS);
    const t0 = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 6; i++) await store.consume('k', 10, t0 + Math.floor(i / 2) * 1000);
    // 2 requests in each of the seconds 0, 1, 2; with a limit of 3, seconds 0 and 1 must leave.
    const refused = await store.consume('k', 3, t0 + 5000);
    assert.equal(refused.resetMs, 61_000 - 5000);
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

  for (const [name, windowMs] of windows) {
    test(`matches the model (${name})`, { skip: !reachable && 'no Redis at REDIS_TEST_URL' }, async () => {
      const store = new RedisWindowStore(redis as Redis, `${prefix}${windowMs}:`, windowMs);
      for (let seed = 1; seed <= 8; seed++) await checkAgainstModel(store, seed);
    });
  }

  test('a limit lowered below the count waits for enough buckets to leave', {
    skip: !reachable && 'no Redis at REDIS_TEST_URL',
  }, async () => {
    const store = new RedisWindowStore(redis as Redis, `${prefix}lowered:`, MINUTE_MS);
    const t0 = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 6; i++) await store.consume('k', 10, t0 + Math.floor(i / 2) * 1000);
    const refused = await store.consume('k', 3, t0 + 5000);
    assert.equal(refused.resetMs, 61_000 - 5000);
    assert.deepEqual(await store.peek(['k', 'nobody'], t0 + 5000), [6, 0]);
  });

  test('concurrent requests share one script call and get what sequential ones would', {
    skip: !reachable && 'no Redis at REDIS_TEST_URL',
  }, async () => {
    const store = new RedisWindowStore(redis as Redis, `${prefix}burst:`, HOUR_MS);
    const memory = new MemoryWindowStore(HOUR_MS);
    const t0 = Date.UTC(2026, 2, 10, 12, 0, 30);
    // 10 earlier requests, then a burst of 50 at once against a limit of 30.
    for (let i = 0; i < 10; i++) {
      await store.consume('k', 30, t0 - 600_000);
      await memory.consume('k', 30, t0 - 600_000);
    }
    const calls = store.scriptCalls;
    const burst = await Promise.all(Array.from({ length: 50 }, () => store.consume('k', 30, t0)));
    assert.equal(store.scriptCalls - calls, 1, 'one script call for the whole burst');
    const sequential = [];
    for (let i = 0; i < 50; i++) sequential.push(await memory.consume('k', 30, t0));
    assert.deepEqual(burst, sequential, 'the same decisions, in arrival order, as one at a time');
    assert.equal(burst.filter((d) => d.allowed).length, 20);
    const refused = burst[49];
    assert.ok(refused && !refused.allowed);
    // The Retry-After is honest: one ms before it still refused, at it a request goes through.
    assert.equal((await store.consume('k', 30, t0 + refused.resetMs - 1)).allowed, false);
    assert.equal((await store.consume('k', 30, t0 + refused.resetMs)).allowed, true);
  });
});

test('an unreachable Redis: the node counts in memory at once, the error reported once', async () => {
  const dead = new Redis('redis://127.0.0.1:1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  const errors: unknown[] = [];
  const store = new RedisWindowStore(dead, 'x:', HOUR_MS, (error) => errors.push(error));
  try {
    const t0 = Date.UTC(2026, 0, 1);
    const first = await store.consume('k', 2, t0);
    assert.deepEqual([first.allowed, first.count], [true, 1]);
    const second = await store.consume('k', 2, t0 + 1000);
    assert.deepEqual([second.allowed, second.count], [true, 2]);
    const third = await store.consume('k', 2, t0 + 2000);
    assert.equal(third.allowed, false, 'the limit holds while Redis is away');
    assert.equal(third.resetMs, HOUR_MS - 2000, 'and says when the oldest counted request leaves');
    assert.deepEqual(await store.peek(['k', 'other'], t0 + 2000), [2, 0]);
    assert.equal(errors.length, 1, 'reported once, not per request');
  } finally {
    dead.disconnect();
  }
});
