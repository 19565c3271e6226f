/** Schemas of the deliveries and dead-letter routes (seed §2.4–2.6, contract §5) and the JSON forms. */
import { Type } from 'typebox';
import { EVENT_NAMES } from '../events/event-types.ts';
import { component } from '../http/components.ts';
import { Id, Nullable, PaginationQuery, StringEnum, Timestamp } from '../http/schemas.ts';
import type { DeadLetter, DeadLetterStats } from './dead-letters.repository.ts';
import type { Delivery, DeliveryAttempt, DeliverySubject } from './deliveries.repository.ts';
import type { BulkRetryResult } from './delivery-retries.service.ts';

const STATUSES = ['pending', 'success', 'failed'] as const;
const EVENT_TYPES = [...EVENT_NAMES, 'webhook.test'] as const;
/** Every event type a delivery (and a dead-letter entry) can have. */
export const DELIVERY_EVENT_TYPES = EVENT_TYPES;
const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'none'] as const;
const ORIGINS = ['subscription', 'workflow', 'test', 'dlq_retry', 'resend'] as const;
/** Bulk dead-letter retry: ids per request. */
export const BULK_RETRY_MAX = 100;

export const WebhookIdParams = Type.Object({ webhook_id: Type.String() });
export const DeliveryIdParams = Type.Object({ delivery_id: Type.String() });
export const DlqIdParams = Type.Object({ dlq_id: Type.String() });

/** Filters of both delivery lists (ADR 018); all optional, combined with AND. */
const deliveryFilters = {
  status: Type.Optional(StringEnum(STATUSES, { description: 'Only deliveries in this state' })),
  event_type: Type.Optional(StringEnum(EVENT_TYPES, { description: 'Only deliveries of this event type' })),
  status_class: Type.Optional(
    StringEnum(STATUS_CLASSES, {
      description:
        'Only deliveries whose last attempt got an HTTP status of this class (`2xx`…`5xx`), or `none`: ' +
        'an attempt was made and the last one got no HTTP response (timeout, network error, connection ' +
        'refused, private target refused). Deliveries not attempted yet match no class.',
    }),
  ),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'created_at ≥ from (inclusive)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'created_at ≤ to (inclusive)' })),
  event_id: Type.Optional(
    Type.String({
      description:
        'Only deliveries caused by this geofence event: its record id (`id` of GET /events, the ' +
        '`{event_id}` of GET /events/{event_id}; a delivery shows it as `event_record_id`), so ' +
        'the subscription delivery, its dead-letter retries, resends and workflow `webhook` actions. ' +
        'Not the seed form `data.event_id` of the payload (shown as `event_id`), which is not unique ' +
        'across devices.',
    }),
  ),
};

export const DeliveriesQuery = Type.Object({ ...PaginationQuery.properties, ...deliveryFilters });

export const AllDeliveriesQuery = Type.Object({
  ...PaginationQuery.properties,
  webhook_id: Type.Optional(
    Type.String({
      description: 'Only deliveries of this webhook (one not in the workspace matches nothing)',
    }),
  ),
  ...deliveryFilters,
});

export const DlqQuery = Type.Object({
  ...PaginationQuery.properties,
  requeued: Type.Optional(Type.Boolean({ description: 'Only entries that were (not) retried' })),
  webhook_id: Type.Optional(Type.String({ description: 'Only entries of this webhook' })),
  event_type: Type.Optional(StringEnum(EVENT_TYPES, { description: 'Only entries of this event type' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'queued_at ≥ from (inclusive)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'queued_at ≤ to (inclusive)' })),
});

export const DeliverySchema = Type.Object(
  {
    id: Id,
    webhook_id: Nullable(Type.String({ description: 'Null once the webhook is deleted' })),
    geofence_id: Nullable(Type.String()),
    geofence_name: Nullable(
      Type.String({ description: "The geofence's name when the event happened; null for a test delivery" }),
    ),
    device_id: Nullable(
      Type.String({ description: 'The device whose location caused the event; null for a test delivery' }),
    ),
    device_name: Nullable(
      Type.String({ description: "The device's name now; null for a test delivery or a deleted device" }),
    ),
    origin: StringEnum(ORIGINS, {
      description:
        'Why the delivery exists: `subscription` (the webhook subscribes to the event), `workflow` (a ' +
        "workflow's `webhook` action), `test` (POST /webhooks/{id}/test), `dlq_retry` (a dead-letter " +
        'retry of `source_delivery_id`) or `resend` (POST /webhooks/deliveries/{id}/resend of ' +
        '`source_delivery_id`)',
    }),
    source_delivery_id: Nullable(
      Type.String({
        description:
          'The delivery this one repeats (`dlq_retry`, `resend`; its own attempts are numbered from 1, ' +
          'the repeated one keeps its own); null otherwise, and for repeats made before this field',
      }),
    ),
    event_record_id: Nullable(
      Type.String({
        description:
          'The geofence event record (`id` of GET /events) that caused it; null for a test delivery',
      }),
    ),
    event_type: StringEnum(EVENT_TYPES),
    event_id: Type.String({ description: '`data.event_id` of the payload (`X-SVC-Event-ID`)' }),
    url: Type.String(),
    method: StringEnum(['POST', 'PUT', 'PATCH', 'GET']),
    status: StringEnum(STATUSES, {
      description:
        '`pending` until an attempt succeeds (`success`) or the last one fails (`failed`, dead-lettered)',
    }),
    response_status_code: Nullable(Type.Integer({ description: 'HTTP status of the last attempt' })),
    response_status: Nullable(Type.Integer({ description: 'Same as response_status_code' })),
    response_time_ms: Nullable(Type.Number({ description: 'Duration of the last attempt' })),
    error_message: Nullable(Type.String({ description: 'Why the last attempt failed' })),
    attempt_count: Type.Integer({ description: 'Attempts made (at most WEBHOOK_RETRY_SCHEDULE length + 1)' }),
    retry_count: Type.Integer({ description: 'Attempts after the first' }),
    idempotency_key: Type.String({
      description: '`X-Idempotency-Key` and payload `id`: stable across attempts and dead-letter retries',
    }),
    created_at: Timestamp,
    delivered_at: Nullable(Timestamp),
    next_retry_at: Nullable(Timestamp),
  },
  { description: 'A webhook delivery (seed §2.4)' },
);
component('Delivery', DeliverySchema);

export const AttemptSchema = Type.Object({
  n: Type.Integer({ description: 'Attempt number (`X-SVC-Attempt`)' }),
  started_at: Timestamp,
  duration_ms: Type.Number(),
  response_status_code: Nullable(Type.Integer()),
  error_message: Nullable(Type.String()),
  response_body_excerpt: Nullable(
    Type.String({ description: 'At most the first 1 KiB of the response body' }),
  ),
  // additionalProperties, not TypeBox's Record (patternProperties, which OpenAPI 3.0 lacks).
  request_headers: Nullable(
    Type.Unsafe<Record<string, string>>({
      type: 'object',
      additionalProperties: { type: 'string' },
      description:
        'The headers this attempt was sent with, in the order sent: ours (`Content-Type`, `User-Agent`, ' +
        '`X-SVC-Signature`, `X-SVC-Event-ID`, `X-Idempotency-Key`, `X-SVC-Attempt` and the legacy ' +
        "duplicates) and the webhook's custom headers by name, each with the value `•••` (custom headers " +
        "carry receivers' credentials; the webhook shows its configured values). The HTTP client adds `Host`, `Content-Length` and " +
        '`Connection`, not listed. Null for attempts recorded before headers were kept, and for an ' +
        'attempt that could not be built (e.g. its secret could not be opened).',
    }),
  ),
});
component('WebhookAttempt', AttemptSchema);

export const DeliveryDetailSchema = Type.Object(
  {
    ...DeliverySchema.properties,
    request_body: Nullable(
      Type.String({
        description:
          'The exact body every attempt sends (the bytes signed by `X-SVC-Signature`); null for a GET ' +
          'delivery, which sends none (its signature is that of the empty body)',
      }),
    ),
    attempts: Type.Array(AttemptSchema),
  },
  { description: 'A delivery with every attempt made' },
);
component('DeliveryDetail', DeliveryDetailSchema);

export const TestDeliveryResponse = Type.Object({ delivery_id: Id });
export const RetryResponse = component(
  'DeliveryRetryAccepted',
  Type.Object(
    {
      delivery_id: Type.String({ description: 'The delivery that will be attempted (UUID)' }),
      status: StringEnum(['pending']),
    },
    { description: 'A retry was queued' },
  ),
);

export const BulkRetryRequest = component(
  'DeadLetterBulkRetryRequest',
  Type.Object(
    {
      dlq_ids: Type.Array(Type.String(), {
        minItems: 1,
        maxItems: BULK_RETRY_MAX,
        uniqueItems: true,
        description: `1..${BULK_RETRY_MAX} distinct dead-letter entry ids`,
      }),
    },
    { additionalProperties: false, description: 'Dead-letter entries to retry' },
  ),
);

export const BulkRetryResponse = component(
  'DeadLetterBulkRetryResult',
  Type.Object(
    {
      retried: Type.Array(
        Type.Object({
          dlq_id: Type.String(),
          delivery_id: Type.String({ description: 'The new delivery (UUID)' }),
        }),
        { description: 'Entries retried, in request order' },
      ),
      failed: Type.Array(
        Type.Object({
          dlq_id: Type.String(),
          error_code: Type.String({ description: 'As the single retry would answer, e.g. `NOT_FOUND`' }),
          detail: Type.String(),
        }),
        { description: "Entries not retried, in request order, with the single retry's error" },
      ),
    },
    { description: 'The outcome of each id of a bulk dead-letter retry' },
  ),
);

export const DeadLetterSchema = Type.Object(
  {
    dlq_id: Id,
    delivery_id: Id,
    webhook: Type.Object({ id: Nullable(Type.String()), name: Type.String(), url: Type.String() }),
    event_type: StringEnum(EVENT_TYPES),
    event_id: Type.String(),
    error_message: Type.String({
      description: 'Why the last attempt failed, e.g. `HTTP 503 Service Unavailable`',
    }),
    retry_count: Type.Integer(),
    last_attempt_at: Timestamp,
    queued_at: Timestamp,
    requeued: Type.Boolean(),
  },
  { description: 'A dead-letter entry (seed §2.5)' },
);
component('DeadLetterEntry', DeadLetterSchema);

export const DeadLetterStatsSchema = Type.Object(
  {
    total_entries: Type.Integer(),
    not_requeued: Type.Integer(),
    requeued: Type.Integer(),
    top_failed_webhooks: Type.Array(
      Type.Object({
        webhook_id: Nullable(Type.String()),
        webhook_name: Type.String(),
        count: Type.Integer(),
      }),
      { description: 'At most five, most entries first' },
    ),
  },
  { description: 'Dead-letter statistics (seed §2.6)' },
);
component('DeadLetterStats', DeadLetterStatsSchema);

export function deliveryOut(d: Delivery, subject: DeliverySubject | undefined) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    geofence_id: d.geofenceId,
    geofence_name: subject?.geofenceName ?? null,
    device_id: subject?.deviceId ?? null,
    device_name: subject?.deviceName ?? null,
    origin: d.origin,
    source_delivery_id: d.sourceDeliveryId,
    event_record_id: d.eventRowId,
    event_type: d.eventType,
    event_id: d.eventId,
    url: d.url,
    method: d.method as 'POST' | 'PUT' | 'PATCH' | 'GET',
    status: d.status,
    response_status_code: d.responseStatusCode,
    response_status: d.responseStatusCode,
    response_time_ms: d.responseTimeMs,
    error_message: d.errorMessage,
    attempt_count: d.attemptCount,
    retry_count: Math.max(0, d.attemptCount - 1),
    idempotency_key: d.idempotencyKey,
    created_at: d.createdAt.toISOString(),
    delivered_at: d.deliveredAt?.toISOString() ?? null,
    next_retry_at: d.nextRetryAt?.toISOString() ?? null,
  };
}

export function attemptOut(a: DeliveryAttempt) {
  return {
    n: a.n,
    started_at: a.startedAt.toISOString(),
    duration_ms: a.durationMs,
    response_status_code: a.responseStatusCode,
    error_message: a.errorMessage,
    response_body_excerpt: a.responseBodyExcerpt,
    request_headers: a.requestHeaders,
  };
}

/** GET /webhooks/deliveries/{delivery_id}: the record, the body it sends and its attempts. */
export function deliveryDetailOut(
  d: Delivery,
  attempts: readonly DeliveryAttempt[],
  subject: DeliverySubject | undefined,
) {
  return {
    ...deliveryOut(d, subject),
    // The worker sends no body for GET (delivery-sender.ts), whatever the payload.
    request_body: d.method === 'GET' ? null : d.payload,
    attempts: attempts.map(attemptOut),
  };
}

export function bulkRetryOut(r: BulkRetryResult) {
  return {
    retried: r.retried.map((x) => ({ dlq_id: x.dlqId, delivery_id: x.deliveryId })),
    failed: r.failed.map((x) => ({ dlq_id: x.dlqId, error_code: x.errorCode, detail: x.detail })),
  };
}

export function deadLetterOut(e: DeadLetter) {
  return {
    dlq_id: e.id,
    delivery_id: e.deliveryId,
    webhook: { id: e.webhookId, name: e.webhookName, url: e.webhookUrl },
    event_type: e.eventType,
    event_id: e.eventId,
    error_message: e.errorMessage,
    retry_count: e.retryCount,
    last_attempt_at: e.lastAttemptAt.toISOString(),
    queued_at: e.queuedAt.toISOString(),
    requeued: e.requeued,
  };
}

export function statsOut(s: DeadLetterStats) {
  return {
    total_entries: s.total,
    not_requeued: s.total - s.requeued,
    requeued: s.requeued,
    top_failed_webhooks: s.top.map((t) => ({
      webhook_id: t.webhookId,
      webhook_name: t.webhookName,
      count: t.count,
    })),
  };
}
