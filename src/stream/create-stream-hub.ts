/**
 * The stream hub of one process, with the transport its deployment calls for (ADR 016): Redis
 * pub/sub when REDIS_URL is set, else LISTEN/NOTIFY on PostgreSQL, else none (SQLite without Redis
 * is one node: in-process delivery only).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { PostgresStreamTransport } from './postgres-transport.ts';
import { RedisStreamTransport } from './redis-transport.ts';
import { LiveStreamHub } from './stream-hub.ts';

export async function createStreamHub(deps: {
  config: Config;
  database: DatabaseHandle;
  redis: Redis | undefined;
  logger: Logger;
}): Promise<LiveStreamHub> {
  const { config, database, redis, logger } = deps;
  if (redis) {
    // Not awaited: a Redis that is down must not keep the service from starting (its other uses
    // fail open too); the subscription is made as soon as Redis answers.
    const transport = new RedisStreamTransport({ redis, keyPrefix: config.redisKeyPrefix, logger });
    return new LiveStreamHub({ transport, logger });
  }
  if (config.database.kind === 'postgres') {
    const transport = new PostgresStreamTransport({
      url: config.database.url,
      schema: database.schema,
      logger,
    });
    const hub = new LiveStreamHub({ transport, logger });
    // Listening before the first request, so this node hears interests from the start.
    await transport.start();
    return hub;
  }
  return new LiveStreamHub({ logger });
}
