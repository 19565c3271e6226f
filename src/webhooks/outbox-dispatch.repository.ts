/**
 * The outbox dispatcher's SQL (ADR 008 "The outbox", ADR 010 "Dispatcher"): the undispatched
 * `event_outbox` rows, the webhooks subscribed in their workspaces, the deliveries they fan out to
 * and the mark that the rows are done. All of it runs in the dispatcher's one transaction per batch.
 */
import { type SqlBool, sql } from 'kysely';
import { fromJson, toBool } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import { sendWithCommit } from '../db/postgres-driver.ts';
import { insertIgnoringConflicts } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { DELIVERY_COLUMNS } from './deliveries.repository.ts';

const undispatched = sql<SqlBool>`dispatched_at is null`;

export interface OutboxRow {
  id: string;
  eventRowId: string;
  workspaceId: string;
}

export interface SubscribedWebhook {
  id: string;
  url: string;
  method: string;
  events: string[];
  geofenceIds: string[] | null;
}

/**
 * Up to `limit` undispatched outbox rows, oldest first. On PostgreSQL they are taken `FOR UPDATE
 * SKIP LOCKED`: dispatchers of several processes take disjoint rows without waiting.
 */
export async function takeUndispatched(
  trx: Executor,
  capabilities: DialectCapabilities,
  limit: number,
): Promise<OutboxRow[]> {
  let query = trx
    .selectFrom('event_outbox')
    .select(['id', 'event_row_id', 'workspace_id'])
    .where(undispatched)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit);
  if (capabilities.skipLocked) query = query.forUpdate().skipLocked();
  const rows = await query.execute();
  return rows.map((r) => ({ id: r.id, eventRowId: r.event_row_id, workspaceId: r.workspace_id }));
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
 * Inserts subscription deliveries (rows in `DELIVERY_COLUMNS` order, see `deliveryRow`). One that
 * exists already for its (event, webhook) is skipped: a re-dispatched outbox row cannot double it.
 */
export async function insertSubscriptionDeliveries(
  trx: Executor,
  capabilities: DialectCapabilities,
  rows: ReadonlyArray<readonly unknown[]>,
): Promise<void> {
  await insertIgnoringConflicts(
    trx,
    capabilities,
    'webhook_deliveries',
    DELIVERY_COLUMNS,
    rows,
    `("event_row_id", "webhook_id") where origin = 'subscription'`,
  );
}

/**
 * Marks outbox rows dispatched. Meant as the transaction's last statement: on PostgreSQL it then
 * travels with the COMMIT (`sendWithCommit`) instead of costing a round trip of its own.
 */
export async function markDispatched(trx: Executor, ids: readonly string[], now: Date): Promise<void> {
  const statement = trx
    .updateTable('event_outbox')
    .set({ dispatched_at: now })
    .where('id', 'in', [...ids])
    .compile();
  await trx.executeQuery(sendWithCommit(statement));
}
