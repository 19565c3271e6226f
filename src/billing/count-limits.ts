/**
 * Count limits (contract §7): creating a geofence, webhook or device beyond the plan's number
 * → 403 QUOTA_EXCEEDED. Call it inside the create transaction, before the insert. Two concurrent
 * creates in one workspace may both pass the count and end one over the limit; that slack is
 * accepted (docs/decisions/011) rather than serialising every create of a workspace.
 */
import type { Executor } from '../db/transaction.ts';
import { QuotaExceededError } from '../shared/errors.ts';
import { type CountedResource, countResources } from './subscriptions.repository.ts';
import type { Subscriptions } from './subscriptions.service.ts';

const SINGULAR: Record<CountedResource, string> = {
  geofences: 'geofence',
  webhooks: 'webhook',
  devices: 'device',
};

export async function enforceCountLimit(
  db: Executor,
  subscriptions: Subscriptions,
  workspaceId: string,
  resource: CountedResource,
  adding = 1,
): Promise<void> {
  const subscription = await subscriptions.current(workspaceId);
  const limit = subscription.limits[resource];
  if (limit === null) return;
  const count = await countResources(db, workspaceId, resource);
  if (count + adding > limit) {
    throw new QuotaExceededError(
      `The ${subscription.plan.name} plan allows ${limit} ${resource}; delete one or upgrade the plan to add another ${SINGULAR[resource]}`,
      { resource, limit, count },
    );
  }
}

/** The shape a service needs: `undefined` in contexts built without billing (unit tests, tools). */
export type CountLimiter = (
  db: Executor,
  workspaceId: string,
  resource: CountedResource,
  adding?: number,
) => Promise<void>;

export function countLimiter(subscriptions: Subscriptions): CountLimiter {
  return (db, workspaceId, resource, adding = 1) =>
    enforceCountLimit(db, subscriptions, workspaceId, resource, adding);
}
