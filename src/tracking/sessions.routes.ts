/**
 * Tracking sessions (contract §4.4): start on a device, stop, list, read. Their locations are
 * listed by locations/session-locations.routes.ts, registered right after these.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import { errorResponses, ListOf, page } from '../http/schemas.ts';
import {
  DeviceSessionParams,
  ListSessionsQuery,
  SessionParams,
  SessionSchema,
  StartSessionBody,
  sessionOut,
} from './sessions.schemas.ts';
import * as sessions from './sessions.service.ts';

const tags = ['tracking sessions'];
const read = { auth: { scope: 'devices:read' as const } };
const write = { auth: { scope: 'devices:write' as const } };

export async function sessionRoutes(fastify: FastifyInstance, ctx: sessions.SessionsContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/devices/:device_id/sessions',
    {
      config: write,
      // The body is optional: a bare POST starts a session without metadata.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'startTrackingSession',
        tags,
        summary: 'Start a tracking session on a device',
        description:
          'Locations received while it is active carry its id and update its summary. A device has at most ' +
          'one active session: a second start → 400 `SESSION_ACTIVE`.',
        params: DeviceSessionParams,
        body: StartSessionBody,
        response: { 201: SessionSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const session = await sessions.startSession(
        ctx,
        principalOf(request).workspaceId,
        request.params.device_id,
        request.body?.metadata,
      );
      return reply.status(201).send(sessionOut(session));
    },
  );

  app.post(
    '/sessions/:session_id/stop',
    {
      config: write,
      schema: {
        operationId: 'stopTrackingSession',
        tags,
        summary: 'Stop (complete) a tracking session',
        description: 'Stopping a completed session → 400.',
        params: SessionParams,
        response: { 200: SessionSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      sessionOut(
        await sessions.stopSession(ctx, principalOf(request).workspaceId, request.params.session_id),
      ),
  );

  app.get(
    '/sessions',
    {
      config: read,
      schema: {
        operationId: 'listTrackingSessions',
        tags,
        summary: 'Tracking sessions, newest first',
        querystring: ListSessionsQuery,
        response: { 200: ListOf(SessionSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, device_id, status } = request.query;
      const result = await sessions.listSessions(
        ctx,
        principalOf(request).workspaceId,
        { deviceId: device_id, status },
        offset,
        limit,
      );
      return page(result.sessions.map(sessionOut), result.total, offset, limit);
    },
  );

  app.get(
    '/sessions/:session_id',
    {
      config: read,
      schema: {
        operationId: 'getTrackingSession',
        tags,
        summary: 'One tracking session with its summary',
        params: SessionParams,
        response: { 200: SessionSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      sessionOut(await sessions.getSession(ctx, principalOf(request).workspaceId, request.params.session_id)),
  );
}
