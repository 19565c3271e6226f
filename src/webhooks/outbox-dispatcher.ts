/**
 * The outbox dispatcher (ADR 008 "The outbox", ADR 010): turns committed `event_outbox` rows into
 * one pending delivery per enabled webhook of the workspace subscribed to the event's type and,
 * when the webhook has a `geofence_ids` filter, to its geofence. The deliveries and the rows'
 * `dispatched_at` commit together; the unique (event, webhook) index of subscription deliveries
 * makes a re-dispatch harmless.
 */
import { type SqlBool, sql } from 'kysely';
import { fromJson, toBool } from '../db/columns.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { sendWithCommit } from '../db/postgres-driver.ts';
import { insertIgnoringConflicts } from '../db/statements.ts';
import { type Executor, withTransaction } from '../db/transaction.ts';
import { findEventsByIds, type GeofenceEvent } from '../events/events.repository.ts';
import type { Clock } from '../shared/clock.ts';
import { uuidv7 } from '../shared/ids.ts';
import { DELIVERY_COLUMNS, deliveryRow } from './deliveries.repository.ts';
import { geofenceEventPayload } from './delivery-payload.ts';

export interface DispatchContext {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
}

const undispatched = sql<SqlBool>`dispatched_at is null`;

interface SubscribedWebhook {
  id: string;
  url: string;
  method: string;
  events: string[];
  geofenceIds: string[] | null;
}

/** Dispatches up to `limit` outbox rows, oldest first; returns how many rows and deliveries. */
export async function dispatchOutbox(
  ctx: DispatchContext,
  limit = 500,
): Promise<{ rows: number; deliveries: number }> {
  return withTransaction(ctx.db, async (trx) => {
    let query = trx
      .selectFrom('event_outbox')
      .select(['id', 'event_row_id', 'workspace_id'])
      .where(undispatched)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit);
    if (ctx.capabilities.skipLocked) query = query.forUpdate().skipLocked();
    const rows = await query.execute();
    if (rows.length === 0) return { rows: 0, deliveries: 0 };
    const now = ctx.clock.now();
    const hooks = await subscribedWebhooks(trx, [...new Set(rows.map((r) => r.workspace_id))]);
    // Only events some webhook may want are read: in a workspace without webhooks the rows are
    // just marked dispatched (reading and parsing the events was ~2 % of a busy server's CPU).
    const wanted = rows.filter((r) => hooks.has(r.workspace_id)).map((r) => r.event_row_id);
    const events = wanted.length > 0 ? await findEventsByIds(trx, wanted) : new Map<string, GeofenceEvent>();
    const deliveries: unknown[][] = [];
    // Outbox order is event order (UUIDv7 ids in processing order): deliveries keep it.
    for (const row of rows) {
      const event = events.get(row.event_row_id);
      if (!event) continue;
      const type = event.eventType === 'enter' ? 'geofence.enter' : 'geofence.exit';
      for (const hook of hooks.get(row.workspace_id) ?? []) {
        if (!hook.events.includes(type)) continue;
        if (hook.geofenceIds !== null && !hook.geofenceIds.includes(event.geofenceId)) continue;
        const key = crypto.randomUUID();
        deliveries.push(
          deliveryRow({
            id: uuidv7(),
            workspaceId: row.workspace_id,
            webhookId: hook.id,
            origin: 'subscription',
            eventRowId: event.id,
            geofenceId: event.geofenceId,
            eventType: type,
            eventId: event.eventId,
            idempotencyKey: key,
            payload: geofenceEventPayload(event, key),
            url: hook.url,
            method: hook.method,
            now,
          }),
        );
      }
    }
    await insertIgnoringConflicts(
      trx,
      ctx.capabilities,
      'webhook_deliveries',
      DELIVERY_COLUMNS,
      deliveries,
      `("event_row_id", "webhook_id") where origin = 'subscription'`,
    );
    // The transaction's last statement: on PostgreSQL it travels with the COMMIT.
    const markDispatched = trx
      .updateTable('event_outbox')
      .set({ dispatched_at: now })
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .compile();
    await trx.executeQuery(sendWithCommit(markDispatched));
    return { rows: rows.length, deliveries: deliveries.length };
  });
}

/** Enabled webhooks of these workspaces, as they are now (subscriptions apply at dispatch time). */
async function subscribedWebhooks(
  trx: Executor,
  workspaceIds: string[],
): Promise<Map<string, SubscribedWebhook[]>> {
  const rows = await trx
    .selectFrom('webhooks')
    .select(['id', 'workspace_id', 'url', 'method', 'events', 'geofence_ids', 'enabled'])
    .where('workspace_id', 'in', workspaceIds)
    .orderBy('id')
    .execute();
  const out = new Map<string, SubscribedWebhook[]>();
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
