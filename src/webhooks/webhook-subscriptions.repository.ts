/**
 * The SQL of the webhooks' share of the outbox dispatch (ADR 010 "Dispatcher"): the webhooks
 * subscribed in a batch's workspaces and the deliveries they fan out to, in the dispatcher's
 * transaction.
 */
import { fromJson, toBool } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import type { DeliveryInsert } from './deliveries.repository.ts';
import { deliveryWrites } from './deliveries.tables.ts';

export interface SubscribedWebhook {
  id: string;
  url: string;
  method: string;
  events: string[];
  geofenceIds: string[] | null;
}

/** Enabled webhooks of these workspaces, as they are now (subscriptions apply at dispatch time). */
export async function subscribedWebhooks(
  trx: Executor,
  workspaceIds: readonly string[],
): Promise<Map<string, SubscribedWebhook[]>> {
  const out = new Map<string, SubscribedWebhook[]>();
  if (workspaceIds.length === 0) return out;
  const rows = await trx
    .selectFrom('webhooks')
    .select(['id', 'workspace_id', 'url', 'method', 'events', 'geofence_ids', 'enabled'])
    .where('workspace_id', 'in', [...workspaceIds])
    .orderBy('id')
    .execute();
  for (const r of rows) {
    if (!toBool(r.enabled)) continue;
    const list = out.get(r.workspace_id) ?? [];
    list.push({
      id: r.id,
      url: r.url,
      method: r.method,
      events: fromJson<string[]>(r.events) ?? [],
      geofenceIds: fromJson<string[] | null>(r.geofence_ids) ?? null,
    });
    out.set(r.workspace_id, list);
  }
  return out;
}

/**
 * Inserts subscription deliveries (`deliveryRow`). One that exists already for its (event,
 * webhook) is skipped: a re-dispatched outbox row cannot double it.
 */
export async function insertSubscriptionDeliveries(
  trx: Executor,
  capabilities: DialectCapabilities,
  rows: readonly DeliveryInsert[],
): Promise<void> {
  await deliveryWrites.insertIgnoringConflicts(
    trx,
    capabilities,
    rows,
    `("event_row_id", "webhook_id") where origin = 'subscription'`,
  );
}
