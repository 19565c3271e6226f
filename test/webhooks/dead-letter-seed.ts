/**
 * Dead letters made quickly through the repositories (no receiver, no retry schedule): a failed
 * delivery of a real webhook with its dead-letter entry, queued at a chosen time. For tests whose
 * subject is what is done with many entries, not how they came to be.
 */
import type { Db, DialectCapabilities } from '../../src/db/database.ts';
import { uuidv7 } from '../../src/shared/ids.ts';
import { deliveryRow } from '../../src/webhooks/deliveries.repository.ts';
import { deadLetterWrites, deliveryWrites } from '../../src/webhooks/deliveries.tables.ts';

export interface SeedWebhook {
  id: string;
  name: string;
  url: string;
}

/** `count` dead letters of `webhook`, queued one second apart from `firstQueuedAt`; their ids, oldest first. */
export async function seedDeadLetters(
  db: Db,
  capabilities: DialectCapabilities,
  options: {
    workspaceId: string;
    webhook: SeedWebhook;
    count: number;
    firstQueuedAt: Date;
    errorMessage?: string;
  },
): Promise<Array<{ dlqId: string; deliveryId: string }>> {
  const made = Array.from({ length: options.count }, (_v, i) => {
    const at = new Date(options.firstQueuedAt.getTime() + i * 1000);
    const deliveryId = uuidv7();
    const key = crypto.randomUUID();
    return {
      at,
      deliveryId,
      key,
      dlqId: uuidv7(),
      eventId: `webhook_test_${Math.floor(at.getTime() / 1000)}`,
    };
  });
  await deliveryWrites.insert(db, capabilities, made, (m) => ({
    ...deliveryRow({
      id: m.deliveryId,
      workspaceId: options.workspaceId,
      webhookId: options.webhook.id,
      origin: 'test',
      eventRowId: null,
      geofenceId: null,
      eventType: 'webhook.test',
      eventId: m.eventId,
      idempotencyKey: m.key,
      payload: JSON.stringify({ id: m.key, event: 'webhook.test', timestamp: m.at.toISOString(), data: {} }),
      url: options.webhook.url,
      method: 'POST',
      now: m.at,
    }),
    status: 'failed',
    attempt_count: 1,
    next_retry_at: null,
  }));
  await deadLetterWrites.insert(db, capabilities, made, (m) => ({
    id: m.dlqId,
    workspace_id: options.workspaceId,
    delivery_id: m.deliveryId,
    webhook_id: options.webhook.id,
    webhook_name: options.webhook.name,
    webhook_url: options.webhook.url,
    event_type: 'webhook.test',
    event_id: m.eventId,
    error_message: options.errorMessage ?? 'HTTP 503 Service Unavailable',
    retry_count: 0,
    last_attempt_at: m.at,
    queued_at: m.at,
    requeued: false,
    requeued_at: null,
  }));
  return made.map((m) => ({ dlqId: m.dlqId, deliveryId: m.deliveryId }));
}
