/**
 * Deliveries and the dead-letter queue (contract §5, seed §4.4): GET /webhooks/{id}/deliveries,
 * GET /webhooks/deliveries/{delivery_id}, POST /webhooks/{id}/test, GET /webhooks/dlq,
 * GET /webhooks/dlq/stats, POST /webhooks/dlq/{dlq_id}/retry.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import { errorResponses, ListOf, page } from '../http/schemas.ts';
import {
  attemptOut,
  DeadLetterSchema,
  DeadLetterStatsSchema,
  DeliveriesQuery,
  DeliveryDetailSchema,
  DeliveryIdParams,
  DeliverySchema,
  DlqIdParams,
  DlqQuery,
  deadLetterOut,
  deliveryOut,
  RetryResponse,
  statsOut,
  TestDeliveryResponse,
  WebhookIdParams,
} from './deliveries.schemas.ts';
import * as deliveries from './deliveries.service.ts';

const tags = ['webhooks'];
const read = { auth: { scope: 'webhooks:read' as const } };
const write = { auth: { scope: 'webhooks:write' as const } };

export async function deliveryRoutes(
  fastify: FastifyInstance,
  ctx: deliveries.DeliveriesContext,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/webhooks/:webhook_id/deliveries',
    {
      config: read,
      schema: {
        tags,
        summary: "A webhook's deliveries, newest first",
        params: WebhookIdParams,
        querystring: DeliveriesQuery,
        response: { 200: ListOf(DeliverySchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, status } = request.query;
      const result = await deliveries.webhookDeliveries(
        ctx,
        principalOf(request).workspaceId,
        request.params.webhook_id,
        status,
        offset,
        limit,
      );
      return page(result.deliveries.map(deliveryOut), result.total, offset, limit);
    },
  );

  app.get(
    '/webhooks/deliveries/:delivery_id',
    {
      config: read,
      schema: {
        tags,
        summary: 'A delivery with its attempts',
        params: DeliveryIdParams,
        response: { 200: DeliveryDetailSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { delivery, attempts } = await deliveries.deliveryWithAttempts(
        ctx,
        principalOf(request).workspaceId,
        request.params.delivery_id,
      );
      return { ...deliveryOut(delivery), attempts: attempts.map(attemptOut) };
    },
  );

  app.post(
    '/webhooks/:webhook_id/test',
    {
      config: write,
      schema: {
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
        tags,
        summary: 'Dead-letter entries, newest first',
        querystring: DlqQuery,
        response: { 200: ListOf(DeadLetterSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, requeued } = request.query;
      const result = await deliveries.deadLetters(
        ctx,
        principalOf(request).workspaceId,
        requeued,
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
        tags,
        summary: 'Retry a dead-lettered delivery',
        description:
          'Creates a new delivery (attempt counter 0, same payload and `X-Idempotency-Key`) and marks the entry requeued.',
        params: DlqIdParams,
        response: { 202: RetryResponse, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const id = await deliveries.retryDeadLetter(
        ctx,
        principalOf(request).workspaceId,
        request.params.dlq_id,
      );
      return reply.status(202).send({ delivery_id: id, status: 'pending' as const });
    },
  );
}
