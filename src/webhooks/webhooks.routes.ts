/** /webhooks (contract §5): endpoint CRUD and the signing secret. Deliveries: the engine's routes. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../auth/route-auth.ts';
import { errorResponses, ListOf, page } from '../http/schemas.ts';
import type { WebhookChanges } from './webhooks.repository.ts';
import {
  CreatedWebhookSchema,
  CreateWebhookBody,
  DEFAULT_EVENTS,
  ListWebhooksQuery,
  SecretSchema,
  type UpdateWebhookBody,
  UpdateWebhookBody as UpdateWebhookBodySchema,
  WebhookParams,
  WebhookSchema,
  webhookOut,
} from './webhooks.schemas.ts';
import * as webhooks from './webhooks.service.ts';

const tags = ['webhooks'];
const read = { auth: { scope: 'webhooks:read' as const } };
const write = { auth: { scope: 'webhooks:write' as const } };

const PRIVATE_TARGET_NOTE =
  'A url whose host is a literal loopback, private, link-local, CGNAT, multicast or metadata IP address ' +
  '(in any spelling) → 400 VALIDATION_ERROR unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true. Reserved custom ' +
  'headers, invalid header names, another url scheme and geofence ids outside the workspace → 422.';

function changesFrom(body: UpdateWebhookBody): WebhookChanges {
  return {
    name: body.name,
    url: body.url,
    method: body.method,
    contentType: body.content_type,
    timeoutSeconds: body.timeout_seconds,
    headers: body.headers,
    rateLimitPerMinute: body.rate_limit_per_minute,
    events: body.events,
    geofenceIds: body.geofence_ids,
    enabled: body.enabled,
  };
}

export async function webhookRoutes(fastify: FastifyInstance, ctx: webhooks.WebhooksContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/webhooks',
    {
      config: write,
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Create a webhook',
        description:
          `The response carries the signing secret (\`whsec_…\`). ${PRIVATE_TARGET_NOTE} ` +
          'Subscriptions apply when an event is dispatched: a moment after it is stored in a workspace ' +
          'with an enabled webhook, as it is stored (to nobody) in a workspace without one. A new or ' +
          're-enabled webhook therefore receives the events recorded from about then on, never older ones.',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhookSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      // The schema's defaults have filled every optional field but headers and geofence_ids.
      const { webhook, secret } = await webhooks.createWebhook(ctx, principalOf(request).workspaceId, {
        name: b.name,
        url: b.url,
        method: b.method ?? 'POST',
        contentType: b.content_type ?? 'application/json',
        timeoutSeconds: b.timeout_seconds ?? 30,
        headers: b.headers ?? {},
        rateLimitPerMinute: b.rate_limit_per_minute ?? 60,
        events: b.events ?? [...DEFAULT_EVENTS],
        geofenceIds: b.geofence_ids ?? null,
        enabled: b.enabled ?? true,
      });
      return reply.status(201).send({ ...webhookOut(webhook), secret });
    },
  );

  app.get(
    '/webhooks',
    {
      config: read,
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: 'List webhooks, newest first',
        querystring: ListWebhooksQuery,
        response: { 200: ListOf(WebhookSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, enabled } = request.query;
      const result = await webhooks.listWebhooks(
        ctx,
        principalOf(request).workspaceId,
        { enabled },
        offset,
        limit,
      );
      return page(result.webhooks.map(webhookOut), result.total, offset, limit);
    },
  );

  app.get(
    '/webhooks/:webhook_id',
    {
      config: read,
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'One webhook (without its secret)',
        params: WebhookParams,
        response: { 200: WebhookSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      webhookOut(await webhooks.getWebhook(ctx, principalOf(request).workspaceId, request.params.webhook_id)),
  );

  app.patch(
    '/webhooks/:webhook_id',
    {
      config: write,
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Update a webhook (partial)',
        description: PRIVATE_TARGET_NOTE,
        params: WebhookParams,
        body: UpdateWebhookBodySchema,
        response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { workspaceId } = principalOf(request);
      const changes = changesFrom(request.body);
      return webhookOut(await webhooks.updateWebhook(ctx, workspaceId, request.params.webhook_id, changes));
    },
  );

  app.delete(
    '/webhooks/:webhook_id',
    {
      config: write,
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook',
        description: 'Its delivery records stay, with `webhook_id` null.',
        params: WebhookParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await webhooks.deleteWebhook(ctx, principalOf(request).workspaceId, request.params.webhook_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/webhooks/:webhook_id/secret',
    {
      // Revealing the secret lets its holder forge deliveries, so it needs the write scope.
      config: write,
      schema: {
        operationId: 'getWebhookSecret',
        tags,
        summary: 'The signing secret of a webhook',
        description: 'Needs `webhooks:write`: whoever holds the secret can forge deliveries.',
        params: WebhookParams,
        response: { 200: SecretSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({
      secret: await webhooks.revealSecret(ctx, principalOf(request).workspaceId, request.params.webhook_id),
    }),
  );

  app.post(
    '/webhooks/:webhook_id/rotate-secret',
    {
      config: write,
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'Replace the signing secret',
        description:
          'Answers the new secret. The old one stops at once: every later attempt, including retries of ' +
          'earlier deliveries, is signed with the new secret.',
        params: WebhookParams,
        response: { 200: SecretSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({
      secret: await webhooks.rotateSecret(ctx, principalOf(request).workspaceId, request.params.webhook_id),
    }),
  );
}
