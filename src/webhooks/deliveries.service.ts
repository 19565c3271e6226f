/**
 * The deliveries API (contract §5): delivery records and their attempts, test deliveries, the
 * dead-letter queue and its retries. Plain functions of a context; no HTTP here.
 */
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import { NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import {
  type DeadLetter,
  type DeadLetterStats,
  deadLetterStats,
  findDeadLetter,
  listDeadLetters,
  markRequeued,
} from './dead-letters.repository.ts';
import {
  type Delivery,
  type DeliveryAttempt,
  findDelivery,
  findWebhookSummary,
  insertDelivery,
  listAttempts,
  listDeliveries,
} from './deliveries.repository.ts';
import type { DeliveryStatus } from './deliveries.tables.ts';
import { testEventId, testPayload } from './delivery-payload.ts';
import type { WebhookSignals } from './wake-signal.ts';

export interface DeliveriesContext {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  signals: WebhookSignals;
}

export async function webhookDeliveries(
  ctx: DeliveriesContext,
  workspaceId: string,
  webhookId: string,
  status: DeliveryStatus | undefined,
  offset: number,
  limit: number,
): Promise<{ deliveries: Delivery[]; total: number }> {
  if (!(await findWebhookSummary(ctx.db, workspaceId, webhookId))) throw new NotFoundError('Webhook');
  return listDeliveries(ctx.db, workspaceId, webhookId, status, offset, limit);
}

export async function deliveryWithAttempts(
  ctx: DeliveriesContext,
  workspaceId: string,
  id: string,
): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[] }> {
  const delivery = await findDelivery(ctx.db, workspaceId, id);
  if (!delivery) throw new NotFoundError('Delivery');
  return { delivery, attempts: await listAttempts(ctx.db, id) };
}

/** Queues a `webhook.test` delivery; it is sent even while the webhook is disabled (that is what a test is for). */
export async function sendTestDelivery(
  ctx: DeliveriesContext,
  workspaceId: string,
  webhookId: string,
): Promise<string> {
  const webhook = await findWebhookSummary(ctx.db, workspaceId, webhookId);
  if (!webhook) throw new NotFoundError('Webhook');
  const now = ctx.clock.now();
  const id = uuidv7();
  const key = crypto.randomUUID();
  await insertDelivery(ctx.db, ctx.capabilities, {
    id,
    workspaceId,
    webhookId,
    origin: 'test',
    eventRowId: null,
    geofenceId: null,
    eventType: 'webhook.test',
    eventId: testEventId(now),
    idempotencyKey: key,
    payload: testPayload(key, now, webhook),
    url: webhook.url,
    method: webhook.method,
    now,
  });
  ctx.signals.deliveries.notify();
  return id;
}

export function deadLetters(
  ctx: DeliveriesContext,
  workspaceId: string,
  requeued: boolean | undefined,
  offset: number,
  limit: number,
): Promise<{ entries: DeadLetter[]; total: number }> {
  return listDeadLetters(ctx.db, workspaceId, requeued, offset, limit);
}

export function deadLetterStatistics(ctx: DeliveriesContext, workspaceId: string): Promise<DeadLetterStats> {
  return deadLetterStats(ctx.db, workspaceId);
}

/**
 * Seed §3: a retried entry becomes a new delivery with a fresh attempt counter, the same payload
 * and idempotency key (receivers de-duplicate on it), and the entry is marked requeued.
 */
export async function retryDeadLetter(
  ctx: DeliveriesContext,
  workspaceId: string,
  dlqId: string,
): Promise<string> {
  const id = await withTransaction(ctx.db, async (trx) => {
    const entry = await findDeadLetter(trx, workspaceId, dlqId);
    if (!entry) throw new NotFoundError('Dead-letter entry');
    const original = await findDelivery(trx, workspaceId, entry.deliveryId);
    if (!original) throw new NotFoundError('Dead-letter entry');
    const webhook =
      original.webhookId === null
        ? undefined
        : await findWebhookSummary(trx, workspaceId, original.webhookId);
    if (!webhook) throw new NotFoundError('Webhook');
    const now = ctx.clock.now();
    const deliveryId = uuidv7();
    await insertDelivery(trx, ctx.capabilities, {
      id: deliveryId,
      workspaceId,
      webhookId: webhook.id,
      origin: 'dlq_retry',
      eventRowId: original.eventRowId,
      geofenceId: original.geofenceId,
      eventType: original.eventType,
      eventId: original.eventId,
      idempotencyKey: original.idempotencyKey,
      payload: original.payload,
      url: webhook.url,
      method: webhook.method,
      now,
    });
    await markRequeued(trx, entry.id, now);
    return deliveryId;
  });
  ctx.signals.deliveries.notify();
  return id;
}
