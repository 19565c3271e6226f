/** Examples of /webhooks, their deliveries and the dead-letter queue (contract §5). */
import type { OperationExamples } from './operation-example.ts';
import {
  attempts,
  deadLetter,
  delivery,
  deliveryBody,
  ids,
  listOf,
  webhook,
  webhookSecret,
} from './records.ts';

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
