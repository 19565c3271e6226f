/**
 * The worker's SQL (ADR 010): the statements of a claim (which deliveries are due, their webhooks,
 * the rate windows' counts, the claim's writes), recording a batch of attempt outcomes, and leases.
 * What a claim may take is decided in `claim-policy.ts` and put together in
 * `delivery-claims.service.ts`; the worker opens one transaction per claim and per recorded batch.
 */
import { type SqlBool, sql } from 'kysely';
import type { RowOf } from '../db/bulk-table.ts';
import { fromJson, json, toBool } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import { afterAttempt } from '../jobs/retry-schedule.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { CountedSends } from './claim-policy.ts';
import {
  type DeliveryEventType,
  type DeliveryOrigin,
  deadLetterWrites,
  deliveryAttemptWrites,
  deliveryClaimWrites,
  deliveryOutcomeWrites,
} from './deliveries.tables.ts';

/** What a worker needs of a webhook to send to it (read at claim time: edits apply to the next attempt). */
export interface WebhookTarget {
  id: string;
  workspaceId: string;
  name: string;
  url: string;
  method: string;
  contentType: string;
  timeoutSeconds: number;
  headers: Record<string, string>;
  rateLimitPerMinute: number;
  secretSealed: string;
}

export interface ClaimedDelivery {
  id: string;
  workspaceId: string;
  /** `workflow` deliveries carry a workflow's `webhook` action, which follows their outcome. */
  origin: DeliveryOrigin;
  eventType: DeliveryEventType;
  eventId: string;
  idempotencyKey: string;
  payload: string;
  /** The attempt about to be made (1-based). */
  attempt: number;
  /** Until when this worker holds the delivery. */
  leaseUntil: Date;
  webhook: WebhookTarget;
}

const pending = sql<SqlBool>`status = 'pending'`;

/** A pending delivery whose due time has come, as the claim reads it. */
export interface DueRow {
  id: string;
  workspaceId: string;
  /** Null once its webhook was deleted (`ON DELETE SET NULL`). */
  webhookId: string | null;
  eventType: DeliveryEventType;
  eventId: string;
  idempotencyKey: string;
  payload: string;
  attemptCount: number;
  url: string;
  method: string;
  origin: DeliveryOrigin;
}

/**
 * Up to `limit` pending deliveries due at `now`, in `(due_at, id)` order. On PostgreSQL they are
 * taken `FOR UPDATE SKIP LOCKED`: concurrent workers take disjoint rows without waiting.
 */
export async function selectDue(
  trx: Executor,
  capabilities: DialectCapabilities,
  now: Date,
  limit: number,
): Promise<DueRow[]> {
  let query = trx
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'workspace_id',
      'webhook_id',
      'event_type',
      'event_id',
      'idempotency_key',
      'payload',
      'attempt_count',
      'url',
      'method',
      'origin',
    ])
    .where(pending)
    .where('due_at', '<=', now)
    .orderBy('due_at')
    .orderBy('id')
    .limit(limit);
  if (capabilities.skipLocked) query = query.forUpdate().skipLocked();
  const rows = await query.execute();
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    webhookId: r.webhook_id,
    eventType: r.event_type,
    eventId: r.event_id,
    idempotencyKey: r.idempotency_key,
    payload: r.payload,
    attemptCount: r.attempt_count,
    url: r.url,
    method: r.method,
    origin: r.origin,
  }));
}

/** Fails pending deliveries whose webhook was deleted (no dead letter: there is no one to tell). */
export async function failOrphans(trx: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status: 'failed',
      error_message: 'The webhook was deleted',
      next_retry_at: null,
      lease_owner: null,
    })
    .where('id', 'in', [...ids])
    .execute();
}

/** A webhook as a claim needs it: where to send, and whether and how fast it may be sent to. */
export interface ClaimableWebhook extends WebhookTarget {
  enabled: boolean;
}

/**
 * The webhooks of a claim's deliveries, as they are now. On PostgreSQL they are locked `FOR NO KEY
 * UPDATE` in id order: that orders the rate accounting of one webhook across workers (NO KEY, so
 * the dispatcher's foreign-key checks on new deliveries are not blocked); SQLite's single writer
 * serialises the whole claim.
 */
export async function lockClaimableWebhooks(
  trx: Executor,
  capabilities: DialectCapabilities,
  ids: readonly string[],
): Promise<Map<string, ClaimableWebhook>> {
  if (ids.length === 0) return new Map();
  let query = trx
    .selectFrom('webhooks')
    .select([
      'id',
      'workspace_id',
      'name',
      'url',
      'method',
      'content_type',
      'timeout_seconds',
      'headers',
      'rate_limit_per_minute',
      'secret_sealed',
      'enabled',
    ])
    .where('id', 'in', [...ids].sort())
    .orderBy('id');
  if (capabilities.rowLocks) query = query.forNoKeyUpdate();
  const rows = await query.execute();
  return new Map(
    rows.map((h) => [
      h.id,
      {
        id: h.id,
        workspaceId: h.workspace_id,
        name: h.name,
        url: h.url,
        method: h.method,
        contentType: h.content_type,
        timeoutSeconds: h.timeout_seconds,
        headers: fromJson<Record<string, string>>(h.headers) ?? {},
        rateLimitPerMinute: h.rate_limit_per_minute,
        secretSealed: h.secret_sealed,
        enabled: toBool(h.enabled),
      },
    ]),
  );
}

/** The sends counted for these webhooks from epoch second `fromSecond` on. */
export async function countedSends(
  trx: Executor,
  webhookIds: readonly string[],
  fromSecond: number,
): Promise<CountedSends[]> {
  if (webhookIds.length === 0) return [];
  const rows = await trx
    .selectFrom('webhook_rate_windows')
    .select(['webhook_id', 'second', 'sends'])
    .where('webhook_id', 'in', [...webhookIds])
    .where('second', '>=', fromSecond)
    .execute();
  return rows.map((w) => ({ webhookId: w.webhook_id, second: Number(w.second), sends: Number(w.sends) }));
}

/** What a claim writes to one delivery: when it is due next, who leases it, where it goes. */
export interface ClaimWrite {
  id: string;
  dueAt: Date;
  /** The claiming worker for a lease; null for a delivery put off. */
  leaseOwner: string | null;
  url: string;
  method: string;
}

/** Writes a claim's outcome for every delivery it decided, in one multi-row statement. */
export async function writeClaims(
  trx: Executor,
  capabilities: DialectCapabilities,
  writes: readonly ClaimWrite[],
): Promise<void> {
  await deliveryClaimWrites.updateById(trx, capabilities, writes, (w) => ({
    id: w.id,
    due_at: w.dueAt,
    lease_owner: w.leaseOwner,
    url: w.url,
    method: w.method,
  }));
}

/** Adds sends to each webhook's count of epoch second `second` (an upsert that adds, across workers). */
export async function countSends(
  trx: Executor,
  second: number,
  sends: ReadonlyMap<string, number>,
): Promise<void> {
  if (sends.size === 0) return;
  await trx
    .insertInto('webhook_rate_windows')
    .values([...sends].map(([webhook_id, count]) => ({ webhook_id, second, sends: count })))
    .onConflict((oc) =>
      oc
        .columns(['webhook_id', 'second'])
        .doUpdateSet((eb) => ({ sends: eb('webhook_rate_windows.sends', '+', eb.ref('excluded.sends')) })),
    )
    .execute();
}

export interface AttemptRecord {
  delivery: ClaimedDelivery;
  startedAt: Date;
  finishedAt: Date;
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  errorMessage: string | null;
  bodyExcerpt: string | null;
  /** The headers the request was built with (masked, ADR 018); null when none was built. */
  requestHeaders: Record<string, string> | null;
}

export interface DeadLettered {
  dlqId: string;
  delivery: ClaimedDelivery;
  errorMessage: string;
}

/**
 * Records outcomes of attempts this worker made, only where it still holds the lease (a worker
 * whose lease ran out lost the delivery to another and must not overwrite its record). Failures
 * before the last attempt wait `scheduleMs[n-1]` from the failure; the last one dead-letters.
 * Returns the dead letters and the outcomes recorded (those whose lease was still held).
 */
export async function recordAttempts(
  trx: Executor,
  capabilities: DialectCapabilities,
  workerId: string,
  scheduleMs: readonly number[],
  records: readonly AttemptRecord[],
  now: Date,
): Promise<{ dead: DeadLettered[]; kept: AttemptRecord[] }> {
  if (records.length === 0) return { dead: [], kept: [] };
  const maxAttempts = scheduleMs.length + 1;
  const outcome = (r: AttemptRecord): RowOf<typeof deliveryOutcomeWrites> => {
    const n = r.delivery.attempt;
    const step = afterAttempt(scheduleMs, n, r.finishedAt, r);
    const final = step.ended;
    const next = step.ended ? null : step.retryAt;
    return {
      id: r.delivery.id,
      status: r.success ? 'success' : final ? 'failed' : 'pending',
      attempt_count: n,
      response_status_code: r.statusCode,
      response_time_ms: r.durationMs,
      error_message: r.success ? null : r.errorMessage,
      delivered_at: r.success ? r.finishedAt : null,
      next_retry_at: next,
      due_at: next ?? r.finishedAt,
      lease_owner: null,
    };
  };
  const updated = new Set(
    await deliveryOutcomeWrites.updateById(trx, capabilities, records, outcome, {
      column: 'lease_owner',
      value: workerId,
    }),
  );
  const kept = records.filter((r) => updated.has(r.delivery.id));
  await deliveryAttemptWrites.insert(trx, capabilities, kept, (r) => ({
    id: uuidv7(),
    delivery_id: r.delivery.id,
    n: r.delivery.attempt,
    started_at: r.startedAt,
    duration_ms: r.durationMs,
    response_status_code: r.statusCode,
    error_message: r.errorMessage,
    response_body_excerpt: r.bodyExcerpt,
    request_headers: r.requestHeaders === null ? null : json(r.requestHeaders),
  }));
  const dead = kept
    .filter((r) => !r.success && r.delivery.attempt >= maxAttempts)
    .map((r) => ({ record: r, dlqId: uuidv7() }));
  await deadLetterWrites.insert(trx, capabilities, dead, ({ record: r, dlqId }) => ({
    id: dlqId,
    workspace_id: r.delivery.workspaceId,
    delivery_id: r.delivery.id,
    webhook_id: r.delivery.webhook.id,
    webhook_name: r.delivery.webhook.name,
    webhook_url: r.delivery.webhook.url,
    event_type: r.delivery.eventType,
    event_id: r.delivery.eventId,
    error_message: r.errorMessage ?? 'Delivery failed',
    retry_count: r.delivery.attempt - 1,
    last_attempt_at: r.startedAt,
    queued_at: now,
    requeued: false,
    requeued_at: null,
  }));
  return {
    dead: dead.map(({ record, dlqId }) => ({
      dlqId,
      delivery: record.delivery,
      errorMessage: record.errorMessage ?? 'Delivery failed',
    })),
    kept,
  };
}

/**
 * Extends this worker's leases (a chain of one webhook's deliveries taking longer than the first
 * lease allowed); returns the ids still held — a lease that already ran out may belong to another
 * worker now, and that delivery must not be sent from here.
 */
export async function extendLeases(
  db: Executor,
  workerId: string,
  ids: readonly string[],
  until: Date,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ due_at: until })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', workerId)
    .where(pending)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Gives back leases of claimed deliveries that were never sent (a worker stopping): due at once. */
export async function releaseLeases(
  db: Executor,
  workerId: string,
  ids: readonly string[],
  now: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ due_at: now, lease_owner: null })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', workerId)
    .where(pending)
    .execute();
}

/** Deletes counted seconds before `beforeSecond`, which no claim reads any more: keeps the table tiny. */
export async function purgeRateWindows(db: Executor, beforeSecond: number): Promise<void> {
  await db.deleteFrom('webhook_rate_windows').where('second', '<', beforeSecond).execute();
}
