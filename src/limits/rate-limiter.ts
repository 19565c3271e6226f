/**
 * Fixed-window request limits (login per IP, refresh per user; seed §8) behind a small interface,
 * with counters in process memory or, when REDIS_URL is set, in Redis so that every node shares
 * one budget. Both stores come from `rate-limiter-flexible`.
 */
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (also the honest Retry-After when refused). */
  resetSeconds: number;
}

export interface RateLimiter {
  readonly limit: number;
  readonly windowSeconds: number;
  consume(key: string): Promise<RateLimitDecision>;
}

export interface RateLimiterOptions {
  name: string;
  points: number;
  durationSeconds: number;
  redis?: Redis | undefined;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const common = {
    keyPrefix: `rl:${options.name}`,
    points: options.points,
    duration: options.durationSeconds,
  };
  const store = options.redis
    ? new RateLimiterRedis({ ...common, storeClient: options.redis })
    : new RateLimiterMemory(common);
  const decide = (res: RateLimiterRes, allowed: boolean): RateLimitDecision => ({
    allowed,
    limit: options.points,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  });
  return {
    limit: options.points,
    windowSeconds: options.durationSeconds,
    async consume(key) {
      try {
        return decide(await store.consume(key), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decide(rejection, false);
        throw rejection;
      }
    },
  };
}
