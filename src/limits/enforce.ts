import { RateLimitExceededError } from '../shared/errors.ts';
import type { RateLimiter } from './rate-limiter.ts';

/** Consumes one request from `key`'s budget or throws 429 RATE_LIMIT_EXCEEDED with an honest Retry-After. */
export async function enforceRateLimit(limiter: RateLimiter, key: string, what: string): Promise<void> {
  const decision = await limiter.consume(key);
  if (!decision.allowed) {
    throw new RateLimitExceededError(
      `Too many ${what}; retry in ${decision.resetSeconds} s`,
      decision.resetSeconds,
      limiter.limit,
      limiter.windowSeconds,
    );
  }
}
