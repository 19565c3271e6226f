/**
 * The deliveries API (contract §5): delivery records and their attempts, test deliveries and the
 * dead-letter queue (its retries: delivery-retries.service.ts). Plain functions of a context.
 */
import type { Db, DialectCapabilities } from '../db/database.ts';
import type { JobSignals } from '../jobs/wake-signal.ts';
import type { Clock } from '../shared/clock.ts';
import { NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import {
  type DeadLetter,
  type DeadLetterFilters,
  type DeadLetterStats,
  deadLetterStats,
  listDeadLetters,
} from './dead-letters.repository.ts';
import {
  type Delivery,
  type DeliveryAttempt,
  type DeliveryFilters,
  type DeliverySubject,
  deliverySubjects,
  findDelivery,
  findWebhookSummary,
  insertDelivery,
  listAttempts,
  listDeliveries,
} from './deliveries.repository.ts';
import { testEventId, testPayload } from './delivery-payload.ts';

export interface DeliveriesContext {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  signals: JobSignals;
}

/** A page of deliveries, with the device and geofence of each one's event (by event row id). */
export interface DeliveryPage {
  deliveries: Delivery[];
  total: number;
  subjects: Map<string, DeliverySubject>;
}

async function pageOf(
  ctx: DeliveriesContext,
  workspaceId: string,
  filters: DeliveryFilters,
  offset: number,
  limit: number,
): Promise<DeliveryPage> {
  const { deliveries, total } = await listDeliveries(ctx.db, workspaceId, filters, offset, limit);
  const eventRowIds = deliveries.flatMap((d) => (d.eventRowId === null ? [] : [d.eventRowId]));
  return { deliveries, total, subjects: await deliverySubjects(ctx.db, workspaceId, eventRowIds) };
}

/** One webhook's deliveries matching `filters`; another workspace's webhook is not found. */
export async function webhookDeliveries(
  ctx: DeliveriesContext,
  workspaceId: string,
  webhookId: string,
  filters: Omit<DeliveryFilters, 'webhookId'>,
  offset: number,
  limit: number,
): Promise<DeliveryPage> {
  if (!(await findWebhookSummary(ctx.db, workspaceId, webhookId))) throw new NotFoundError('Webhook');
  return pageOf(ctx, workspaceId, { ...filters, webhookId }, offset, limit);
}

/**
 * Deliveries of every webhook of the workspace. A `webhook_id` filter naming no webhook of the
 * workspace (deleted, or another workspace's) matches nothing: it filters, it does not look up.
 */
export function workspaceDeliveries(
  ctx: DeliveriesContext,
  workspaceId: string,
  filters: DeliveryFilters,
  offset: number,
  limit: number,
): Promise<DeliveryPage> {
  return pageOf(ctx, workspaceId, filters, offset, limit);
}

export async function deliveryWithAttempts(
  ctx: DeliveriesContext,
  workspaceId: string,
  id: string,
): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[]; subject: DeliverySubject | undefined }> {
  const delivery = await findDelivery(ctx.db, workspaceId, id);
  if (!delivery) throw new NotFoundError('Delivery');
  const subjects =
    delivery.eventRowId === null
      ? new Map()
      : await deliverySubjects(ctx.db, workspaceId, [delivery.eventRowId]);
  return {
    delivery,
    attempts: await listAttempts(ctx.db, id),
    subject: delivery.eventRowId === null ? undefined : subjects.get(delivery.eventRowId),
  };
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
  filters: DeadLetterFilters,
  offset: number,
  limit: number,
): Promise<{ entries: DeadLetter[]; total: number }> {
  return listDeadLetters(ctx.db, workspaceId, filters, offset, limit);
}

export function deadLetterStatistics(ctx: DeliveriesContext, workspaceId: string): Promise<DeadLetterStats> {
  return deadLetterStats(ctx.db, workspaceId);
}
