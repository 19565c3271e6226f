/**
 * Tells every node to drop cached auth state when it changes somewhere (logout, reset, revoked
 * key or device token, membership change). Without Redis the bus is local only and other nodes
 * converge within the caches' TTL (5 s; device tokens 60 s); with `REDIS_URL` invalidations travel over a Redis pub/sub channel and take
 * effect on every node within a round trip.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export type Invalidation =
  | { kind: 'session'; id: string }
  | { kind: 'user'; id: string }
  | { kind: 'all_sessions' }
  | { kind: 'api_keys' }
  /** One device's tokens (revoked, or the device deleted: ADR 021). */
  | { kind: 'device'; id: string }
  | { kind: 'device_tokens' };

export interface InvalidationBus {
  publish(message: Invalidation): void;
  subscribe(handler: (message: Invalidation) => void): void;
  close(): Promise<void>;
}

export const localInvalidationBus = (): InvalidationBus => ({
  publish: () => {},
  subscribe: () => {},
  close: async () => {},
});

const CHANNEL = 'geofence:auth-invalidation';

/** What a node drops when it may have missed invalidations: every session and every API key. */
const RESYNC: readonly Invalidation[] = [
  { kind: 'all_sessions' },
  { kind: 'api_keys' },
  { kind: 'device_tokens' },
];

function isInvalidation(value: unknown): value is Invalidation {
  if (typeof value !== 'object' || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  const id = (value as { id?: unknown }).id;
  if (kind === 'session' || kind === 'user' || kind === 'device') return typeof id === 'string';
  return kind === 'all_sessions' || kind === 'api_keys' || kind === 'device_tokens';
}

/** Pub/sub needs a connection of its own: a subscribed Redis connection cannot run commands. */
export function redisInvalidationBus(redis: Redis, logger: Logger): InvalidationBus {
  const subscriber = redis.duplicate();
  const origin = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  const handlers: Array<(message: Invalidation) => void> = [];
  subscriber.on('error', (error) => logger.warn({ err: error.message }, 'redis subscriber error'));
  // Invalidations published while this connection was down were lost: once it is back (ioredis
  // subscribes again), every cached credential is dropped and read afresh (contract §0).
  let connectedBefore = false;
  subscriber.on('ready', () => {
    if (connectedBefore) {
      logger.info('auth invalidations: redis is back; auth caches dropped');
      for (const handler of handlers) for (const message of RESYNC) handler(message);
    }
    connectedBefore = true;
  });
  subscriber.on('message', (_channel: string, raw: string) => {
    try {
      const parsed = JSON.parse(raw) as { origin?: string; message?: unknown };
      if (parsed.origin === origin || !isInvalidation(parsed.message)) return;
      for (const handler of handlers) handler(parsed.message);
    } catch {
      logger.warn('ignored a malformed auth invalidation message');
    }
  });
  const ready = subscriber.subscribe(CHANNEL).catch((error: unknown) => {
    logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'could not subscribe to auth invalidations',
    );
  });
  return {
    publish(message) {
      redis.publish(CHANNEL, JSON.stringify({ origin, message })).catch((error: unknown) => {
        logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'could not publish an auth invalidation',
        );
      });
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    async close() {
      await ready;
      subscriber.disconnect();
    },
  };
}
