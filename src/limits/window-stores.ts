/**
 * Makes the rolling-window stores of every limiter (API keys, the ingestion throttle, login,
 * refresh): in process memory, or in Redis when REDIS_URL is set, all on one connection of their
 * own with auto-pipelining, so concurrent requests' script calls leave in one write. While Redis is
 * unreachable the node's memory counts (contract §0).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisWindowStore } from './redis-sliding-window.ts';
import { MemoryWindowStore, type WindowStore } from './sliding-window.ts';

/** A limiter's answer never waits on Redis longer than this; then the node's memory answers. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

export interface WindowStores {
  /** A store whose window is `windowMs` long; keys of different limiters must not collide. */
  create(windowMs: number): WindowStore;
  /**
   * Resolves once the Redis connection is ready, or after `timeoutMs` (Redis down at start): a
   * node that starts beside a working Redis counts in it from its first request.
   */
  ready(timeoutMs: number): Promise<void>;
  close(): void;
}

export function createWindowStores(deps: {
  redis: Redis | undefined;
  keyPrefix: string;
  logger: Pick<Logger, 'warn'>;
}): WindowStores {
  const { logger } = deps;
  // No offline queue and a short command timeout: while Redis is away a request is counted in
  // memory at once instead of waiting for a reconnect (contract §0; redis-sliding-window.ts).
  const connection = deps.redis?.duplicate({
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  });
  connection?.on('error', (error) => logger.warn({ err: error.message }, 'redis limiter connection error'));
  const failedOpen = (error: unknown) =>
    logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'rate-limit store unreachable: limits count in this node’s memory until Redis answers',
    );
  return {
    create: (windowMs) =>
      connection
        ? new RedisWindowStore(connection, `${deps.keyPrefix}rl:`, windowMs, failedOpen)
        : new MemoryWindowStore(windowMs),
    ready: async (timeoutMs) => {
      if (!connection || connection.status === 'ready') return;
      // Not events.once: it would reject on the `error` events of a Redis that is down.
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          connection.off('ready', done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        connection.on('ready', done);
      });
    },
    close: () => connection?.disconnect(),
  };
}
