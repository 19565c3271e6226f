/**
 * The worker's SQL (ADR 010): claiming due deliveries under the per-webhook rate limit, and
 * recording a batch of attempt outcomes. Both run in one transaction per batch, owned by the worker.
 */
import { type SqlBool, sql } from 'kysely';
import { fromJson, toBool } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import { insertRows, updateById } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { DeliveryEventType } from './deliveries.tables.ts';

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

export interface ClaimOptions {
  now: Date;
  workerId: string;
  limit: number;
  /** The lease lasts the webhook's timeout plus this margin (ADR 010). */
  leaseMarginMs: number;
}

const pending = sql<SqlBool>`status = 'pending'`;
/** Sends are counted per second over the 61 seconds overlapping (now − 60 s, now]: never more than the limit in any 60 s. */
const WINDOW_SECONDS = 60;

/**
 * Claims up to `limit` due deliveries: takes a lease on those the webhooks' rate limits allow now
 * and moves the others to the second their webhook's window frees, without using an attempt.
 * On PostgreSQL the due rows are taken `FOR UPDATE SKIP LOCKED` (workers take disjoint rows
 * without waiting) and the webhook rows `FOR NO KEY UPDATE`, which orders the rate accounting of
 * one webhook across workers; SQLite's single writer serialises the whole claim.
 */
export async function claimDue(
  trx: Executor,
  capabilities: DialectCapabilities,
  options: ClaimOptions,
): Promise<ClaimedDelivery[]> {
  const { now, workerId } = options;
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
    .limit(options.limit);
  if (capabilities.skipLocked) query = query.forUpdate().skipLocked();
  const due = await query.execute();
  if (due.length === 0) return [];

  const orphans = due.filter((d) => d.webhook_id === null).map((d) => d.id);
  if (orphans.length > 0) {
    await trx
      .updateTable('webhook_deliveries')
      .set({
        status: 'failed',
        error_message: 'The webhook was deleted',
        next_retry_at: null,
        lease_owner: null,
      })
      .where('id', 'in', orphans)
      .execute();
  }
  const webhookIds = [...new Set(due.flatMap((d) => (d.webhook_id === null ? [] : [d.webhook_id])))].sort();
  if (webhookIds.length === 0) return [];
  let hooksQuery = trx
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
    .where('id', 'in', webhookIds)
    .orderBy('id');
  if (capabilities.rowLocks) hooksQuery = hooksQuery.forNoKeyUpdate();
  const hooks = new Map((await hooksQuery.execute()).map((h) => [h.id, h]));

  const nowSecond = Math.floor(now.getTime() / 1000);
  const windows = await trx
    .selectFrom('webhook_rate_windows')
    .select(['webhook_id', 'second', 'sends'])
    .where('webhook_id', 'in', webhookIds)
    .where('second', '>=', nowSecond - WINDOW_SECONDS)
    .execute();
  const used = new Map<string, number>();
  const oldest = new Map<string, number>();
  for (const w of windows) {
    const second = Number(w.second);
    used.set(w.webhook_id, (used.get(w.webhook_id) ?? 0) + Number(w.sends));
    oldest.set(w.webhook_id, Math.min(oldest.get(w.webhook_id) ?? second, second));
  }

  const claimed: ClaimedDelivery[] = [];
  const taken = new Map<string, number>();
  const updates: unknown[][] = [];
  for (const d of due) {
    if (d.webhook_id === null) continue;
    const hook = hooks.get(d.webhook_id);
    if (!hook) continue; // deleted after our read: the next claim fails it as an orphan
    if (!toBool(hook.enabled) && d.origin !== 'test') {
      // A disabled webhook keeps its deliveries pending; they resume within a minute of re-enabling.
      updates.push([d.id, new Date(now.getTime() + 60_000), null, d.url, d.method]);
      continue;
    }
    const sent = (used.get(hook.id) ?? 0) + (taken.get(hook.id) ?? 0);
    if (sent >= hook.rate_limit_per_minute) {
      // Deferred, not attempted: due again when the oldest counted second leaves the window.
      const first = Math.min(oldest.get(hook.id) ?? nowSecond, nowSecond);
      updates.push([d.id, new Date((first + WINDOW_SECONDS + 1) * 1000), null, d.url, d.method]);
      continue;
    }
    taken.set(hook.id, (taken.get(hook.id) ?? 0) + 1);
    // Long enough for one attempt; a worker still busy with earlier ones extends it (extendLeases).
    const leaseUntil = new Date(now.getTime() + hook.timeout_seconds * 1000 + options.leaseMarginMs);
    updates.push([d.id, leaseUntil, workerId, hook.url, hook.method]);
    claimed.push({
      id: d.id,
      workspaceId: d.workspace_id,
      eventType: d.event_type,
      eventId: d.event_id,
      idempotencyKey: d.idempotency_key,
      payload: d.payload,
      attempt: d.attempt_count + 1,
      leaseUntil,
      webhook: {
        id: hook.id,
        workspaceId: hook.workspace_id,
        name: hook.name,
        url: hook.url,
        method: hook.method,
        contentType: hook.content_type,
        timeoutSeconds: hook.timeout_seconds,
        headers: fromJson<Record<string, string>>(hook.headers) ?? {},
        rateLimitPerMinute: hook.rate_limit_per_minute,
        secretSealed: hook.secret_sealed,
      },
    });
  }
  await updateById(trx, capabilities, {
    table: 'webhook_deliveries',
    columns: [
      { name: 'due_at', type: 'timestamp' },
      { name: 'lease_owner', type: 'text' },
      { name: 'url', type: 'text' },
      { name: 'method', type: 'text' },
    ],
    rows: updates,
  });
  if (taken.size > 0) {
    await trx
      .insertInto('webhook_rate_windows')
      .values([...taken].map(([webhook_id, sends]) => ({ webhook_id, second: nowSecond, sends })))
      .onConflict((oc) =>
        oc
          .columns(['webhook_id', 'second'])
          .doUpdateSet((eb) => ({ sends: eb('webhook_rate_windows.sends', '+', eb.ref('excluded.sends')) })),
      )
      .execute();
  }
  return claimed;
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
 */
export async function recordAttempts(
  trx: Executor,
  capabilities: DialectCapabilities,
  workerId: string,
  scheduleMs: readonly number[],
  records: readonly AttemptRecord[],
  now: Date,
): Promise<DeadLettered[]> {
  if (records.length === 0) return [];
  const maxAttempts = scheduleMs.length + 1;
  const rows = records.map((r) => {
    const n = r.delivery.attempt;
    if (r.success) {
      return [
        r.delivery.id,
        'success',
        n,
        r.statusCode,
        r.durationMs,
        null,
        r.finishedAt,
        null,
        r.finishedAt,
        null,
      ];
    }
    if (n >= maxAttempts) {
      return [
        r.delivery.id,
        'failed',
        n,
        r.statusCode,
        r.durationMs,
        r.errorMessage,
        null,
        null,
        r.finishedAt,
        null,
      ];
    }
    const next = new Date(r.finishedAt.getTime() + (scheduleMs[n - 1] ?? 0));
    return [r.delivery.id, 'pending', n, r.statusCode, r.durationMs, r.errorMessage, null, next, next, null];
  });
  const updated = new Set(
    await updateById(trx, capabilities, {
      table: 'webhook_deliveries',
      columns: [
        { name: 'status', type: 'text' },
        { name: 'attempt_count', type: 'integer' },
        { name: 'response_status_code', type: 'integer' },
        { name: 'response_time_ms', type: 'double' },
        { name: 'error_message', type: 'text' },
        { name: 'delivered_at', type: 'timestamp' },
        { name: 'next_retry_at', type: 'timestamp' },
        { name: 'due_at', type: 'timestamp' },
        { name: 'lease_owner', type: 'text' },
      ],
      rows,
      guard: { column: 'lease_owner', value: workerId },
    }),
  );
  const kept = records.filter((r) => updated.has(r.delivery.id));
  await insertRows(
    trx,
    capabilities,
    'webhook_delivery_attempts',
    [
      { name: 'id', type: 'text' },
      { name: 'delivery_id', type: 'text' },
      { name: 'n', type: 'integer' },
      { name: 'started_at', type: 'timestamp' },
      { name: 'duration_ms', type: 'double' },
      { name: 'response_status_code', type: 'integer' },
      { name: 'error_message', type: 'text' },
      { name: 'response_body_excerpt', type: 'text' },
    ],
    kept.map((r) => [
      uuidv7(),
      r.delivery.id,
      r.delivery.attempt,
      r.startedAt,
      r.durationMs,
      r.statusCode,
      r.errorMessage,
      r.bodyExcerpt,
    ]),
  );
  const dead = kept
    .filter((r) => !r.success && r.delivery.attempt >= maxAttempts)
    .map((r) => ({ record: r, dlqId: uuidv7() }));
  await insertRows(
    trx,
    capabilities,
    'webhook_dead_letters',
    [
      { name: 'id', type: 'text' },
      { name: 'workspace_id', type: 'text' },
      { name: 'delivery_id', type: 'text' },
      { name: 'webhook_id', type: 'text' },
      { name: 'webhook_name', type: 'text' },
      { name: 'webhook_url', type: 'text' },
      { name: 'event_type', type: 'text' },
      { name: 'event_id', type: 'text' },
      { name: 'error_message', type: 'text' },
      { name: 'retry_count', type: 'integer' },
      { name: 'last_attempt_at', type: 'timestamp' },
      { name: 'queued_at', type: 'timestamp' },
      { name: 'requeued', type: 'boolean' },
      { name: 'requeued_at', type: 'timestamp' },
    ],
    dead.map(({ record: r, dlqId }) => [
      dlqId,
      r.delivery.workspaceId,
      r.delivery.id,
      r.delivery.webhook.id,
      r.delivery.webhook.name,
      r.delivery.webhook.url,
      r.delivery.eventType,
      r.delivery.eventId,
      r.errorMessage ?? 'Delivery failed',
      r.delivery.attempt - 1,
      r.startedAt,
      now,
      false,
      null,
    ]),
  );
  return dead.map(({ record, dlqId }) => ({
    dlqId,
    delivery: record.delivery,
    errorMessage: record.errorMessage ?? 'Delivery failed',
  }));
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

/** Rate windows older than two minutes count for nothing; deleting them keeps the table tiny. */
export async function purgeRateWindows(db: Executor, now: Date): Promise<void> {
  await db
    .deleteFrom('webhook_rate_windows')
    .where('second', '<', Math.floor(now.getTime() / 1000) - 2 * WINDOW_SECONDS)
    .execute();
}
