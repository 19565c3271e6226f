/**
 * Deliveries and the dead-letter queue (contract §5, seed §4.4, the delivery portal of ADR 018):
 * GET /webhooks/deliveries, GET /webhooks/{id}/deliveries, GET /webhooks/deliveries/{delivery_id},
 * POST /webhooks/deliveries/{delivery_id}/retry, POST /webhooks/{id}/test, GET /webhooks/dlq,
 * GET /webhooks/dlq/stats, POST /webhooks/dlq/{dlq_id}/retry, POST /webhooks/dlq/retry; the
 * operations added for the portal (retry all matching, resend, health) in delivery-operations.routes.ts.
 * `/webhooks/deliveries` and `/webhooks/dlq` are static segments: the router prefers them to
 * `/webhooks/{webhook_id}`, so they never reach the webhook routes (a webhook id is a UUID anyway).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import { errorResponses, ListOf, page } from '../http/schemas.ts';
import { timeRange } from '../http/time-range.ts';
import {
  AllDeliveriesQuery,
  BulkRetryRequest,
  BulkRetryResponse,
  bulkRetryOut,
  DeadLetterSchema,
  DeadLetterStatsSchema,
  DeliveriesQuery,
  DeliveryDetailSchema,
  DeliveryIdParams,
  DeliverySchema,
  DlqIdParams,
  DlqQuery,
  deadLetterOut,
  deliveryDetailOut,
  deliveryOut,
  RetryResponse,
  statsOut,
  TestDeliveryResponse,
  WebhookIdParams,
} from './deliveries.schemas.ts';
import * as deliveries from './deliveries.service.ts';
import { deliveryOperationRoutes } from './delivery-operations.routes.ts';
import * as retries from './delivery-retries.service.ts';

const tags = ['webhooks'];
const read = { auth: { scope: 'webhooks:read' as const } };
const write = { auth: { scope: 'webhooks:write' as const } };
function deliveriesOut(result: deliveries.DeliveryPage) {
  return result.deliveries.map((d) =>
    deliveryOut(d, d.eventRowId === null ? undefined : result.subjects.get(d.eventRowId)),
  );
}

const FILTERS =
  'Filters are optional and combine with AND; `from`/`to` bound `created_at` inclusively (`from` after ' +
  '`to` → 422 `value_error` at `["query", "from"]`). Newest first (`created_at`, then id).';

export async function deliveryRoutes(
  fastify: FastifyInstance,
  ctx: deliveries.DeliveriesContext,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/webhooks/deliveries',
    {
      config: read,
      schema: {
        operationId: 'listDeliveries',
        tags,
        summary: "The workspace's deliveries across all webhooks, newest first",
        description: `The delivery log of every webhook of the workspace (deliveries of deleted webhooks included, with \`webhook_id\` null). ${FILTERS}`,
        querystring: AllDeliveriesQuery,
        response: { 200: ListOf(DeliverySchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const {
        offset = 0,
        limit = 50,
        webhook_id,
        status,
        event_type,
        status_class,
        from,
        to,
        event_id,
      } = request.query;
      const result = await deliveries.workspaceDeliveries(
        ctx,
        principalOf(request).workspaceId,
        {
          webhookId: webhook_id,
          eventRowId: event_id,
          status,
          eventType: event_type,
          statusClass: status_class,
          ...timeRange(from, to),
        },
        offset,
        limit,
      );
      return page(deliveriesOut(result), result.total, offset, limit);
    },
  );

  app.get(
    '/webhooks/:webhook_id/deliveries',
    {
      config: read,
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: "A webhook's deliveries, newest first",
        description: FILTERS,
        params: WebhookIdParams,
        querystring: DeliveriesQuery,
        response: { 200: ListOf(DeliverySchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, status, event_type, status_class, from, to, event_id } = request.query;
      const range = timeRange(from, to);
      const result = await deliveries.webhookDeliveries(
        ctx,
        principalOf(request).workspaceId,
        request.params.webhook_id,
        { status, eventType: event_type, statusClass: status_class, eventRowId: event_id, ...range },
        offset,
        limit,
      );
      return page(deliveriesOut(result), result.total, offset, limit);
    },
  );

  app.get(
    '/webhooks/deliveries/:delivery_id',
    {
      config: read,
      schema: {
        operationId: 'getDelivery',
        tags,
        summary: 'A delivery with its request and attempts',
        description:
          'The record, `request_body` (the bytes every attempt sends) and each attempt with the headers ' +
          'it was sent with (`request_headers`, custom header values masked) and the ' +
          "receiver's status and first 1 KiB of its answer.",
        params: DeliveryIdParams,
        response: { 200: DeliveryDetailSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { delivery, attempts, subject } = await deliveries.deliveryWithAttempts(
        ctx,
        principalOf(request).workspaceId,
        request.params.delivery_id,
      );
      return deliveryDetailOut(delivery, attempts, subject);
    },
  );

  app.post(
    '/webhooks/deliveries/:delivery_id/retry',
    {
      config: write,
      schema: {
        operationId: 'retryDelivery',
        tags,
        summary: 'Retry a delivery now',
        description:
          'A `pending` delivery waiting for its next attempt becomes due now (`next_retry_at` = now; the ' +
          'attempt counter goes on, the rate limit still applies) → 202 with the same `delivery_id`. A ' +
          '`failed` (dead-lettered) delivery is retried exactly as POST /webhooks/dlq/{dlq_id}/retry ' +
          'does → 202 with the NEW `delivery_id`. 409 `CONFLICT` for a delivery that succeeded, or one ' +
          'being attempted at this moment (wait for its outcome). 404 for a delivery whose webhook was ' +
          'deleted.',
        params: DeliveryIdParams,
        response: { 202: RetryResponse, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const id = await retries.retryDeliveryNow(
        ctx,
        principalOf(request).workspaceId,
        request.params.delivery_id,
      );
      return reply.status(202).send({ delivery_id: id, status: 'pending' as const });
    },
  );

  app.post(
    '/webhooks/:webhook_id/test',
    {
      config: write,
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send a `webhook.test` delivery',
        description:
          'Queues a signed delivery of event type `webhook.test`; follow it with GET /webhooks/deliveries/{delivery_id}.',
        params: WebhookIdParams,
        response: { 202: TestDeliveryResponse, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const id = await deliveries.sendTestDelivery(
        ctx,
        principalOf(request).workspaceId,
        request.params.webhook_id,
      );
      return reply.status(202).send({ delivery_id: id });
    },
  );

  app.get(
    '/webhooks/dlq',
    {
      config: read,
      schema: {
        operationId: 'listDeadLetters',
        tags,
        summary: 'Dead-letter entries, newest first',
        description:
          'Newest first (`queued_at`, then id). Filters are optional and combine with AND; `from`/`to` ' +
          'bound `queued_at` inclusively (`from` after `to` → 422 `value_error` at `["query", "from"]`).',
        querystring: DlqQuery,
        response: { 200: ListOf(DeadLetterSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, requeued, webhook_id, event_type, from, to } = request.query;
      const result = await deliveries.deadLetters(
        ctx,
        principalOf(request).workspaceId,
        { requeued, webhookId: webhook_id, eventType: event_type, ...timeRange(from, to) },
        offset,
        limit,
      );
      return page(result.entries.map(deadLetterOut), result.total, offset, limit);
    },
  );

  app.get(
    '/webhooks/dlq/stats',
    {
      config: read,
      schema: {
        operationId: 'getDeadLetterStats',
        tags,
        summary: 'Dead-letter statistics',
        response: { 200: DeadLetterStatsSchema, ...errorResponses(401, 403) },
      },
    },
    async (request) => statsOut(await deliveries.deadLetterStatistics(ctx, principalOf(request).workspaceId)),
  );

  app.post(
    '/webhooks/dlq/:dlq_id/retry',
    {
      config: write,
      schema: {
        operationId: 'retryDeadLetter',
        tags,
        summary: 'Retry a dead-lettered delivery',
        description:
          'Creates a new delivery (attempt counter 0, same payload and `X-Idempotency-Key`) and marks the entry requeued.',
        params: DlqIdParams,
        response: { 202: RetryResponse, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const id = await retries.retryDeadLetter(ctx, principalOf(request).workspaceId, request.params.dlq_id);
      return reply.status(202).send({ delivery_id: id, status: 'pending' as const });
    },
  );

  app.post(
    '/webhooks/dlq/retry',
    {
      config: write,
      schema: {
        operationId: 'retryDeadLetters',
        tags,
        summary: 'Retry many dead-lettered deliveries',
        description:
          'Each id is handled exactly as POST /webhooks/dlq/{dlq_id}/retry would handle it: retried (a new ' +
          'delivery, the entry marked requeued; an entry already requeued is retried again) or reported in ' +
          '`failed` with the error code and detail that retry would answer (`NOT_FOUND` for an unknown id, ' +
          "another workspace's, or an entry whose webhook was deleted). All ids are handled in one " +
          'transaction: an unexpected failure (500) retries none. 1..100 distinct ids, else 422.',
        body: BulkRetryRequest,
        response: { 202: BulkRetryResponse, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const result = await retries.retryDeadLetters(
        ctx,
        principalOf(request).workspaceId,
        request.body.dlq_ids,
      );
      return reply.status(202).send(bulkRetryOut(result));
    },
  );

  await deliveryOperationRoutes(fastify, ctx);
}
