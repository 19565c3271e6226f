/**
 * The rolling window of `sliding-window.ts` in Redis, so that every node spends one budget: a hash
 * per key (field = absolute bucket number, value = count) updated by one Lua script, i.e. one
 * EVALSHA round trip per request (ioredis sends EVALSHA and falls back to EVAL once if the script is
 * not cached). The time comes from the caller's clock, like the memory store, so tests move a
 * ManualClock instead of sleeping; nodes' clocks must agree to within a bucket (NTP does).
 */
import type { Redis } from 'ioredis';
import type { WindowDecision, WindowShape, WindowStore } from './sliding-window.ts';

// KEYS[1] hash; ARGV: limit, now ms, bucket ms, span (buckets), cost (1 = consume, 0 = peek).
// Returns {allowed 0|1, count, resetMs}.
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
table.sort(live, function(x, y) return x[1] < y[1] end)
if cost == 0 then return {1, total, 0} end
if total >= limit then
  local left = 0
  for i = 1, #live do
    left = left + live[i][2]
    if total - left < limit then return {0, total, (live[i][1] + span) * bucketMs - now} end
  end
  return {0, total, span * bucketMs}
end
redis.call('HINCRBY', KEYS[1], current, 1)
redis.call('PEXPIRE', KEYS[1], span * bucketMs + bucketMs)
local oldest = current
if #live > 0 and live[1][1] < current then oldest = live[1][1] end
return {1, total + 1, (oldest + span) * bucketMs - now}
`;

interface WindowRedis extends Redis {
  slidingWindow(key: string, ...args: Array<string | number>): Promise<[number, number, number]>;
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

  async consume(key: string, limit: number, nowMs: number): Promise<WindowDecision> {
    try {
      const [allowed, count, resetMs] = await this.redis.slidingWindow(
        this.prefix + key,
        limit,
        nowMs,
        this.bucketMs,
        this.span,
        1,
      );
      return { allowed: allowed === 1, count, resetMs };
    } catch (error) {
      // Fail open: Redis being unreachable must not take the API down with it. The request is
      // allowed and not counted; the operator sees the warning (at most one per 10 s).
      const now = Date.now();
      if (now - this.lastWarning > 10_000) {
        this.lastWarning = now;
        this.onError(error);
      }
      return { allowed: true, count: 0, resetMs: this.span * this.bucketMs };
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
