/**
 * The rolling window of `sliding-window.ts` in Redis, so that every node spends one budget: a hash
 * per key (field = absolute bucket number, value = count) updated by one Lua script, i.e. one
 * EVALSHA round trip per request (ioredis sends EVALSHA and falls back to EVAL once if the script is
 * not cached). The time comes from the caller's clock, like the memory store, so tests move a
 * ManualClock instead of sleeping; nodes' clocks must agree to within a bucket (NTP does).
 */
import type { Redis } from 'ioredis';
import type { WindowDecision, WindowShape, WindowStore } from './sliding-window.ts';

// KEYS[1] hash; ARGV: limit, now ms, bucket ms, span (buckets), cost (requests asking at once;
// 0 = peek). Grants min(cost, room) of them. Returns {granted, count after, reset ms for the granted
// (until the oldest counted request leaves), reset ms for the refused (until a slot frees)}.
const SCRIPT = `
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local bucketMs = tonumber(ARGV[3])
local span = tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local current = math.floor(now / bucketMs)
local raw = redis.call('HGETALL', KEYS[1])
local live = {}
local total = 0
for i = 1, #raw, 2 do
  local b = tonumber(raw[i])
  if b <= current - span then
    redis.call('HDEL', KEYS[1], raw[i])
  else
    local c = tonumber(raw[i + 1])
    total = total + c
    live[#live + 1] = {b, c}
  end
end
if cost == 0 then return {0, total, 0, 0} end
local granted = math.min(cost, math.max(0, limit - total))
if granted > 0 then
  redis.call('HINCRBY', KEYS[1], current, granted)
  redis.call('PEXPIRE', KEYS[1], span * bucketMs + bucketMs)
  local merged = false
  for i = 1, #live do
    if live[i][1] == current then live[i][2] = live[i][2] + granted; merged = true end
  end
  if not merged then live[#live + 1] = {current, granted} end
  total = total + granted
end
table.sort(live, function(x, y) return x[1] < y[1] end)
local resetGranted = 0
if granted > 0 then resetGranted = (live[1][1] + span) * bucketMs - now end
local resetRefused = 0
if granted < cost then
  resetRefused = span * bucketMs
  local left = 0
  for i = 1, #live do
    left = left + live[i][2]
    if total - left < limit then resetRefused = (live[i][1] + span) * bucketMs - now; break end
  end
end
return {granted, total, resetGranted, resetRefused}
`;

interface WindowRedis extends Redis {
  slidingWindow(key: string, ...args: Array<string | number>): Promise<[number, number, number, number]>;
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
  private readonly bucketMs: number;
  private readonly span: number;

  private readonly onError: (error: unknown) => void;
  private lastWarning = 0;

  /** `redis` should be a connection of this store's own (see createRedisWindowConnection). */
  constructor(
    redis: Redis,
    prefix: string,
    shape: WindowShape,
    onError: (error: unknown) => void = () => {},
  ) {
    this.onError = onError;
    if (!('slidingWindow' in redis)) redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SCRIPT });
    this.redis = redis as WindowRedis;
    this.prefix = prefix;
    this.bucketMs = shape.bucketMs;
    this.span = Math.round(shape.windowMs / shape.bucketMs) + 1;
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
        this.prefix + batch.key,
        batch.limit,
        batch.nowMs,
        this.bucketMs,
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
      // Fail open: Redis being unreachable must not take the API down with it. The requests are
      // allowed and not counted; the operator sees the warning (at most one per 10 s).
      const now = Date.now();
      if (now - this.lastWarning > 10_000) {
        this.lastWarning = now;
        this.onError(error);
      }
      for (const resolve of batch.waiters)
        resolve({ allowed: true, count: 0, resetMs: this.span * this.bucketMs });
    }
  }

  async peek(keys: readonly string[], nowMs: number): Promise<number[]> {
    const results = await Promise.all(
      keys.map((key) => this.redis.slidingWindow(this.prefix + key, 0, nowMs, this.bucketMs, this.span, 0)),
    );
    return results.map((r) => r[1]);
  }
}

/**
 * A connection for the limiter with auto-pipelining: concurrent requests' EVALSHAs leave in one
 * write, so under load Redis sees batches instead of one packet per request.
 */
export function createRedisWindowConnection(redis: Redis): Redis {
  return redis.duplicate({ enableAutoPipelining: true });
}
