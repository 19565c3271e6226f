/**
 * The API-key request limit (seed §8, contract §7): per key, per rolling hour, the number of the
 * workspace's plan. Every API-key response carries X-RateLimit-Limit / -Remaining / -Reset (seconds
 * until the budget next grows); beyond the limit 429 RATE_LIMIT_EXCEEDED with an honest
 * Retry-After and `details {limit, period_seconds: 3600}`. JWT requests are not counted. A plan
 * whose limit is null (no limit) is counted but never refused, and sends no X-RateLimit headers.
 *
 * Called from the route-auth hook once the principal is known. With the memory store and a cached
 * subscription the whole check is synchronous: no promise, no await on the hot path.
 */
import type { FastifyReply } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { Subscription, Subscriptions } from '../billing/subscriptions.service.ts';
import type { Clock } from '../shared/clock.ts';
import { RateLimitExceededError } from '../shared/errors.ts';
import type { UsageMeter } from '../usage/usage-meter.ts';
import type { WindowDecision, WindowStore } from './sliding-window.ts';

export const API_KEY_PERIOD_SECONDS = 3600;
const UNLIMITED = Number.MAX_SAFE_INTEGER;

type ApiKeyPrincipal = Extract<Principal, { kind: 'api_key' }>;

export function apiKeyWindowKey(apiKeyId: string): string {
  return `api:${apiKeyId}`;
}

export class ApiKeyRateLimit {
  private readonly subscriptions: Subscriptions;
  private readonly store: WindowStore;
  private readonly clock: Clock;
  private readonly meter: UsageMeter;

  constructor(deps: { subscriptions: Subscriptions; store: WindowStore; clock: Clock; meter: UsageMeter }) {
    this.subscriptions = deps.subscriptions;
    this.store = deps.store;
    this.clock = deps.clock;
    this.meter = deps.meter;
  }

  /** Counts the request; undefined when decided synchronously, else a promise to await. */
  apply(principal: ApiKeyPrincipal, reply: FastifyReply): Promise<void> | undefined {
    const nowMs = this.clock.now().getTime();
    const subscription = this.subscriptions.current(principal.workspaceId, nowMs);
    if (subscription instanceof Promise)
      return subscription.then((s) => this.withSubscription(principal, reply, s, nowMs));
    return this.withSubscription(principal, reply, subscription, nowMs);
  }

  private withSubscription(
    principal: ApiKeyPrincipal,
    reply: FastifyReply,
    subscription: Subscription,
    nowMs: number,
  ): Promise<void> | undefined {
    // No limit: still counted (for used_this_hour), never refused, no headers.
    const limit = subscription.limits.api_requests_per_hour ?? UNLIMITED;
    const decision = this.store.consume(apiKeyWindowKey(principal.apiKeyId), limit, nowMs);
    if (decision instanceof Promise)
      return decision.then((d) => this.decide(principal, reply, limit, nowMs, d));
    this.decide(principal, reply, limit, nowMs, decision);
    return undefined;
  }

  private decide(
    principal: ApiKeyPrincipal,
    reply: FastifyReply,
    limit: number,
    nowMs: number,
    decision: WindowDecision,
  ): void {
    if (limit === UNLIMITED) {
      this.meter.apiRequest(principal.workspaceId, nowMs);
      return;
    }
    const resetSeconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
    // Lower-case names and string values: Fastify lower-cases every name it is given and Node
    // validates every value as text, which for three mixed-case names and numeric values cost
    // about 3 µs a request, the largest item an API key adds to a request (ADR 012).
    reply.header('x-ratelimit-limit', String(limit));
    reply.header('x-ratelimit-remaining', String(Math.max(0, limit - decision.count)));
    reply.header('x-ratelimit-reset', String(resetSeconds));
    if (!decision.allowed) {
      throw new RateLimitExceededError(
        `API rate limit of ${limit} requests per hour exceeded for this API key; retry in ${resetSeconds} s`,
        resetSeconds,
        limit,
        API_KEY_PERIOD_SECONDS,
      );
    }
    this.meter.apiRequest(principal.workspaceId, nowMs);
  }
}
