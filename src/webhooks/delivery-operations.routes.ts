/**
 * Operating deliveries (contract §5, ADR 018): POST /webhooks/dlq/retry-matching and
 * GET /webhooks/dlq/retry-matching/{job_id}, POST /webhooks/deliveries/{delivery_id}/resend,
 * GET /webhooks/{webhook_id}/health. Registered by deliveryRoutes, beside the routes they extend.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import { errorResponses } from '../http/schemas.ts';
import { FieldValidationError } from '../shared/errors.ts';
import { DeliveryIdParams, RetryResponse, WebhookIdParams } from './deliveries.schemas.ts';
import type { DeliveriesContext } from './deliveries.service.ts';
import { webhookHealth } from './delivery-health.service.ts';
import {
  HealthQuery,
  healthOut,
  RetryJobAccepted,
  RetryJobParams,
  RetryJobSchema,
  RetryMatchingRequest,
  retryJobOut,
  WebhookHealthSchema,
} from './delivery-operations.schemas.ts';
import { resendDelivery } from './delivery-retries.service.ts';
import { RETRY_MATCHING_MAX, retryJobStatus, startRetryJob } from './dlq-retry-jobs.service.ts';

const tags = ['webhooks'];
const read = { auth: { scope: 'webhooks:read' as const } };
const write = { auth: { scope: 'webhooks:write' as const } };
const MAX = RETRY_MATCHING_MAX.toLocaleString('en');

function bodyRange(from: string | undefined, to: string | undefined): { from: Date | null; to: Date | null } {
  const range = {
    from: from === undefined ? null : new Date(from),
    to: to === undefined ? null : new Date(to),
  };
  if (range.from && range.to && range.from.getTime() > range.to.getTime()) {
    throw new FieldValidationError([
      { type: 'value_error', loc: ['body', 'from'], msg: 'from must not be after to' },
    ]);
  }
  return range;
}

export async function deliveryOperationRoutes(
  fastify: FastifyInstance,
  ctx: DeliveriesContext,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/webhooks/dlq/retry-matching',
    {
      config: write,
      schema: {
        operationId: 'retryMatchingDeadLetters',
        tags,
        summary: 'Retry every dead-letter entry matching a filter',
        description:
          'Retries every entry of the workspace not requeued yet that matches the filter (`webhook_id`, ' +
          '`event_type`, `from`/`to` on `queued_at`, `error_contains`; all optional, combined with AND; all pages, on the ' +
          'server): each exactly as POST /webhooks/dlq/{dlq_id}/retry does — a new delivery with the same ' +
          'payload and `X-Idempotency-Key`, the entry marked requeued. The set is fixed when asked: the ' +
          `matching entries not requeued at that moment, oldest first, at most ${MAX} (\`matched\`); entries ` +
          `beyond the first ${MAX}, and entries dead-lettered later (the retries' own failures included), stay ` +
          'in the queue — ask again once the job is done to take them. The job runs in the background in ' +
          'batches, stored in the database: follow it with GET /webhooks/dlq/retry-matching/{job_id} on any ' +
          "node. A batch commits whole with the job's progress, so a process that stops mid-way is resumed " +
          'by any node where it left off and no entry is retried twice. An entry requeued by another request ' +
          'meanwhile is skipped; an entry whose webhook was deleted counts as `failed`. `from` after `to` → ' +
          '422 `value_error` at `["body", "from"]`. With no entry matching → 202 with `matched` 0 and a job ' +
          'already `done`.',
        body: RetryMatchingRequest,
        response: { 202: RetryJobAccepted, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const { webhook_id, event_type, from, to, error_contains } = request.body;
      const job = await startRetryJob(ctx, principalOf(request).workspaceId, {
        webhookId: webhook_id ?? null,
        eventType: event_type ?? null,
        ...bodyRange(from, to),
        errorContains: error_contains ?? null,
      });
      return reply.status(202).send({ job_id: job.id, matched: job.matched });
    },
  );

  app.get(
    '/webhooks/dlq/retry-matching/:job_id',
    {
      config: read,
      schema: {
        operationId: 'getDeadLetterRetryJob',
        tags,
        summary: 'Progress of a "retry all matching" job',
        description:
          "`queued` and `failed` grow batch by batch until `status` is `done`. Another workspace's job → 404.",
        params: RetryJobParams,
        response: { 200: RetryJobSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      retryJobOut(await retryJobStatus(ctx, principalOf(request).workspaceId, request.params.job_id)),
  );

  app.post(
    '/webhooks/deliveries/:delivery_id/resend',
    {
      config: write,
      schema: {
        operationId: 'resendDelivery',
        tags,
        summary: 'Send a delivery again as a new delivery',
        description:
          "Whatever the delivery's status (`success` included) → 202 with a NEW delivery (`origin` " +
          '`resend`, `source_delivery_id` the old one, attempts counted from 1) of the same event to the ' +
          "webhook's current URL and method. The payload is the same bytes: its `id` and " +
          "`X-Idempotency-Key` stay, as a resend in Stripe or Svix keeps the event's id — it is the same " +
          'event, and a receiver that de-duplicates on the key may ignore it. The old delivery and its ' +
          'dead-letter entry are left as they are. A delivery whose webhook was deleted → 404 `Webhook not found`.',
        params: DeliveryIdParams,
        response: { 202: RetryResponse, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const id = await resendDelivery(ctx, principalOf(request).workspaceId, request.params.delivery_id);
      return reply.status(202).send({ delivery_id: id, status: 'pending' as const });
    },
  );

  app.get(
    '/webhooks/:webhook_id/health',
    {
      config: read,
      schema: {
        operationId: 'getWebhookHealth',
        tags,
        summary: "A webhook's delivery health",
        description:
          'Over the attempts started in the last `window` (`1h`, `6h`, `24h` default, `7d`; another value → ' +
          '422): `attempts`, `success_rate` (2xx answers / attempts; null with no attempt), `p50_ms`/`p95_ms` ' +
          '(nearest-rank percentiles of attempt durations), the last failed attempt (`last_failure_at`, ' +
          '`last_failure_message`) and `consecutive_failures` (failed attempts since the most recent success, ' +
          'within the window). Attempts are found through deliveries created at most 7 days before the ' +
          "window opens. Another workspace's webhook → 404.",
        params: WebhookIdParams,
        querystring: HealthQuery,
        response: { 200: WebhookHealthSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      healthOut(
        await webhookHealth(
          ctx,
          principalOf(request).workspaceId,
          request.params.webhook_id,
          request.query.window ?? '24h',
        ),
      ),
  );
}
