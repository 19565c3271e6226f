/** SQL for delivery records and their attempts as the API reads and creates them; scoped by workspace. */
import type { Selectable } from 'kysely';
import { toDate, toDateOrNull } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import { type BulkColumn, insertRows } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type {
  DeliveryEventType,
  DeliveryOrigin,
  DeliveryStatus,
  WebhookDeliveriesTable,
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
}

export interface DeliveryAttempt {
  n: number;
  startedAt: Date;
  durationMs: number;
  responseStatusCode: number | null;
  errorMessage: string | null;
  responseBodyExcerpt: string | null;
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
  };
}

/** Columns of a new delivery, in the order `deliveryRow` returns its values. */
export const DELIVERY_COLUMNS: readonly BulkColumn[] = [
  { name: 'id', type: 'text' },
  { name: 'workspace_id', type: 'text' },
  { name: 'webhook_id', type: 'text' },
  { name: 'origin', type: 'text' },
  { name: 'event_row_id', type: 'text' },
  { name: 'geofence_id', type: 'text' },
  { name: 'event_type', type: 'text' },
  { name: 'event_id', type: 'text' },
  { name: 'idempotency_key', type: 'text' },
  { name: 'payload', type: 'text' },
  { name: 'url', type: 'text' },
  { name: 'method', type: 'text' },
  { name: 'status', type: 'text' },
  { name: 'attempt_count', type: 'integer' },
  { name: 'created_at', type: 'timestamp' },
  { name: 'next_retry_at', type: 'timestamp' },
  { name: 'due_at', type: 'timestamp' },
];

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
> & { webhookId: string; now: Date };

/** A pending delivery with no attempt yet, due at once. */
export function deliveryRow(d: NewDelivery): unknown[] {
  return [
    d.id,
    d.workspaceId,
    d.webhookId,
    d.origin,
    d.eventRowId,
    d.geofenceId,
    d.eventType,
    d.eventId,
    d.idempotencyKey,
    d.payload,
    d.url,
    d.method,
    'pending',
    0,
    d.now,
    d.now,
    d.now,
  ];
}

export async function insertDelivery(
  db: Executor,
  capabilities: DialectCapabilities,
  delivery: NewDelivery,
): Promise<void> {
  await insertRows(db, capabilities, 'webhook_deliveries', DELIVERY_COLUMNS, [deliveryRow(delivery)]);
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
  }));
}

/** A webhook's deliveries, newest first. */
export async function listDeliveries(
  db: Executor,
  workspaceId: string,
  webhookId: string,
  status: DeliveryStatus | undefined,
  offset: number,
  limit: number,
): Promise<{ deliveries: Delivery[]; total: number }> {
  let base = db
    .selectFrom('webhook_deliveries')
    .where('webhook_id', '=', webhookId)
    .where('workspace_id', '=', workspaceId);
  if (status !== undefined) base = base.where('status', '=', status);
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
