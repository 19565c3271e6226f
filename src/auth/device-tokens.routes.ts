/** /devices/{device_id}/tokens (contract §2.3b): create (token shown once), list, revoke. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, ListOf, page } from '../http/schemas.ts';
import {
  CreateDeviceTokenBody,
  CreatedDeviceTokenSchema,
  DeviceTokenParams,
  DeviceTokenSchema,
  DeviceTokensParams,
  DeviceTokensQuery,
  deviceTokenOut,
} from './device-tokens.schemas.ts';
import {
  createDeviceToken,
  type DeviceTokensContext,
  listTokens,
  revokeDeviceToken,
} from './device-tokens.service.ts';
import { principalOf } from './route-auth.ts';

const tags = ['devices'];
const write = { auth: { scope: 'devices:write' as const } };

const ABOUT =
  "A device token writes this device's locations and nothing else: `POST /devices/{device_id}/locations`, " +
  '`POST /locations/batch` (items of this device) and the tracker routes under `/ingest/`. Any other route ' +
  "answers it 403, another device's location route 404. Send it as `Authorization: Bearer`, `X-API-Key`, " +
  'or on the tracker routes as the HTTP Basic password or the `token` query parameter. It is rate-limited ' +
  "per token like an API key, and deleting the device revokes it. Put one on each phone: a leaked phone's " +
  'token can report only that phone.';

export async function deviceTokenRoutes(fastify: FastifyInstance, ctx: DeviceTokensContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/devices/:device_id/tokens',
    {
      // The token writes locations: a key that only manages devices must not mint itself a writer.
      config: { auth: { scope: 'devices:write', alsoScopes: ['locations:write'] } },
      schema: {
        operationId: 'createDeviceToken',
        tags,
        summary: 'Create a device token; the token is shown once',
        description: `${ABOUT} Creating one needs \`locations:write\` besides \`devices:write\`.`,
        params: DeviceTokensParams,
        body: CreateDeviceTokenBody,
        response: { 201: CreatedDeviceTokenSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { deviceToken, token } = await createDeviceToken(
        ctx,
        principalOf(request).workspaceId,
        request.params.device_id,
        request.body?.name ?? null,
      );
      return reply.status(201).send({ ...deviceTokenOut(deviceToken), token });
    },
  );

  app.get(
    '/devices/:device_id/tokens',
    {
      config: write,
      schema: {
        operationId: 'listDeviceTokens',
        tags,
        summary: "List a device's tokens (without their secrets), newest first",
        params: DeviceTokensParams,
        querystring: DeviceTokensQuery,
        response: { 200: ListOf(DeviceTokenSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const offset = request.query.offset ?? 0;
      const limit = request.query.limit ?? 50;
      const { tokens, total } = await listTokens(
        ctx,
        principalOf(request).workspaceId,
        request.params.device_id,
        offset,
        limit,
      );
      return page(tokens.map(deviceTokenOut), total, offset, limit);
    },
  );

  app.delete(
    '/devices/:device_id/tokens/:token_id',
    {
      config: write,
      schema: {
        operationId: 'revokeDeviceToken',
        tags,
        summary: 'Revoke a device token (at once)',
        params: DeviceTokenParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await revokeDeviceToken(
        ctx,
        principalOf(request).workspaceId,
        request.params.device_id,
        request.params.token_id,
      );
      return reply.status(204).send(null);
    },
  );
}
