/**
 * Retrying deliveries by hand (contract §5, ADR 018): a dead-letter entry (one, up to 100 at once,
 * or a batch of a "retry all matching" job), "retry now" of a delivery, which hastens a pending one
 * or retries a failed one through its dead-letter entry, and a resend of any delivery. Plain
 * functions of a context; the transactions open here, except for the job's batches (its own).
 */
import { type Trx, withTransaction } from '../db/transaction.ts';
import { ConflictError, DomainError, NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import {
  type DeadLetter,
  findDeadLetter,
  findDeadLetterOfDelivery,
  markRequeued,
} from './dead-letters.repository.ts';
import {
  type Delivery,
  findDelivery,
  findWebhookSummary,
  insertDelivery,
  makeDueNow,
} from './deliveries.repository.ts';
import type { DeliveriesContext } from './deliveries.service.ts';

/**
 * A new delivery of `original`'s payload to its webhook as configured now: the same event, payload
 * and idempotency key (receivers de-duplicate on it), a fresh attempt counter, and a link back to
 * the delivery it repeats. Its webhook deleted → NotFoundError, decided before any write.
 */
async function repeatDelivery(
  ctx: DeliveriesContext,
  trx: Trx,
  original: Delivery,
  origin: 'dlq_retry' | 'resend',
): Promise<string> {
  const webhook =
    original.webhookId === null
      ? undefined
      : await findWebhookSummary(trx, original.workspaceId, original.webhookId);
  if (!webhook) throw new NotFoundError('Webhook');
  const deliveryId = uuidv7();
  await insertDelivery(trx, ctx.capabilities, {
    id: deliveryId,
    workspaceId: original.workspaceId,
    webhookId: webhook.id,
    origin,
    eventRowId: original.eventRowId,
    geofenceId: original.geofenceId,
    eventType: original.eventType,
    eventId: original.eventId,
    idempotencyKey: original.idempotencyKey,
    payload: original.payload,
    url: webhook.url,
    method: webhook.method,
    now: ctx.clock.now(),
    sourceDeliveryId: original.id,
  });
  return deliveryId;
}

/**
 * Seed §3: a retried entry becomes a new delivery (`repeatDelivery`) and the entry is marked
 * requeued. An entry already requeued may be retried again: each retry is one more new delivery.
 * Every dead-letter retry — single, bulk, "retry all matching" — goes through here.
 */
export async function requeue(
  ctx: DeliveriesContext,
  trx: Trx,
  workspaceId: string,
  entry: DeadLetter,
): Promise<string> {
  const original = await findDelivery(trx, workspaceId, entry.deliveryId);
  if (!original) throw new NotFoundError('Dead-letter entry');
  const deliveryId = await repeatDelivery(ctx, trx, original, 'dlq_retry');
  await markRequeued(trx, entry.id, ctx.clock.now());
  return deliveryId;
}

/**
 * POST /webhooks/deliveries/{delivery_id}/resend: a new delivery of the same event whatever the
 * old one's state (a success included), as Stripe's and Svix's "resend" do. The payload's `id` and
 * `X-Idempotency-Key` stay: it is the same event, and a receiver that handled it already may
 * de-duplicate. A dead-letter entry of the old delivery is left as it is (not marked requeued).
 */
export async function resendDelivery(
  ctx: DeliveriesContext,
  workspaceId: string,
  deliveryId: string,
): Promise<string> {
  const id = await withTransaction(ctx.db, async (trx) => {
    const original = await findDelivery(trx, workspaceId, deliveryId);
    if (!original) throw new NotFoundError('Delivery');
    return repeatDelivery(ctx, trx, original, 'resend');
  });
  ctx.signals.deliveries.notify();
  return id;
}

async function retryEntry(
  ctx: DeliveriesContext,
  trx: Trx,
  workspaceId: string,
  dlqId: string,
): Promise<string> {
  const entry = await findDeadLetter(trx, workspaceId, dlqId);
  if (!entry) throw new NotFoundError('Dead-letter entry');
  return requeue(ctx, trx, workspaceId, entry);
}

/** POST /webhooks/dlq/{dlq_id}/retry: the new delivery's id. */
export async function retryDeadLetter(
  ctx: DeliveriesContext,
  workspaceId: string,
  dlqId: string,
): Promise<string> {
  const id = await withTransaction(ctx.db, (trx) => retryEntry(ctx, trx, workspaceId, dlqId));
  ctx.signals.deliveries.notify();
  return id;
}

export interface BulkRetryResult {
  retried: Array<{ dlqId: string; deliveryId: string }>;
  failed: Array<{ dlqId: string; errorCode: string; detail: string }>;
}

/**
 * POST /webhooks/dlq/retry: each id handled exactly as the single retry would, its refusal (a
 * domain error: not found) reported per id. All in one transaction: the answer lists what was
 * committed, and an unexpected error (a 500) leaves every entry as it was — never half a batch.
 * A refusal is decided by reads before any write of its entry, so it leaves nothing to undo.
 */
export async function retryDeadLetters(
  ctx: DeliveriesContext,
  workspaceId: string,
  dlqIds: readonly string[],
): Promise<BulkRetryResult> {
  const result = await withTransaction(ctx.db, async (trx) => {
    const out: BulkRetryResult = { retried: [], failed: [] };
    for (const dlqId of dlqIds) {
      try {
        out.retried.push({ dlqId, deliveryId: await retryEntry(ctx, trx, workspaceId, dlqId) });
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        out.failed.push({ dlqId, errorCode: error.code, detail: error.message });
      }
    }
    return out;
  });
  if (result.retried.length > 0) ctx.signals.deliveries.notify();
  return result;
}

/**
 * POST /webhooks/deliveries/{delivery_id}/retry. Pending and waiting: due now, same delivery.
 * Failed: retried through its dead-letter entry (a new delivery). Succeeded, or an attempt in
 * flight right now: 409 CONFLICT. Returns the id of the delivery that will be attempted.
 */
export async function retryDeliveryNow(
  ctx: DeliveriesContext,
  workspaceId: string,
  deliveryId: string,
): Promise<string> {
  const id = await withTransaction(ctx.db, async (trx) => {
    const delivery = await findDelivery(trx, workspaceId, deliveryId);
    if (!delivery) throw new NotFoundError('Delivery');
    switch (delivery.status) {
      case 'success':
        throw new ConflictError('CONFLICT', 'Delivery already succeeded; there is nothing to retry');
      case 'pending':
        // Its webhook was deleted: the next claim fails it as an orphan, nothing would be sent.
        if (delivery.webhookId === null) throw new NotFoundError('Webhook');
        if (!(await makeDueNow(trx, workspaceId, deliveryId, ctx.clock.now()))) {
          throw new ConflictError(
            'CONFLICT',
            'Delivery is being attempted right now; its outcome decides what happens next',
          );
        }
        return deliveryId;
      case 'failed': {
        const entry = await findDeadLetterOfDelivery(trx, workspaceId, deliveryId);
        if (entry) return requeue(ctx, trx, workspaceId, entry);
        // Failed without a dead letter: its webhook was deleted while it was pending.
        throw new NotFoundError('Webhook');
      }
    }
  });
  ctx.signals.deliveries.notify();
  return id;
}
