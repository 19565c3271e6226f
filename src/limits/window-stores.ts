/**
 * Makes the rolling-window stores of every limiter (API keys, the ingestion throttle, login,
 * refresh): in process memory, or in Redis when REDIS_URL is set, all on one connection of their
 * own with auto-pipelining, so concurrent requests' script calls leave in one write.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisWindowStore } from './redis-sliding-window.ts';
import { MemoryWindowStore, type WindowStore } from './sliding-window.ts';

export interface WindowStores {
  /** A store whose window is `windowMs` long; keys of different limiters must not collide. */
  create(windowMs: number): WindowStore;
  close(): void;
}

export function createWindowStores(deps: {
  redis: Redis | undefined;
  keyPrefix: string;
  logger: Pick<Logger, 'warn'>;
}): WindowStores {
  const { logger } = deps;
  const connection = deps.redis?.duplicate({ enableAutoPipelining: true });
  connection?.on('error', (error) => logger.warn({ err: error.message }, 'redis limiter connection error'));
  const failedOpen = (error: unknown) =>
    logger.warn({ err: error }, 'rate-limit store unreachable: requests are allowed uncounted');
  return {
    create: (windowMs) =>
      connection
        ? new RedisWindowStore(connection, `${deps.keyPrefix}rl:`, windowMs, failedOpen)
        : new MemoryWindowStore(windowMs),
    close: () => connection?.disconnect(),
  };
}
