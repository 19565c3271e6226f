/**
 * /events (contract §4.3): the workspace's geofence events, filtered, newest first; one event with
 * the payload its receivers get, and the workflow runs it started (its deliveries: GET
 * /webhooks/deliveries?event_id=).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import { errorResponses, ListOf, PaginationQuery, page } from '../http/schemas.ts';
import { timeRange } from '../http/time-range.ts';
import { geofenceEventBody } from './event-payload.ts';
import { EventRunSchema, eventRunOut } from './event-runs.schemas.ts';
import { EventParams, EventPayloadSchema, EventSchema, eventOut, ListEventsQuery } from './events.schemas.ts';
import * as events from './events.service.ts';

const tags = ['events'];
const read = { auth: { scope: 'events:read' as const } };

export async function eventRoutes(fastify: FastifyInstance, ctx: events.EventsContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/events',
    {
      config: read,
      schema: {
        operationId: 'listEvents',
        tags,
        summary: 'Geofence events, newest first',
        description:
          'Ordered by `occurred_at` (the location timestamp), newest first; `from`/`to` are inclusive ' +
          '(`from` after `to` → 422 `value_error` at `["query", "from"]`).',
        querystring: ListEventsQuery,
        response: { 200: ListOf(EventSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, device_id, geofence_id, event_type, from, to } = request.query;
      const range = timeRange(from, to);
      const result = await events.listEvents(
        ctx,
        principalOf(request).workspaceId,
        {
          deviceId: device_id,
          geofenceId: geofence_id,
          eventType: event_type,
          from: range.from,
          to: range.to,
        },
        offset,
        limit,
      );
      return page(result.events.map(eventOut), result.total, offset, limit);
    },
  );

  app.get(
    '/events/:event_id',
    {
      config: read,
      schema: {
        operationId: 'getEvent',
        tags,
        summary: 'One geofence event (by its record id)',
        params: EventParams,
        response: { 200: EventSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      eventOut(await events.getEvent(ctx, principalOf(request).workspaceId, request.params.event_id)),
  );

  app.get(
    '/events/:event_id/payload',
    {
      config: read,
      schema: {
        operationId: 'getEventPayload',
        tags,
        summary: 'The webhook payload of one event, as its deliveries send it',
        description:
          "The body of every delivery of this event (seed §6.3) less the delivery's own `id`, which is " +
          'its `X-Idempotency-Key`; workflow `webhook` actions send the same body.',
        params: EventParams,
        response: { 200: EventPayloadSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      geofenceEventBody(
        await events.getEvent(ctx, principalOf(request).workspaceId, request.params.event_id),
      ),
  );

  app.get(
    '/events/:event_id/workflow-runs',
    {
      config: { auth: { scope: 'events:read', alsoScopes: ['workflows:read'] } },
      schema: {
        operationId: 'listEventWorkflowRuns',
        tags,
        summary: 'The workflow runs one event started, newest first',
        description:
          "Tied to the event record's `id`, not to the seed form `event_id`, which events of several " +
          'devices can share. The deliveries of an event: GET /webhooks/deliveries?event_id={id}.',
        params: EventParams,
        querystring: PaginationQuery,
        response: { 200: ListOf(EventRunSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50 } = request.query;
      const { workspaceId } = principalOf(request);
      const result = await events.listRunsOfEvent(ctx, workspaceId, request.params.event_id, offset, limit);
      return page(result.runs.map(eventRunOut), result.total, offset, limit);
    },
  );
}
