/**
 * GET /webhooks/{webhook_id}/health (contract §5 "Operating deliveries", ADR 018): success rate,
 * latency percentiles, the last failure and the current run of failures over the webhook's
 * attempts in a window. Percentiles are computed here over a bounded read, so both databases give
 * the same answer (neither's percentile function is used).
 */
import { NotFoundError } from '../shared/errors.ts';
import { findWebhookSummary } from './deliveries.repository.ts';
import type { DeliveriesContext } from './deliveries.service.ts';
import {
  countAttempts,
  type HealthWindow,
  lastFailure,
  recentAttempts,
} from './delivery-health.repository.ts';

const HOUR_MS = 3_600_000;
export const HEALTH_WINDOWS = { '1h': HOUR_MS, '6h': 6 * HOUR_MS, '24h': 24 * HOUR_MS, '7d': 168 * HOUR_MS };
export type HealthWindowName = keyof typeof HEALTH_WINDOWS;
/** Percentiles and the run of failures are read from at most this many of the newest attempts. */
export const HEALTH_SAMPLE = 10_000;
/**
 * Attempts are found through their deliveries: those created at most this long before the window
 * opens. Far beyond the default retry schedule (13 h 45 min from first to last attempt).
 */
export const HEALTH_LOOKBACK_MS = 168 * HOUR_MS;

export interface WebhookHealth {
  window: HealthWindowName;
  attempts: number;
  /** Successful attempts / attempts; null when there was no attempt. */
  successRate: number | null;
  p50Ms: number | null;
  p95Ms: number | null;
  lastFailureAt: Date | null;
  lastFailureMessage: string | null;
  consecutiveFailures: number;
}

/** Nearest-rank percentile (the smallest value with at least p of the values at or below it). */
export function percentile(sortedAscending: readonly number[], p: number): number | null {
  if (sortedAscending.length === 0) return null;
  const rank = Math.max(1, Math.ceil(p * sortedAscending.length));
  return sortedAscending[rank - 1] ?? null;
}

export async function webhookHealth(
  ctx: DeliveriesContext,
  workspaceId: string,
  webhookId: string,
  window: HealthWindowName,
): Promise<WebhookHealth> {
  if (!(await findWebhookSummary(ctx.db, workspaceId, webhookId))) throw new NotFoundError('Webhook');
  const until = ctx.clock.now();
  const since = new Date(until.getTime() - HEALTH_WINDOWS[window]);
  const w: HealthWindow = {
    workspaceId,
    webhookId,
    since,
    until,
    createdSince: new Date(since.getTime() - HEALTH_LOOKBACK_MS),
  };
  const [counts, recent, failure] = await Promise.all([
    countAttempts(ctx.db, w),
    recentAttempts(ctx.db, w, HEALTH_SAMPLE),
    lastFailure(ctx.db, w),
  ]);
  const durations = recent.map((a) => a.durationMs).sort((a, b) => a - b);
  const run = recent.findIndex((a) => a.success);
  return {
    window,
    attempts: counts.attempts,
    successRate: counts.attempts === 0 ? null : counts.successes / counts.attempts,
    p50Ms: percentile(durations, 0.5),
    p95Ms: percentile(durations, 0.95),
    lastFailureAt: failure?.startedAt ?? null,
    lastFailureMessage: failure ? (failure.errorMessage ?? `HTTP ${failure.responseStatusCode}`) : null,
    consecutiveFailures: run === -1 ? recent.length : run,
  };
}
