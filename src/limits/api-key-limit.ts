/**
 * The API-key request limit (seed §8, contract §7): per key, per rolling hour, the number of the
 * workspace's plan. The route-auth hook asks for a decision once the key is recognised, states it
 * in X-RateLimit-Limit / -Remaining / -Reset on every API-key response and, beyond the limit,
 * answers 429 RATE_LIMIT_EXCEEDED with an honest Retry-After and `details {limit, period_seconds:
 * 3600}`. JWT requests are not counted. A plan whose limit is null (no limit) is counted but never
 * refused, and has no numbers to state.
 */
import type { Principal } from '../auth/principal.ts';
import type { Subscriptions } from '../billing/subscriptions.service.ts';
import type { Clock } from '../shared/clock.ts';
import { RateLimitExceededError } from '../shared/errors.ts';
import type { UsageMeter } from '../usage/usage-meter.ts';
import { HOUR_MS, type WindowStore, wholeSeconds } from './sliding-window.ts';

export const API_KEY_PERIOD_SECONDS = HOUR_MS / 1000;
const UNLIMITED = Number.MAX_SAFE_INTEGER;

type ApiKeyPrincipal = Extract<Principal, { kind: 'api_key' }>;

export interface ApiKeyLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the budget grows: when refused, the Retry-After. */
  resetSeconds: number;
}

export function apiKeyWindowKey(apiKeyId: string): string {
  return `api:${apiKeyId}`;
}

export class ApiKeyRateLimit {
  private readonly subscriptions: Subscriptions;
  private readonly store: WindowStore;
  private readonly clock: Clock;
  private readonly meter: UsageMeter;

  /** `store` must be an hour long (contract §7). */
  constructor(deps: { subscriptions: Subscriptions; store: WindowStore; clock: Clock; meter: UsageMeter }) {
    if (deps.store.windowMs !== HOUR_MS) throw new Error('The API-key limit needs an hour-long window');
    this.subscriptions = deps.subscriptions;
    this.store = deps.store;
    this.clock = deps.clock;
    this.meter = deps.meter;
  }

  /** Counts the request; undefined when the plan has no limit (nothing to state or refuse). */
  async check(principal: ApiKeyPrincipal): Promise<ApiKeyLimitDecision | undefined> {
    const nowMs = this.clock.now().getTime();
    const subscription = await this.subscriptions.current(principal.workspaceId, nowMs);
    const limit = subscription.limits.api_requests_per_hour;
    // No limit: still counted (for used_this_hour), never refused.
    const decision = await this.store.consume(apiKeyWindowKey(principal.apiKeyId), limit ?? UNLIMITED, nowMs);
    if (decision.allowed) this.meter.apiRequest(principal.workspaceId, nowMs);
    if (limit === null) return undefined;
    return {
      allowed: decision.allowed,
      limit,
      remaining: Math.max(0, limit - decision.count),
      resetSeconds: wholeSeconds(decision.resetMs, HOUR_MS),
    };
  }
}

/** The headers every limited API-key response carries (contract §7). */
export function rateLimitHeaders(decision: ApiKeyLimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetSeconds),
  };
}

export function apiKeyLimitExceeded(decision: ApiKeyLimitDecision): RateLimitExceededError {
  return new RateLimitExceededError(
    `API rate limit of ${decision.limit} requests per hour exceeded for this API key; retry in ${decision.resetSeconds} s`,
    decision.resetSeconds,
    decision.limit,
    API_KEY_PERIOD_SECONDS,
  );
}
