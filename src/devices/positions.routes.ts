/**
 * GET /devices/positions (ADR 016): every device's last position in one answer, for a map. Not
 * paginated: the dashboard draws every device at once (10,000 and more), and pages of 200 would take
 * 50 requests and show a map stitched from different moments. Capped at MAX_POSITIONS devices.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { errorResponses } from '../http/schemas.ts';
import { devicePositions } from './positions.repository.ts';
import { DevicePositionsSchema, MAX_POSITIONS } from './positions.schemas.ts';
import { positionsJson } from './positions-json.ts';

export async function positionRoutes(
  fastify: FastifyInstance,
  ctx: { db: Db; capabilities: DialectCapabilities },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/devices/positions',
    {
      config: { auth: { scope: 'devices:read' } },
      schema: {
        operationId: 'listDevicePositions',
        tags: ['devices'],
        summary: "Every device's last position, as GeoJSON, for a map",
        description:
          'One answer, not paginated: a map draws every device at once. Devices without a location are left ' +
          `out. At most ${MAX_POSITIONS.toLocaleString('en')} devices (the oldest), with \`truncated: true\` beyond. ` +
          'With GET /stream: read this after `ready`, then apply `location` messages newer than `recorded_at`.',
        response: { 200: DevicePositionsSchema, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const rows = await devicePositions(
        ctx.db,
        ctx.capabilities,
        principalOf(request).workspaceId,
        MAX_POSITIONS + 1,
      );
      const truncated = rows.length > MAX_POSITIONS;
      if (truncated) rows.length = MAX_POSITIONS;
      // JSON text already (positions-json.ts): sent as it is, not serialised again.
      return reply.type('application/json; charset=utf-8').send(positionsJson(rows, truncated) as never);
    },
  );
}
