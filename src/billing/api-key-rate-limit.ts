/**
 * The plan's side of the API-key request limit (seed §8, contract §7, limits/api-key-limit.ts): each
 * request of a recognised key is counted in the key's hour-long window against the number of the
 * workspace's plan, and metered as an API request when it is let through.
 */
import { type ApiKeyLimit, type ApiKeyLimitDecision, apiKeyWindowKey } from '../limits/api-key-limit.ts';
import { HOUR_MS, type WindowStore, wholeSeconds } from '../limits/sliding-window.ts';
import type { Clock } from '../shared/clock.ts';
import type { UsageMeter } from '../usage/usage-meter.ts';
import type { Subscriptions } from './subscriptions.service.ts';

const UNLIMITED = Number.MAX_SAFE_INTEGER;

export class ApiKeyRateLimit implements ApiKeyLimit {
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
  async check(key: { apiKeyId: string; workspaceId: string }): Promise<ApiKeyLimitDecision | undefined> {
    const nowMs = this.clock.now().getTime();
    const subscription = await this.subscriptions.current(key.workspaceId, nowMs);
    const limit = subscription.limits.api_requests_per_hour;
    // No limit: still counted (for used_this_hour), never refused.
    const decision = await this.store.consume(apiKeyWindowKey(key.apiKeyId), limit ?? UNLIMITED, nowMs);
    if (decision.allowed) this.meter.apiRequest(key.workspaceId, nowMs);
    if (limit === null) return undefined;
    return {
      allowed: decision.allowed,
      limit,
      remaining: Math.max(0, limit - decision.count),
      resetSeconds: wholeSeconds(decision.resetMs, HOUR_MS),
    };
  }
}
