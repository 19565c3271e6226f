/** GET /subscriptions/usage (contract §7): this period's usage against the plan's limits. */
import { listActiveApiKeyIds } from '../auth/api-keys.repository.ts';
import type { Db } from '../db/database.ts';
import { apiKeyWindowKey } from '../limits/api-key-limit.ts';
import type { WindowStore } from '../limits/sliding-window.ts';
import type { Clock } from '../shared/clock.ts';
import { eventUsage } from '../usage/usage.repository.ts';
import { dailyUsage } from '../usage/usage-daily.repository.ts';
import type { UsageMeter } from '../usage/usage-meter.ts';
import { daysOf, periodOf } from './period.ts';
import { countResources } from './subscriptions.repository.ts';
import type { Subscriptions } from './subscriptions.service.ts';

export interface UsageContext {
  db: Db;
  clock: Clock;
  subscriptions: Subscriptions;
  meter: UsageMeter;
  apiKeyWindows: WindowStore;
}

export interface UsageReport {
  period_start: string;
  period_end: string;
  events: { used: number; quota: number | null; percent: number | null };
  api_requests: { used_this_hour: number; limit: number | null };
  geofences: { count: number; limit: number | null };
  webhooks: { count: number; limit: number | null };
  devices: { count: number; limit: number | null };
  daily: Array<{ date: string; events: number; api_requests: number }>;
}

export async function usageReport(ctx: UsageContext, workspaceId: string): Promise<UsageReport> {
  const now = ctx.clock.now();
  const period = periodOf(now);
  const subscription = await ctx.subscriptions.current(workspaceId);
  const { limits } = subscription;
  const days = daysOf(period, now);
  const [used, geofences, webhooks, devices, keyIds, stored] = await Promise.all([
    eventUsage(ctx.db, workspaceId, period.id),
    countResources(ctx.db, workspaceId, 'geofences'),
    countResources(ctx.db, workspaceId, 'webhooks'),
    countResources(ctx.db, workspaceId, 'devices'),
    listActiveApiKeyIds(ctx.db, workspaceId),
    dailyUsage(ctx.db, workspaceId, days[0] ?? '', days[days.length - 1] ?? ''),
  ]);
  // The hour's requests are the sum of the workspace's keys' rolling windows (limits are per key).
  const perKey = await ctx.apiKeyWindows.peek(keyIds.map(apiKeyWindowKey), now.getTime());
  const unflushed = ctx.meter.unflushed(workspaceId);
  const quota = limits.events_per_month;
  return {
    period_start: period.start.toISOString(),
    period_end: period.end.toISOString(),
    events: {
      used,
      quota,
      percent: quota === null ? null : quota === 0 ? 100 : Math.round((used * 10_000) / quota) / 100,
    },
    api_requests: { used_this_hour: perKey.reduce((a, b) => a + b, 0), limit: limits.api_requests_per_hour },
    geofences: { count: geofences, limit: limits.geofences },
    webhooks: { count: webhooks, limit: limits.webhooks },
    devices: { count: devices, limit: limits.devices },
    daily: days.map((date) => {
      const a = stored.get(date);
      const b = unflushed.get(date);
      return {
        date,
        events: (a?.events ?? 0) + (b?.events ?? 0),
        api_requests: (a?.apiRequests ?? 0) + (b?.apiRequests ?? 0),
      };
    }),
  };
}
