/**
 * How a workflow's `webhook` action becomes a delivery of the webhook engine (ADR 014): the
 * delivery row is written in the transaction that queues the action, and the action's job follows
 * it. Webhooks implement this and the composition root passes it in, so workflows never import
 * webhooks (docs/architecture.md).
 */
import type { Executor } from '../db/transaction.ts';
import type { EventName } from '../events/event-types.ts';

/** One delivery of a `webhook` action: the event's body is `payload`, sent to `url` as it is now. */
export interface WebhookActionDelivery {
  id: string;
  workspaceId: string;
  webhookId: string;
  /** The event's row; null for the sample event of a test run. */
  eventRowId: string | null;
  geofenceId: string;
  eventType: EventName;
  eventId: string;
  idempotencyKey: string;
  payload: string;
  url: string;
  method: string;
  now: Date;
}

export interface WebhookActionDeliveries {
  /** Writes the deliveries (origin `workflow`) in the caller's transaction. */
  insert(trx: Executor, deliveries: readonly WebhookActionDelivery[]): Promise<void>;
  /** Wakes the delivery worker; called after the transaction committed. */
  notify(): void;
}
