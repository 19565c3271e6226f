/**
 * Per-caller request limits of the identity routes (login per client IP, refresh per user; seed §8,
 * contract §7): a rolling window of `sliding-window.ts` over the service's clock, in process memory
 * or, when REDIS_URL is set, in Redis so that every node spends one budget.
 */
import type { Clock } from '../shared/clock.ts';
import { type WindowStore, wholeSeconds } from './sliding-window.ts';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the budget grows (the honest Retry-After when refused). */
  resetSeconds: number;
}

export class RateLimiter {
  readonly limit: number;
  readonly windowSeconds: number;
  private readonly name: string;
  private readonly store: WindowStore;
  private readonly clock: Clock;

  /** `store`'s window is the limit's period; `name` keeps this limiter's keys apart from others'. */
  constructor(options: { name: string; limit: number; store: WindowStore; clock: Clock }) {
    this.name = options.name;
    this.limit = options.limit;
    this.store = options.store;
    this.clock = options.clock;
    this.windowSeconds = options.store.windowMs / 1000;
  }

  async consume(key: string): Promise<RateLimitDecision> {
    const decision = await this.store.consume(`${this.name}:${key}`, this.limit, this.clock.now().getTime());
    return {
      allowed: decision.allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - decision.count),
      resetSeconds: wholeSeconds(decision.resetMs, this.store.windowMs),
    };
  }
}
