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
import { ApiKeyRateLimit } from '../limits/api-key-limit.ts';
import { createRedisWindowConnection, RedisWindowStore } from '../limits/redis-sliding-window.ts';
import { HOUR_WINDOW, MemoryWindowStore, MINUTE_WINDOW, type WindowStore } from '../limits/sliding-window.ts';
import type { Clock } from '../shared/clock.ts';
import { UsageMeter } from '../usage/usage-meter.ts';
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
  notifier: Notifier;
}): Billing {
  const { config, db, clock, logger, redis } = deps;
  const catalog = new PlanCatalog(config.plans, config.defaultPlan);
  const prefix = config.redisKeyPrefix;
  const bus = redis ? redisPlanChangeBus(redis, `${prefix}plan-changes`, logger) : localPlanChangeBus();
  const subscriptions = new Subscriptions({ db, clock, catalog, bus });
  const limiterRedis = redis ? createRedisWindowConnection(redis) : undefined;
  limiterRedis?.on('error', (error) => logger.warn({ err: error.message }, 'redis limiter connection error'));
  const failedOpen = (error: unknown) =>
    logger.warn({ err: error }, 'rate-limit store unreachable: requests are allowed uncounted');
  const apiKeyWindows: WindowStore = limiterRedis
    ? new RedisWindowStore(limiterRedis, `${prefix}rl:`, HOUR_WINDOW, failedOpen)
    : new MemoryWindowStore(HOUR_WINDOW);
  const throttle: WindowStore = limiterRedis
    ? new RedisWindowStore(limiterRedis, `${prefix}rl:`, MINUTE_WINDOW, failedOpen)
    : new MemoryWindowStore(MINUTE_WINDOW);
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
      limiterRedis?.disconnect();
    },
  };
}
