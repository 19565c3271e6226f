/** Examples of /webhooks, their deliveries and the dead-letter queue (contract §5). */
import { event } from '../events/events.examples.ts';
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { CREATED, FIX_TIME, ids, listOf, point, UPDATED } from '../http/examples/records.ts';
import { USER_AGENT } from '../outbound/http-response.ts';
import { signBody } from './signature.ts';

const webhook = {
  id: ids.webhook,
  name: 'Dispatch system',
  url: 'https://hooks.example.com/geofence',
  method: 'POST',
  content_type: 'application/json',
  timeout_seconds: 30,
  headers: { 'X-Team': 'dispatch' },
  rate_limit_per_minute: 60,
  events: ['geofence.enter', 'geofence.exit'],
  geofence_ids: null,
  enabled: true,
  created_at: CREATED,
  updated_at: UPDATED,
};

const webhookSecret = { secret: 'whsec_3q2+7wHkLmN0pQrStUvWxYz1' };

const delivery = {
  id: ids.delivery,
  webhook_id: ids.webhook,
  geofence_id: ids.geofence,
  geofence_name: event.geofence_name,
  device_id: ids.device,
  device_name: 'Truck 7',
  origin: 'subscription',
  source_delivery_id: null,
  event_record_id: ids.event,
  event_type: 'geofence.enter',
  event_id: event.event_id,
  url: webhook.url,
  method: 'POST',
  status: 'success',
  response_status_code: 200,
  response_status: 200,
  response_time_ms: 84.2,
  error_message: null,
  attempt_count: 2,
  retry_count: 1,
  idempotency_key: ids.delivery,
  created_at: '2026-03-10T12:10:01.000Z',
  delivered_at: '2026-03-10T12:11:02.000Z',
  next_retry_at: null,
};

/** The body the example delivery sends (seed §6.3), signed below with the example secret. */
const deliveryBody = JSON.stringify({
  id: ids.delivery,
  event: 'geofence.enter',
  timestamp: FIX_TIME,
  data: {
    event_id: event.event_id,
    user_id: event.user_id,
    device_id: ids.device,
    geofence_id: ids.geofence,
    geofence_name: event.geofence_name,
    event_type: 'enter',
    point,
    metadata: event.metadata,
  },
});

function sentHeaders(attempt: number): Record<string, string> {
  const signature = signBody(deliveryBody, webhookSecret.secret);
  return {
    'X-Team': '•••',
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-svc-signature': signature,
    'x-svc-event-id': event.event_id,
    'x-idempotency-key': ids.delivery,
    'x-svc-attempt': String(attempt),
    'x-geofencing-service-signature': signature,
    'x-geofencing-service-event-id': event.event_id,
    'x-geofencing-service-attempt': String(attempt),
  };
}

const attempts = [
  {
    n: 1,
    started_at: '2026-03-10T12:10:01.000Z',
    duration_ms: 30001.5,
    response_status_code: null,
    error_message: 'Timed out after 30 s',
    response_body_excerpt: null,
    request_headers: sentHeaders(1),
  },
  {
    n: 2,
    started_at: '2026-03-10T12:11:01.900Z',
    duration_ms: 84.2,
    response_status_code: 200,
    error_message: null,
    response_body_excerpt: '{"ok":true}',
    request_headers: sentHeaders(2),
  },
];

const deadLetter = {
  dlq_id: ids.deadLetter,
  delivery_id: ids.delivery,
  webhook: { id: ids.webhook, name: webhook.name, url: webhook.url },
  event_type: 'geofence.exit',
  event_id: `${ids.geofence}_exit_1773148200`,
  error_message: 'HTTP 503 Service Unavailable',
  retry_count: 5,
  last_attempt_at: '2026-03-10T18:12:00.000Z',
  queued_at: '2026-03-10T18:12:00.000Z',
  requeued: false,
};

const retryJobId = '0197a0c2-3b20-7851-8d2e-b1c1d1e1f101';

export const webhookExamples: OperationExamples = {
  'POST /api/v1/webhooks': {
    request: {
      name: webhook.name,
      url: webhook.url,
      headers: webhook.headers,
      events: webhook.events,
      rate_limit_per_minute: webhook.rate_limit_per_minute,
    },
    responses: { 201: { ...webhook, ...webhookSecret } },
  },
  'GET /api/v1/webhooks': { responses: { 200: listOf(webhook) } },
  'GET /api/v1/webhooks/{webhook_id}': { responses: { 200: webhook } },
  'PATCH /api/v1/webhooks/{webhook_id}': {
    request: { events: ['geofence.enter'], geofence_ids: [ids.geofence] },
    responses: { 200: { ...webhook, events: ['geofence.enter'], geofence_ids: [ids.geofence] } },
  },
  'DELETE /api/v1/webhooks/{webhook_id}': { responses: {} },
  'GET /api/v1/webhooks/{webhook_id}/secret': { responses: { 200: webhookSecret } },
  'POST /api/v1/webhooks/{webhook_id}/rotate-secret': {
    responses: { 200: { secret: 'whsec_Zk8+Qm2LxR5nV0bW7cT4yH1p' } },
  },
  'GET /api/v1/webhooks/deliveries': { responses: { 200: listOf(delivery) } },
  'GET /api/v1/webhooks/{webhook_id}/deliveries': { responses: { 200: listOf(delivery) } },
  'GET /api/v1/webhooks/deliveries/{delivery_id}': {
    responses: { 200: { ...delivery, request_body: deliveryBody, attempts } },
  },
  'POST /api/v1/webhooks/deliveries/{delivery_id}/retry': {
    responses: { 202: { delivery_id: '0197a0c2-3b1e-772f-8b0c-91a1b1c1d1e1', status: 'pending' } },
  },
  'POST /api/v1/webhooks/{webhook_id}/test': { responses: { 202: { delivery_id: ids.delivery } } },
  'GET /api/v1/webhooks/dlq': { responses: { 200: listOf(deadLetter) } },
  'GET /api/v1/webhooks/dlq/stats': {
    responses: {
      200: {
        total_entries: 3,
        not_requeued: 2,
        requeued: 1,
        top_failed_webhooks: [{ webhook_id: ids.webhook, webhook_name: webhook.name, count: 3 }],
      },
    },
  },
  'POST /api/v1/webhooks/dlq/{dlq_id}/retry': {
    responses: { 202: { delivery_id: ids.delivery, status: 'pending' } },
  },
  'POST /api/v1/webhooks/dlq/retry-matching': {
    request: { webhook_id: ids.webhook, from: '2026-03-10T00:00:00.000Z', error_contains: 'HTTP 503' },
    responses: { 202: { job_id: retryJobId, matched: 250 } },
  },
  'GET /api/v1/webhooks/dlq/retry-matching/{job_id}': {
    responses: {
      200: {
        job_id: retryJobId,
        status: 'running',
        matched: 250,
        queued: 200,
        failed: 0,
        created_at: '2026-03-10T19:00:00.000Z',
        finished_at: null,
      },
    },
  },
  'POST /api/v1/webhooks/deliveries/{delivery_id}/resend': {
    responses: { 202: { delivery_id: '0197a0c2-3b1f-7740-8c1d-a1b1c1d1e1f1', status: 'pending' } },
  },
  'GET /api/v1/webhooks/{webhook_id}/health': {
    responses: {
      200: {
        window: '24h',
        attempts: 1440,
        success_rate: 0.9958,
        p50_ms: 84.2,
        p95_ms: 412.7,
        last_failure_at: '2026-03-10T18:12:00.000Z',
        last_failure_message: 'HTTP 503 Service Unavailable',
        consecutive_failures: 0,
      },
    },
  },
  'POST /api/v1/webhooks/dlq/retry': {
    request: { dlq_ids: [ids.deadLetter, '0197a0c2-3b1c-750d-89ea-718191a1b1c2'] },
    responses: {
      202: {
        retried: [{ dlq_id: ids.deadLetter, delivery_id: '0197a0c2-3b1e-772f-8b0c-91a1b1c1d1e1' }],
        failed: [
          {
            dlq_id: '0197a0c2-3b1c-750d-89ea-718191a1b1c2',
            error_code: 'NOT_FOUND',
            detail: 'Dead-letter entry not found',
          },
        ],
      },
    },
  },
};
