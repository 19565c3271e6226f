/**
 * The rolling window of `sliding-window.ts` in Redis, so that every node spends one budget. Per
 * limiter key two Redis keys: `<key>:n`, a hash of counts (field = absolute second, plus `total`),
 * and `<key>:t`, the same seconds in a sorted set so the ones a whole window old are found without
 * reading the rest. One Lua script updates both atomically. The time comes from the caller's clock,
 * like the memory store, so tests move a ManualClock instead of sleeping; nodes' clocks must agree
 * to well within a second (NTP does).
 *
 * While Redis cannot be reached (contract §0: a Redis outage costs no request), each call that
 * fails is answered by a fallback store in this node's memory: limits still hold, per node. The
 * limiters' connection (window-stores.ts) has no offline queue and a short command timeout, so a
 * call fails at once while it is disconnected instead of waiting for a reconnect.
 */
import type { Redis } from 'ioredis';
import {
  BUCKET_MS,
  bucketsIn,
  MemoryWindowStore,
  type WindowDecision,
  type WindowStore,
} from './sliding-window.ts';

// KEYS[1] counts hash, KEYS[2] sorted set of its seconds; ARGV: limit, now ms, bucket ms, span
// (buckets in the window), cost (requests asking at once; 0 = peek). Grants min(cost, room) of them.
// Returns {granted, count after, reset ms for the granted (until the oldest counted request leaves),
// reset ms for the refused (until a slot frees)}.
const SCRIPT = `
local counts, order = KEYS[1], KEYS[2]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local bucketMs = tonumber(ARGV[3])
local span = tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local current = math.floor(now / bucketMs)
local cutoff = current - span
local total = tonumber(redis.call('HGET', counts, 'total') or '0')
local gone = redis.call('ZRANGEBYSCORE', order, '-inf', cutoff)
if #gone > 0 then
  for first = 1, #gone, 500 do
    local chunk = {}
    for i = first, math.min(first + 499, #gone) do chunk[#chunk + 1] = gone[i] end
    local values = redis.call('HMGET', counts, unpack(chunk))
    for i = 1, #values do total = total - (tonumber(values[i]) or 0) end
    redis.call('HDEL', counts, unpack(chunk))
  end
  redis.call('ZREMRANGEBYSCORE', order, '-inf', cutoff)
  redis.call('HSET', counts, 'total', total)
end
if cost == 0 then return {0, total, 0, 0} end
local granted = math.min(cost, math.max(0, limit - total))
if granted > 0 then
  redis.call('HINCRBY', counts, current, granted)
  redis.call('ZADD', order, current, current)
  total = total + granted
  redis.call('HSET', counts, 'total', total)
  local ttl = (span + 1) * bucketMs
  redis.call('PEXPIRE', counts, ttl)
  redis.call('PEXPIRE', order, ttl)
end
local resetGranted = 0
if granted > 0 then
  local oldest = redis.call('ZRANGE', order, 0, 0)
  resetGranted = (tonumber(oldest[1]) + span) * bucketMs - now
end
local resetRefused = 0
if granted < cost then
  resetRefused = span * bucketMs
  -- Every bucket holds at least one request, so the first (total - limit + 1) are enough to walk.
  local oldest = redis.call('ZRANGE', order, 0, math.max(0, total - limit))
  if #oldest > 0 then
    local values = redis.call('HMGET', counts, unpack(oldest))
    local left = 0
    for i = 1, #oldest do
      left = left + (tonumber(values[i]) or 0)
      if total - left < limit then resetRefused = (tonumber(oldest[i]) + span) * bucketMs - now; break end
    end
  end
end
return {granted, total, resetGranted, resetRefused}
`;

interface WindowRedis extends Redis {
  slidingWindow(
    counts: string,
    order: string,
    ...args: Array<string | number>
  ): Promise<[number, number, number, number]>;
}

/** Requests for one key and limit that arrived in the same event-loop turn. */
interface PendingBatch {
  key: string;
  limit: number;
  nowMs: number;
  waiters: Array<(decision: WindowDecision) => void>;
}

export class RedisWindowStore implements WindowStore {
  private readonly redis: WindowRedis;
  private readonly prefix: string;
  readonly windowMs: number;
  private readonly span: number;

  private readonly onError: (error: unknown) => void;
  private readonly fallback: WindowStore;
  private lastWarning = 0;

  /**
   * `redis` should be a connection of the limiters' own (see window-stores.ts); `fallback` counts
   * while it is not connected.
   */
  constructor(
    redis: Redis,
    prefix: string,
    windowMs: number,
    onError: (error: unknown) => void = () => {},
    fallback: WindowStore = new MemoryWindowStore(windowMs),
  ) {
    this.onError = onError;
    this.fallback = fallback;
    if (!('slidingWindow' in redis)) redis.defineCommand('slidingWindow', { numberOfKeys: 2, lua: SCRIPT });
    this.redis = redis as WindowRedis;
    this.prefix = prefix;
    this.windowMs = windowMs;
    this.span = bucketsIn(windowMs);
  }

  /** Script calls made (each answers a whole batch); tests read it to see the coalescing. */
  scriptCalls = 0;
  private pending = new Map<string, PendingBatch>();

  /**
   * Concurrent requests for one key are answered by one script call: they are gathered until the
   * end of the current event-loop turn (setImmediate) and the script grants as many as there is
   * room for, in arrival order. The budget stays exact across nodes (the script is atomic); only
   * the Redis round trips and their CPU are shared out.
   */
  consume(key: string, limit: number, nowMs: number): Promise<WindowDecision> {
    const batchKey = `${limit}|${key}`;
    let batch = this.pending.get(batchKey);
    if (!batch) {
      batch = { key, limit, nowMs, waiters: [] };
      this.pending.set(batchKey, batch);
      const scheduled = batch;
      setImmediate(() => {
        this.pending.delete(batchKey);
        void this.flush(scheduled);
      });
    }
    batch.nowMs = Math.max(batch.nowMs, nowMs);
    const waiters = batch.waiters;
    return new Promise((resolve) => waiters.push(resolve));
  }

  private async flush(batch: PendingBatch): Promise<void> {
    const cost = batch.waiters.length;
    try {
      this.scriptCalls += 1;
      const [granted, total, resetGranted, resetRefused] = await this.redis.slidingWindow(
        ...this.keysOf(batch.key),
        batch.limit,
        batch.nowMs,
        BUCKET_MS,
        this.span,
        cost,
      );
      const before = total - granted;
      batch.waiters.forEach((resolve, i) => {
        resolve(
          i < granted
            ? { allowed: true, count: before + i + 1, resetMs: resetGranted }
            : { allowed: false, count: total, resetMs: resetRefused },
        );
      });
    } catch (error) {
      this.answerLocally(batch, error);
    }
  }

  /**
   * Redis being unreachable must not take the API down with it: the node's own memory counts
   * meanwhile (what it counted is not carried over when Redis returns). The operator sees a
   * warning, at most one per 10 s.
   */
  private answerLocally(batch: PendingBatch, error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning > 10_000) {
      this.lastWarning = now;
      this.onError(error);
    }
    for (const resolve of batch.waiters) {
      this.fallback
        .consume(batch.key, batch.limit, batch.nowMs)
        .then(resolve, () => resolve({ allowed: true, count: 0, resetMs: this.windowMs }));
    }
  }

  async peek(keys: readonly string[], nowMs: number): Promise<number[]> {
    try {
      const results = await Promise.all(
        keys.map((key) => this.redis.slidingWindow(...this.keysOf(key), 0, nowMs, BUCKET_MS, this.span, 0)),
      );
      return results.map((r) => r[1]);
    } catch {
      return this.fallback.peek(keys, nowMs);
    }
  }

  /** Both keys of one limiter key, hash-tagged so that a Redis cluster keeps them in one slot. */
  private keysOf(key: string): [counts: string, order: string] {
    return [`${this.prefix}{${key}}:n`, `${this.prefix}{${key}}:t`];
  }
}
