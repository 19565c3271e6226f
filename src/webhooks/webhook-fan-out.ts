/**
 * The webhooks' subscription to the event outbox (ADR 010 "Dispatcher"): one pending delivery per
 * enabled webhook of the workspace subscribed to the event's type and, when the webhook has a
 * `geofence_ids` filter, to its geofence. The unique (event, webhook) index of subscription
 * deliveries makes a re-dispatch harmless.
 */
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import { geofenceEventPayload } from '../events/event-payload.ts';
import { eventNameOf } from '../events/event-types.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import type { OutboxFanOut, OutboxSubscriber } from '../events/outbox-dispatcher.ts';
import { uuidv7 } from '../shared/ids.ts';
import { type DeliveryInsert, deliveryRow } from './deliveries.repository.ts';
import {
  insertSubscriptionDeliveries,
  type SubscribedWebhook,
  subscribedWebhooks,
} from './webhook-subscriptions.repository.ts';

export function webhookOutboxSubscriber(capabilities: DialectCapabilities): OutboxSubscriber {
  return {
    async prepare(trx, workspaceIds): Promise<OutboxFanOut> {
      const hooks = await subscribedWebhooks(trx, workspaceIds);
      return {
        wants: (workspaceId) => hooks.has(workspaceId),
        async write(trx2: Executor, events, now) {
          const deliveries = fanOut(events, hooks, now);
          await insertSubscriptionDeliveries(trx2, capabilities, deliveries);
          return { deliveries: deliveries.length };
        },
      };
    },
  };
}

/** The delivery rows of a batch: one per (event, subscribed webhook), in event order. */
function fanOut(
  events: readonly GeofenceEvent[],
  hooks: ReadonlyMap<string, SubscribedWebhook[]>,
  now: Date,
): DeliveryInsert[] {
  const deliveries: DeliveryInsert[] = [];
  for (const event of events) {
    const type = eventNameOf(event.eventType);
    for (const hook of hooks.get(event.workspaceId) ?? []) {
      if (!hook.events.includes(type)) continue;
      if (hook.geofenceIds !== null && !hook.geofenceIds.includes(event.geofenceId)) continue;
      const key = crypto.randomUUID();
      deliveries.push(
        deliveryRow({
          id: uuidv7(),
          workspaceId: event.workspaceId,
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
