/**
 * The outbox dispatcher (ADR 008 "The outbox", ADR 010): turns committed `event_outbox` rows into
 * one pending delivery per enabled webhook of the workspace subscribed to the event's type and,
 * when the webhook has a `geofence_ids` filter, to its geofence. The deliveries and the rows'
 * `dispatched_at` commit together, in the transaction opened here (the dispatcher loop is the
 * caller at the top of its work); the unique (event, webhook) index of subscription deliveries
 * makes a re-dispatch harmless. Workflow runs start in the same transaction (ADR 014).
 */
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { eventNameOf } from '../events/event-types.ts';
import { findEventsByIds, type GeofenceEvent } from '../events/events.repository.ts';
import type { Clock } from '../shared/clock.ts';
import { uuidv7 } from '../shared/ids.ts';
import { startRuns } from '../workflows/run-starter.ts';
import { triggerableWorkflows } from '../workflows/runs.repository.ts';
import { deliveryRow } from './deliveries.repository.ts';
import { geofenceEventPayload } from './delivery-payload.ts';
import {
  insertSubscriptionDeliveries,
  markDispatched,
  type OutboxRow,
  type SubscribedWebhook,
  subscribedWebhooks,
  takeUndispatched,
} from './outbox-dispatch.repository.ts';

export interface DispatchContext {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
}

/** Dispatches up to `limit` outbox rows, oldest first; returns how many rows and deliveries. */
export async function dispatchOutbox(
  ctx: DispatchContext,
  limit = 500,
): Promise<{ rows: number; deliveries: number; runs: number }> {
  return withTransaction(ctx.db, async (trx) => {
    const rows = await takeUndispatched(trx, ctx.capabilities, limit);
    if (rows.length === 0) return { rows: 0, deliveries: 0, runs: 0 };
    const now = ctx.clock.now();
    const workspaceIds = [...new Set(rows.map((r) => r.workspaceId))];
    const hooks = await subscribedWebhooks(trx, workspaceIds);
    const flows = await triggerableWorkflows(trx, workspaceIds);
    // Only events some webhook or workflow may want are read: in a workspace without either the
    // rows are just marked dispatched (events nobody receives are not read or parsed).
    const wanted = rows
      .filter((r) => hooks.has(r.workspaceId) || flows.has(r.workspaceId))
      .map((r) => r.eventRowId);
    const events = wanted.length > 0 ? await findEventsByIds(trx, wanted) : new Map<string, GeofenceEvent>();
    const deliveries = fanOut(rows, events, hooks, now);
    await insertSubscriptionDeliveries(trx, ctx.capabilities, deliveries);
    const inOrder = rows.flatMap((r) => {
      const event = events.get(r.eventRowId);
      return event ? [event] : [];
    });
    const started = await startRuns(trx, ctx.capabilities, inOrder, flows, now);
    await markDispatched(
      trx,
      rows.map((r) => r.id),
      now,
    );
    return { rows: rows.length, deliveries: deliveries.length + started.deliveries, runs: started.runs };
  });
}

/**
 * The delivery rows of a batch: one per (event, subscribed webhook). Outbox order is event order
 * (UUIDv7 ids in processing order): deliveries keep it.
 */
function fanOut(
  rows: readonly OutboxRow[],
  events: ReadonlyMap<string, GeofenceEvent>,
  hooks: ReadonlyMap<string, SubscribedWebhook[]>,
  now: Date,
): unknown[][] {
  const deliveries: unknown[][] = [];
  for (const row of rows) {
    const event = events.get(row.eventRowId);
    if (!event) continue;
    const type = eventNameOf(event.eventType);
    for (const hook of hooks.get(row.workspaceId) ?? []) {
      if (!hook.events.includes(type)) continue;
      if (hook.geofenceIds !== null && !hook.geofenceIds.includes(event.geofenceId)) continue;
      const key = crypto.randomUUID();
      deliveries.push(
        deliveryRow({
          id: uuidv7(),
          workspaceId: row.workspaceId,
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
  return deliveries;
}
