/** Tables of the webhook delivery engine (ADR 010): deliveries, their attempts, dead letters, rate windows. */
import { bulkTable, bulkUpdate } from '../db/bulk-table.ts';
import type { BooleanColumn, NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';
import type { EventName } from '../events/event-types.ts';

export type DeliveryStatus = 'pending' | 'success' | 'failed';
export type DeliveryEventType = EventName | 'webhook.test';
/**
 * Why the delivery exists. Only `subscription` deliveries are unique per (event, webhook): a
 * dead-letter retry, a resend or a test is a new delivery by design.
 */
export type DeliveryOrigin = 'subscription' | 'test' | 'dlq_retry' | 'resend' | 'workflow';

/** One message to one webhook (seed §2.4), retried on the schedule until success or dead letter. */
export interface WebhookDeliveriesTable {
  id: string;
  workspace_id: string;
  /** Null once the webhook is deleted (the history stays). */
  webhook_id: string | null;
  origin: DeliveryOrigin;
  /** The `geofence_events` row; null for `webhook.test`. */
  event_row_id: string | null;
  geofence_id: string | null;
  event_type: DeliveryEventType;
  /** Seed §6.3 `data.event_id` (also `X-SVC-Event-ID`). */
  event_id: string;
  /** `X-Idempotency-Key` and the payload's `id`: the same on every attempt and dead-letter retry. */
  idempotency_key: string;
  /** The exact JSON body sent (signed byte for byte); GET deliveries send none. */
  payload: string;
  url: string;
  method: string;
  status: DeliveryStatus;
  attempt_count: number;
  response_status_code: number | null;
  response_time_ms: number | null;
  error_message: string | null;
  created_at: TimestampColumn;
  delivered_at: NullableTimestampColumn;
  /** When the next attempt is due (API field); null once final. */
  next_retry_at: NullableTimestampColumn;
  /**
   * When a worker may next take it: `next_retry_at`, a rate-limit window, or the end of a lease
   * while an attempt is in flight. Only pending rows are indexed on it.
   */
  due_at: TimestampColumn;
  /** The worker holding the lease while an attempt is in flight (null otherwise). */
  lease_owner: string | null;
  /** The delivery this one repeats (`dlq_retry`, `resend`); null otherwise (migration 0019). */
  source_delivery_id: string | null;
}

export interface WebhookDeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  /** 1-based attempt number (`X-SVC-Attempt`). */
  n: number;
  started_at: TimestampColumn;
  duration_ms: number;
  response_status_code: number | null;
  error_message: string | null;
  /** At most 1 KiB of the response body. */
  response_body_excerpt: string | null;
  /**
   * The headers this attempt was sent with, as JSON object text (custom header
   * values masked, ADR 018); null for attempts recorded before migration 0011 or never sent.
   */
  request_headers: string | null;
}

/** A delivery whose last attempt failed (seed §2.5). */
export interface WebhookDeadLettersTable {
  id: string;
  workspace_id: string;
  delivery_id: string;
  webhook_id: string | null;
  webhook_name: string;
  webhook_url: string;
  event_type: DeliveryEventType;
  event_id: string;
  error_message: string;
  retry_count: number;
  last_attempt_at: TimestampColumn;
  queued_at: TimestampColumn;
  requeued: BooleanColumn;
  requeued_at: NullableTimestampColumn;
}

/**
 * Sends per webhook per second (epoch seconds): the shared truth of `rate_limit_per_minute`
 * across workers and nodes. Rows older than two minutes are deleted by the worker.
 */
export interface WebhookRateWindowsTable {
  webhook_id: string;
  second: number;
  sends: number;
}

export type RetryJobStatus = 'running' | 'done';

/**
 * "Retry every dead letter matching this filter" (migration 0019): the set is the matching entries
 * not requeued when it was asked, up to the bound entry; the worker walks it in (queued_at, id)
 * order from the cursor, one batch per transaction with the cursor and counts.
 */
export interface WebhookDlqRetryJobsTable {
  id: string;
  workspace_id: string;
  webhook_id: string | null;
  event_type: DeliveryEventType | null;
  from_at: NullableTimestampColumn;
  to_at: NullableTimestampColumn;
  error_contains: string | null;
  bound_queued_at: NullableTimestampColumn;
  bound_id: string | null;
  cursor_queued_at: NullableTimestampColumn;
  cursor_id: string | null;
  matched: number;
  queued: number;
  failed: number;
  status: RetryJobStatus;
  created_at: TimestampColumn;
  finished_at: NullableTimestampColumn;
  due_at: TimestampColumn;
  lease_owner: string | null;
}

export interface DeliveryTables {
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_dlq_retry_jobs: WebhookDlqRetryJobsTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  webhook_dead_letters: WebhookDeadLettersTable;
  webhook_rate_windows: WebhookRateWindowsTable;
}

/** The many-row writers of these tables (src/db/bulk-table.ts): named rows, columns declared once. */
export const deliveryWrites = bulkTable<WebhookDeliveriesTable>()('webhook_deliveries', {
  id: 'text',
  workspace_id: 'text',
  webhook_id: 'text',
  origin: 'text',
  event_row_id: 'text',
  geofence_id: 'text',
  event_type: 'text',
  event_id: 'text',
  idempotency_key: 'text',
  payload: 'text',
  url: 'text',
  method: 'text',
  status: 'text',
  attempt_count: 'integer',
  created_at: 'timestamp',
  next_retry_at: 'timestamp',
  due_at: 'timestamp',
  source_delivery_id: 'text',
});

/** A claim's write to each delivery it decided: due time, lease, and where the attempt goes. */
export const deliveryClaimWrites = bulkUpdate<WebhookDeliveriesTable>()('webhook_deliveries', {
  due_at: 'timestamp',
  lease_owner: 'text',
  url: 'text',
  method: 'text',
});

/** The outcome of an attempt, written to its delivery. */
export const deliveryOutcomeWrites = bulkUpdate<WebhookDeliveriesTable>()('webhook_deliveries', {
  status: 'text',
  attempt_count: 'integer',
  response_status_code: 'integer',
  response_time_ms: 'double',
  error_message: 'text',
  delivered_at: 'timestamp',
  next_retry_at: 'timestamp',
  due_at: 'timestamp',
  lease_owner: 'text',
});

export const deliveryAttemptWrites = bulkTable<WebhookDeliveryAttemptsTable>()('webhook_delivery_attempts', {
  id: 'text',
  delivery_id: 'text',
  n: 'integer',
  started_at: 'timestamp',
  duration_ms: 'double',
  response_status_code: 'integer',
  error_message: 'text',
  response_body_excerpt: 'text',
  request_headers: 'text',
});

export const deadLetterWrites = bulkTable<WebhookDeadLettersTable>()('webhook_dead_letters', {
  id: 'text',
  workspace_id: 'text',
  delivery_id: 'text',
  webhook_id: 'text',
  webhook_name: 'text',
  webhook_url: 'text',
  event_type: 'text',
  event_id: 'text',
  error_message: 'text',
  retry_count: 'integer',
  last_attempt_at: 'timestamp',
  queued_at: 'timestamp',
  requeued: 'boolean',
  requeued_at: 'timestamp',
});
