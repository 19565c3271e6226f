/** SQL for delivery records and their attempts as the API reads and creates them; scoped by workspace. */
import { type Expression, type ExpressionBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import type { RowOf } from '../db/bulk-table.ts';
import { fromJson, toDate, toDateOrNull } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { DatabaseSchema } from '../db/schema.ts';
import { residualEquals } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import {
  type DeliveryEventType,
  type DeliveryOrigin,
  type DeliveryStatus,
  deliveryWrites,
  type WebhookDeliveriesTable,
} from './deliveries.tables.ts';

export interface Delivery {
  id: string;
  workspaceId: string;
  webhookId: string | null;
  origin: DeliveryOrigin;
  eventRowId: string | null;
  geofenceId: string | null;
  eventType: DeliveryEventType;
  eventId: string;
  idempotencyKey: string;
  payload: string;
  url: string;
  method: string;
  status: DeliveryStatus;
  attemptCount: number;
  responseStatusCode: number | null;
  responseTimeMs: number | null;
  errorMessage: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  nextRetryAt: Date | null;
  /** The delivery this one repeats (a dead-letter retry or a resend). */
  sourceDeliveryId: string | null;
}

/** Who and where a delivery is about, read from its geofence event (none for a test delivery). */
export interface DeliverySubject {
  deviceId: string;
  /** Null once the device is deleted. */
  deviceName: string | null;
  /** The geofence's name when the event happened. */
  geofenceName: string;
}

export interface DeliveryAttempt {
  n: number;
  startedAt: Date;
  durationMs: number;
  responseStatusCode: number | null;
  errorMessage: string | null;
  responseBodyExcerpt: string | null;
  /** Null for attempts recorded before headers were kept (migration 0011). */
  requestHeaders: Record<string, string> | null;
}

const COLUMNS = [
  'id',
  'workspace_id',
  'webhook_id',
  'origin',
  'event_row_id',
  'geofence_id',
  'event_type',
  'event_id',
  'idempotency_key',
  'payload',
  'url',
  'method',
  'status',
  'attempt_count',
  'response_status_code',
  'response_time_ms',
  'error_message',
  'created_at',
  'delivered_at',
  'next_retry_at',
  'source_delivery_id',
] as const;

type DeliveryRow = Pick<Selectable<WebhookDeliveriesTable>, (typeof COLUMNS)[number]>;

function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    webhookId: row.webhook_id,
    origin: row.origin,
    eventRowId: row.event_row_id,
    geofenceId: row.geofence_id,
    eventType: row.event_type,
    eventId: row.event_id,
    idempotencyKey: row.idempotency_key,
    payload: row.payload,
    url: row.url,
    method: row.method,
    status: row.status,
    attemptCount: row.attempt_count,
    responseStatusCode: row.response_status_code,
    responseTimeMs: row.response_time_ms === null ? null : Number(row.response_time_ms),
    errorMessage: row.error_message,
    createdAt: toDate(row.created_at),
    deliveredAt: toDateOrNull(row.delivered_at),
    nextRetryAt: toDateOrNull(row.next_retry_at),
    sourceDeliveryId: row.source_delivery_id,
  };
}

/** What creating a delivery takes: its identity and request; state starts as pending. */
export type NewDelivery = Pick<
  Delivery,
  | 'id'
  | 'workspaceId'
  | 'origin'
  | 'eventRowId'
  | 'geofenceId'
  | 'eventType'
  | 'eventId'
  | 'idempotencyKey'
  | 'payload'
  | 'url'
  | 'method'
> & { webhookId: string; now: Date; sourceDeliveryId?: string | null };

/** A new delivery's row (`deliveryWrites`). */
export type DeliveryInsert = RowOf<typeof deliveryWrites>;

/** A pending delivery with no attempt yet, due at once. */
export function deliveryRow(d: NewDelivery): DeliveryInsert {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    webhook_id: d.webhookId,
    origin: d.origin,
    event_row_id: d.eventRowId,
    geofence_id: d.geofenceId,
    event_type: d.eventType,
    event_id: d.eventId,
    idempotency_key: d.idempotencyKey,
    payload: d.payload,
    url: d.url,
    method: d.method,
    status: 'pending',
    attempt_count: 0,
    created_at: d.now,
    next_retry_at: d.now,
    due_at: d.now,
    source_delivery_id: d.sourceDeliveryId ?? null,
  };
}

export async function insertDelivery(
  db: Executor,
  capabilities: DialectCapabilities,
  delivery: NewDelivery,
): Promise<void> {
  await deliveryWrites.insert(db, capabilities, [deliveryRow(delivery)]);
}

export async function findDelivery(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<Delivery | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toDelivery(row) : undefined;
}

export async function listAttempts(db: Executor, deliveryId: string): Promise<DeliveryAttempt[]> {
  const rows = await db
    .selectFrom('webhook_delivery_attempts')
    .select([
      'n',
      'started_at',
      'duration_ms',
      'response_status_code',
      'error_message',
      'response_body_excerpt',
      'request_headers',
    ])
    .where('delivery_id', '=', deliveryId)
    .orderBy('n')
    .orderBy('started_at')
    .execute();
  return rows.map((r) => ({
    n: r.n,
    startedAt: toDate(r.started_at),
    durationMs: Number(r.duration_ms),
    responseStatusCode: r.response_status_code,
    errorMessage: r.error_message,
    responseBodyExcerpt: r.response_body_excerpt,
    requestHeaders: r.request_headers === null ? null : fromJson<Record<string, string>>(r.request_headers),
  }));
}

/**
 * `2xx`…`5xx`: the last attempt got an HTTP status in that class; `none`: an attempt was made and
 * the last one got no HTTP response (a timeout, a network error, a target refused by the guard).
 */
export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx' | 'none';

export interface DeliveryFilters {
  webhookId?: string | undefined;
  /** The geofence event record (`geofence_events.id`) that caused them. */
  eventRowId?: string | undefined;
  status?: DeliveryStatus | undefined;
  eventType?: DeliveryEventType | undefined;
  statusClass?: StatusClass | undefined;
  /** Inclusive bounds on `created_at`. */
  from?: Date | undefined;
  to?: Date | undefined;
}

function matches(eb: ExpressionBuilder<DatabaseSchema, 'webhook_deliveries'>, f: DeliveryFilters) {
  const conditions: Expression<SqlBool>[] = [];
  if (f.webhookId !== undefined) conditions.push(eb('webhook_id', '=', f.webhookId));
  if (f.eventRowId !== undefined) conditions.push(eb('event_row_id', '=', f.eventRowId));
  if (f.status !== undefined) conditions.push(eb('status', '=', f.status));
  if (f.eventType !== undefined) conditions.push(eb('event_type', '=', f.eventType));
  if (f.statusClass === 'none') {
    conditions.push(eb('attempt_count', '>', 0), eb('response_status_code', 'is', null));
  } else if (f.statusClass !== undefined) {
    const low = Number(f.statusClass[0]) * 100;
    conditions.push(eb('response_status_code', '>=', low), eb('response_status_code', '<', low + 100));
  }
  if (f.from !== undefined) conditions.push(eb('created_at', '>=', f.from));
  if (f.to !== undefined) conditions.push(eb('created_at', '<=', f.to));
  return eb.and(conditions);
}

/**
 * The workspace's deliveries matching `filters`, newest first. With a webhook the list reads
 * `(webhook_id, created_at, id)`, without one `(workspace_id, created_at, id)` (migration 0011),
 * in the order asked; the other filters are checked on the rows of that range. With an event, its
 * few deliveries are found by `(event_row_id, created_at)` (migration 0019).
 */
export async function listDeliveries(
  db: Executor,
  workspaceId: string,
  filters: DeliveryFilters,
  offset: number,
  limit: number,
): Promise<{ deliveries: Delivery[]; total: number }> {
  const base = db
    .selectFrom('webhook_deliveries')
    // With a webhook named, its index is the narrow one: keep SQLite (no statistics) off the
    // workspace's (statements.ts `residualEquals`). The workspace still bounds the answer.
    .where(
      filters.webhookId === undefined && filters.eventRowId === undefined
        ? sql<SqlBool>`${sql.ref('workspace_id')} = ${workspaceId}`
        : residualEquals('workspace_id', workspaceId),
    )
    .where((eb) => matches(eb, filters));
  const rows = await base
    .select(COLUMNS)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { deliveries: rows.map(toDelivery), total: Number(count.n) };
}

/**
 * "Retry now" of a pending delivery: due at `now` unless an attempt is in flight (a worker holds
 * a lease that has not run out). Returns whether it was changed. One conditional statement, so a
 * claim committing at the same moment either sees the new due time or makes this one match nothing.
 */
export async function makeDueNow(db: Executor, workspaceId: string, id: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ next_retry_at: now, due_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('due_at', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * The device and geofence of each event among `eventRowIds` (a page's worth), by event row id.
 * Read beside the page, not joined into it: the list's count and index ranges stay on one table.
 */
export async function deliverySubjects(
  db: Executor,
  workspaceId: string,
  eventRowIds: readonly string[],
): Promise<Map<string, DeliverySubject>> {
  const subjects = new Map<string, DeliverySubject>();
  const unique = [...new Set(eventRowIds)];
  if (unique.length === 0) return subjects;
  const rows = await db
    .selectFrom('geofence_events as e')
    .leftJoin('devices as d', (join) =>
      join.onRef('d.id', '=', 'e.device_id').onRef('d.workspace_id', '=', 'e.workspace_id'),
    )
    .select(['e.id', 'e.device_id', 'e.geofence_name', 'd.name as device_name'])
    .where('e.workspace_id', '=', workspaceId)
    .where('e.id', 'in', unique)
    .execute();
  for (const r of rows) {
    subjects.set(r.id, { deviceId: r.device_id, deviceName: r.device_name, geofenceName: r.geofence_name });
  }
  return subjects;
}

export interface WebhookSummary {
  id: string;
  name: string;
  url: string;
  method: string;
}

/** The webhook of the workspace, or undefined (another workspace's is not found either). */
export async function findWebhookSummary(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<WebhookSummary | undefined> {
  return db
    .selectFrom('webhooks')
    .select(['id', 'name', 'url', 'method'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}
