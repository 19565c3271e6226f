/**
 * Tells every node that a workspace's plan changed, so their cached limits and quota states are
 * dropped at once (contract §7: a plan change takes effect at once). Without Redis a node only hears
 * its own changes and the others converge within the cache TTL; with REDIS_URL the change travels
 * over a pub/sub channel (the pattern of src/auth/cache-invalidation.ts, on a channel of its own).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface PlanChangeBus {
  publish(workspaceId: string): void;
  subscribe(handler: (workspaceId: string) => void): void;
  /** Called when changes may have been missed (Redis was away): every cached plan is stale. */
  onResync(handler: () => void): void;
  close(): Promise<void>;
}

export const localPlanChangeBus = (): PlanChangeBus => ({
  publish: () => {},
  subscribe: () => {},
  onResync: () => {},
  close: async () => {},
});

export function redisPlanChangeBus(redis: Redis, channel: string, logger: Logger): PlanChangeBus {
  // A subscribed connection cannot run commands, hence a connection of its own.
  const subscriber = redis.duplicate();
  const handlers: Array<(workspaceId: string) => void> = [];
  subscriber.on('error', (error) =>
    logger.warn({ err: error.message }, 'redis plan-change subscriber error'),
  );
  subscriber.on('message', (_channel: string, workspaceId: string) => {
    for (const handler of handlers) handler(workspaceId);
  });
  // Changes published while this connection was down were lost: once it is back (ioredis
  // subscribes again), every cached plan is dropped (contract §0).
  const resyncs: Array<() => void> = [];
  let connectedBefore = false;
  subscriber.on('ready', () => {
    if (connectedBefore) for (const resync of resyncs) resync();
    connectedBefore = true;
  });
  const ready = subscriber.subscribe(channel).catch((error: unknown) => {
    logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'could not subscribe to plan changes',
    );
  });
  return {
    publish(workspaceId) {
      redis.publish(channel, workspaceId).catch((error: unknown) => {
        logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'could not publish a plan change',
        );
      });
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    onResync(handler) {
      resyncs.push(handler);
    },
    async close() {
      await ready;
      subscriber.disconnect();
    },
  };
}
