/** For tests that need a real Redis: reachability, and a key prefix per test run. */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

/** Whether a Redis answers PING at `url` (the benchmarks ask about theirs too). */
export async function redisReachable(url: string = REDIS_URL): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** A prefix no other test run uses, so parallel runs never share counters. */
export function uniquePrefix(label: string): string {
  return `test:${label}:${randomBytes(6).toString('hex')}:`;
}

/** Deletes every key under the prefix. */
export async function dropPrefix(prefix: string, url: string = REDIS_URL): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
