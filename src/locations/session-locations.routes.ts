/**
 * A tracking session's locations (contract §4.4). Location history is this folder's, a device's
 * (locations.routes.ts) as a session's: tracking/ keeps the sessions and imports nothing of
 * locations/, whose ingestion keeps their summaries. Registered beside the session routes.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import { errorResponses, ListOf, PaginationQuery, page } from '../http/schemas.ts';
import { SessionParams } from '../tracking/sessions.schemas.ts';
import type { IngestContext } from './ingest.service.ts';
import { LocationSchema, locationOut } from './locations.schemas.ts';
import { sessionLocations } from './locations.service.ts';

export async function sessionLocationRoutes(
  fastify: FastifyInstance,
  ctx: Pick<IngestContext, 'db'>,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/sessions/:session_id/locations',
    {
      config: { auth: { scope: 'devices:read' } },
      schema: {
        operationId: 'listTrackingSessionLocations',
        tags: ['tracking sessions'],
        summary: "A session's locations, newest first",
        params: SessionParams,
        querystring: PaginationQuery,
        response: { 200: ListOf(LocationSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50 } = request.query;
      const result = await sessionLocations(
        ctx,
        principalOf(request).workspaceId,
        request.params.session_id,
        offset,
        limit,
      );
      return page(result.locations.map(locationOut), result.total, offset, limit);
    },
  );
}
