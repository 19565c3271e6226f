/** /devices (contract §4.1): CRUD and the filtered list. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../auth/route-auth.ts';
import { errorResponses, ListOf, page } from '../http/schemas.ts';
import {
  CreateDeviceBody,
  DeviceParams,
  DeviceSchema,
  deviceOut,
  ListDevicesQuery,
  UpdateDeviceBody,
} from './devices.schemas.ts';
import * as devices from './devices.service.ts';

const tags = ['devices'];
const read = { auth: { scope: 'devices:read' as const } };
const write = { auth: { scope: 'devices:write' as const } };

export async function deviceRoutes(
  fastify: FastifyInstance,
  ctx: devices.DevicesContext & { afterDelete?: (deviceId: string) => void },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/devices',
    {
      config: write,
      schema: {
        operationId: 'createDevice',
        tags,
        summary: 'Create a device',
        body: CreateDeviceBody,
        response: { 201: DeviceSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const device = await devices.createDevice(ctx, principalOf(request).workspaceId, {
        name: body.name,
        externalId: body.external_id,
        userId: body.user_id,
        metadata: body.metadata,
      });
      return reply.status(201).send(deviceOut(device));
    },
  );

  app.get(
    '/devices',
    {
      config: read,
      schema: {
        operationId: 'listDevices',
        tags,
        summary: 'List devices, newest first unless `sort` says otherwise',
        querystring: ListDevicesQuery,
        response: { 200: ListOf(DeviceSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, external_id, q, sort } = request.query;
      const result = await devices.listDevices(
        ctx,
        principalOf(request).workspaceId,
        { externalId: external_id, q },
        offset,
        limit,
        sort,
      );
      return page(result.devices.map(deviceOut), result.total, offset, limit);
    },
  );

  app.get(
    '/devices/:device_id',
    {
      config: read,
      schema: {
        operationId: 'getDevice',
        tags,
        summary: 'One device, with its last location and the geofences it is inside',
        params: DeviceParams,
        response: { 200: DeviceSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      deviceOut(await devices.getDevice(ctx, principalOf(request).workspaceId, request.params.device_id)),
  );

  app.patch(
    '/devices/:device_id',
    {
      config: write,
      schema: {
        operationId: 'updateDevice',
        tags,
        summary: 'Update a device (partial)',
        params: DeviceParams,
        body: UpdateDeviceBody,
        response: { 200: DeviceSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const body = request.body;
      const device = await devices.updateDevice(
        ctx,
        principalOf(request).workspaceId,
        request.params.device_id,
        {
          name: body.name,
          externalId: body.external_id,
          userId: body.user_id,
          metadata: body.metadata,
        },
      );
      return deviceOut(device);
    },
  );

  app.delete(
    '/devices/:device_id',
    {
      config: write,
      schema: {
        operationId: 'deleteDevice',
        tags,
        summary: 'Delete a device',
        description:
          'Its locations, tracking sessions and device tokens go with it (the tokens stop working at once); its geofence events stay.',
        params: DeviceParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await devices.deleteDevice(ctx, principalOf(request).workspaceId, request.params.device_id);
      // Its device tokens went with it (a foreign key); cached ones must stop at once too.
      ctx.afterDelete?.(request.params.device_id);
      return reply.status(204).send(null);
    },
  );
}
