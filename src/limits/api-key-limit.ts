/**
 * The API-key request limit (seed §8, contract §7): per key, per rolling hour, the number of the
 * workspace's plan (billing/api-key-rate-limit.ts decides). The route-auth hook asks for a decision
 * once the key is recognised, states it in X-RateLimit-Limit / -Remaining / -Reset on every API-key
 * response and, beyond the limit, answers 429 RATE_LIMIT_EXCEEDED with an honest Retry-After and
 * `details {limit, period_seconds: 3600}`. JWT requests are not counted. A plan whose limit is null
 * (no limit) is counted but never refused, and has no numbers to state.
 */
import { RateLimitExceededError } from '../shared/errors.ts';
import { HOUR_MS } from './sliding-window.ts';

export const API_KEY_PERIOD_SECONDS = HOUR_MS / 1000;

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

/**
 * What the route-auth hook asks once it recognises an API key: count this request and say what to
 * state or refuse (undefined when the plan has no limit). Answered by billing/api-key-rate-limit.ts
 * from the workspace's plan.
 */
export interface ApiKeyLimit {
  check(key: { apiKeyId: string; workspaceId: string }): Promise<ApiKeyLimitDecision | undefined>;
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
    `API rate limit of ${decision.limit} requests per hour exceeded for this API key (or device token); retry in ${decision.resetSeconds} s`,
    decision.resetSeconds,
    decision.limit,
    API_KEY_PERIOD_SECONDS,
  );
}
