/**
 * Count limits (contract §7): creating a geofence, webhook or device beyond the plan's number
 * → 403 QUOTA_EXCEEDED, exactly, however many creates race on however many nodes (ADR 011):
 * - `countLimit(workspaceId, resource, create)` reads the plan's limit (cached subscriptions: on
 *   SQLite a read through the pool during the transaction would wait for the one connection that
 *   transaction holds) and runs `create`, which opens the creating transaction; this process runs
 *   one create per workspace and resource at a time, the others wait in memory rather than each
 *   holding a pool connection while it waits for the database's lock;
 * - inside that transaction, first, `admitCreates` (or `placesLeft` for a batch taking what fits)
 *   takes the workspace's lock for the resource, held until commit, and counts under it, so the
 *   count is the one the insert adds to, whichever node the other creates run on.
 */
import type { DialectCapabilities } from '../db/database.ts';
import type { Trx } from '../db/transaction.ts';
import { QuotaExceededError } from '../shared/errors.ts';
import { KeyedQueue } from '../shared/keyed-queue.ts';
import { type CountedResource, countResources, lockCountedResource } from './subscriptions.repository.ts';
import type { Subscriptions } from './subscriptions.service.ts';

const SINGULAR: Record<CountedResource, string> = {
  geofences: 'geofence',
  webhooks: 'webhook',
  devices: 'device',
};

/** A workspace's limit for one resource, as read before the creating transaction. */
export interface CountLimit {
  workspaceId: string;
  resource: CountedResource;
  limit: number;
  planName: string;
}

/**
 * Runs `create` with the limit the plan sets, or with undefined when it sets none (then nothing is
 * queued, locked or counted). `create` opens the creating transaction and passes the limit to
 * `admitCreates` or `placesLeft` first thing in it.
 */
export type CountLimiter = <T>(
  workspaceId: string,
  resource: CountedResource,
  create: (limit: CountLimit | undefined) => Promise<T>,
) => Promise<T>;

/** For contexts built without billing (unit tests, tools): no limit. */
export const NO_COUNT_LIMIT: CountLimiter = (_workspaceId, _resource, create) => create(undefined);

export function countLimiter(subscriptions: Subscriptions): CountLimiter {
  const queue = new KeyedQueue<string>();
  return async (workspaceId, resource, create) => {
    const subscription = await subscriptions.current(workspaceId);
    const limit = subscription.limits[resource];
    if (limit === null) return create(undefined);
    const countLimit: CountLimit = { workspaceId, resource, limit, planName: subscription.plan.name };
    return queue.run(`${resource}:${workspaceId}`, () => create(countLimit));
  };
}

/** The refusal of a create that finds `count` rows. */
export function quotaExceeded(limit: CountLimit, count: number): QuotaExceededError {
  return new QuotaExceededError(
    `The ${limit.planName} plan allows ${limit.limit} ${limit.resource}; delete one or upgrade the plan to add another ${SINGULAR[limit.resource]}`,
    { resource: limit.resource, limit: limit.limit, count },
  );
}

/**
 * In the creating transaction, first: takes the workspace's lock for the resource and answers how
 * many rows it has now. Creates of the resource that started earlier have committed or rolled back.
 */
export async function countUnderLock(
  trx: Trx,
  capabilities: DialectCapabilities,
  limit: CountLimit,
): Promise<number> {
  await lockCountedResource(trx, capabilities, limit.workspaceId, limit.resource);
  return countResources(trx, limit.workspaceId, limit.resource);
}

/** In the creating transaction, before inserting `adding` rows: 403 QUOTA_EXCEEDED if they do not fit. */
export async function admitCreates(
  trx: Trx,
  capabilities: DialectCapabilities,
  limit: CountLimit | undefined,
  adding = 1,
): Promise<void> {
  if (limit === undefined || adding === 0) return;
  const count = await countUnderLock(trx, capabilities, limit);
  if (count + adding > limit.limit) throw quotaExceeded(limit, count);
}

/**
 * In the creating transaction: how many of `wanted` creates fit, and for the others the error a
 * single create would answer once the admitted ones exist (a batch takes what fits, item by item).
 */
export async function placesLeft(
  trx: Trx,
  capabilities: DialectCapabilities,
  limit: CountLimit | undefined,
  wanted: number,
): Promise<{ admitted: number; refusal?: QuotaExceededError }> {
  if (limit === undefined || wanted === 0) return { admitted: wanted };
  const count = await countUnderLock(trx, capabilities, limit);
  const admitted = Math.max(0, Math.min(wanted, limit.limit - count));
  if (admitted === wanted) return { admitted };
  return { admitted, refusal: quotaExceeded(limit, count + admitted) };
}
