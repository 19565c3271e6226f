/**
 * Everything plans, limits and usage need, built once by the composition root (src/deps.ts):
 * the plan catalog, cached subscriptions, the API-key limiter, the event quota gate and the usage
 * meter. Counters live in memory, or in Redis when REDIS_URL is set so every node shares them.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Notifier } from '../account/notifier.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { HOUR_MS, MINUTE_MS, type WindowStore } from '../limits/sliding-window.ts';
import type { WindowStores } from '../limits/window-stores.ts';
import type { Clock } from '../shared/clock.ts';
import { UsageMeter } from '../usage/usage-meter.ts';
import { ApiKeyRateLimit } from './api-key-rate-limit.ts';
import { type CountLimiter, countLimiter } from './count-limits.ts';
import { EventQuota } from './event-quota.ts';
import { localPlanChangeBus, redisPlanChangeBus } from './plan-change-bus.ts';
import { PlanCatalog } from './plans.ts';
import { QuotaNotifications } from './quota-notifications.ts';
import { Subscriptions } from './subscriptions.service.ts';

export interface Billing {
  catalog: PlanCatalog;
  subscriptions: Subscriptions;
  /** undefined when API_KEY_RATE_LIMITS=false (benchmark baseline only). */
  apiKeyLimit: ApiKeyRateLimit | undefined;
  apiKeyWindows: WindowStore;
  eventQuota: EventQuota;
  meter: UsageMeter;
  countLimit: CountLimiter;
  close(): Promise<void>;
}

export function createBilling(deps: {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  redis: Redis | undefined;
  /** Where the rolling windows live (memory, or Redis shared by the nodes). */
  windows: WindowStores;
  notifier: Notifier;
}): Billing {
  const { config, db, clock, logger, redis, windows } = deps;
  const catalog = new PlanCatalog(config.plans, config.defaultPlan);
  const prefix = config.redisKeyPrefix;
  const bus = redis ? redisPlanChangeBus(redis, `${prefix}plan-changes`, logger) : localPlanChangeBus();
  const subscriptions = new Subscriptions({ db, clock, catalog, bus });
  const apiKeyWindows = windows.create(HOUR_MS);
  const throttle = windows.create(MINUTE_MS);
  const meter = new UsageMeter({ db, clock });
  const notifications = new QuotaNotifications({ db, clock, notifier: deps.notifier });
  return {
    catalog,
    subscriptions,
    apiKeyLimit: config.apiKeyRateLimits
      ? new ApiKeyRateLimit({ subscriptions, store: apiKeyWindows, clock, meter })
      : undefined,
    apiKeyWindows,
    eventQuota: new EventQuota({ logger, db, clock, subscriptions, throttle, meter, notifications }),
    meter,
    countLimit: countLimiter(subscriptions),
    close: async () => {
      await meter
        .flush()
        .catch((error: unknown) => logger.warn({ err: error }, 'could not flush usage counters'));
      await bus.close();
    },
  };
}
