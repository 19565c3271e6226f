/**
 * Location ingestion and history (contract §4.2): POST /devices/{id}/locations, POST
 * /locations/batch, GET /devices/{id}/locations.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import type { EventQuota } from '../billing/event-quota.ts';
import { eventOut } from '../events/events.schemas.ts';
import { errorResponses, ListOf, page } from '../http/schemas.ts';
import { textIssues } from '../http/text-rules.ts';
import { createAjv } from '../http/validation.ts';
import { toValidationIssues } from '../http/validation-errors.ts';
import { NotFoundError } from '../shared/errors.ts';
import type { IngestContext } from './ingest.service.ts';
import type { IngestCoalescer } from './ingest-coalescer.ts';
import {
  BatchBody,
  BatchEnvelope,
  BatchItemSchema,
  BatchResponse,
  DeviceLocationsParams,
  LocationBody,
  LocationHistoryQuery,
  LocationSchema,
  locationOut,
  RecordLocationResponse,
} from './locations.schemas.ts';
import * as locations from './locations.service.ts';

const tags = ['locations'];
export const BATCH_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

export async function locationRoutes(
  fastify: FastifyInstance,
  // `quota`: the event quota gate (contract §7: 429 RATE_LIMITED at 120 %, 403 at 150 %).
  ctx: IngestContext & { quota?: EventQuota | undefined; coalescer: IngestCoalescer },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ajv = createAjv(false);
  const validateEnvelope = ajv.compile(BatchEnvelope);
  const validateItem = ajv.compile(BatchItemSchema);
  const coalescer = ctx.coalescer;

  app.post(
    '/devices/:device_id/locations',
    {
      config: { auth: { scope: 'locations:write', deviceToken: true } },
      schema: {
        operationId: 'createLocation',
        tags,
        summary: 'Record a location and evaluate it against the geofences',
        params: DeviceLocationsParams,
        body: LocationBody,
        response: { 201: RecordLocationResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const workspaceId = principal.workspaceId;
      // A device token writes its own device only; another device is as unknown to it as any.
      if (principal.kind === 'device' && principal.deviceId !== request.params.device_id) {
        throw new NotFoundError('Device');
      }
      await ctx.quota?.admit(workspaceId);
      const { location, events } = await locations.recordLocation(
        ctx,
        coalescer,
        workspaceId,
        request.params.device_id,
        request.body,
      );
      await ctx.quota?.record(workspaceId, events.length);
      return reply.status(201).send({ location: locationOut(location), events: events.map(eventOut) });
    },
  );

  app.post(
    '/locations/batch',
    {
      // Contract §1: an item breaking the text rules is rejected alone (checked below, item by item).
      config: { auth: { scope: 'locations:write', deviceToken: true }, bodyTextRulesPerItem: true },
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      // The documented body describes every item, but a bad item must not fail the batch: the
      // route validates only the envelope and the handler checks each item on its own.
      validatorCompiler: () => validateEnvelope,
      schema: {
        operationId: 'createLocationBatch',
        tags,
        summary: 'Record up to 1000 locations of any devices of the workspace',
        body: BatchBody,
        response: { 200: BatchResponse, ...errorResponses(401, 403, 413, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const workspaceId = principal.workspaceId;
      await ctx.quota?.admit(workspaceId);
      const raw = (request.body as { locations: unknown[] }).locations;
      const valid: Array<{ index: number; item: locations.BatchItem }> = [];
      const rejected: locations.BatchRejection[] = [];
      raw.forEach((item, index) => {
        const textProblems = textIssues(item, ['body', 'locations', index]);
        if (textProblems.length > 0) {
          rejected.push({ index, detail: textProblems });
        } else if (validateItem(item)) {
          valid.push({ index, item: item as locations.BatchItem });
        } else {
          const issues = toValidationIssues(validateItem.errors ?? [], 'body');
          rejected.push({
            index,
            detail: issues.map((i) => ({ ...i, loc: ['body', 'locations', index, ...i.loc.slice(1)] })),
          });
        }
      });
      const result = await locations.recordBatch(
        ctx,
        workspaceId,
        valid,
        rejected,
        principal.kind === 'device' ? principal.deviceId : undefined,
      );
      await ctx.quota?.record(workspaceId, result.events.length);
      return { accepted: result.accepted, rejected: result.rejected, events: result.events.map(eventOut) };
    },
  );

  app.get(
    '/devices/:device_id/locations',
    {
      config: { auth: { scope: 'devices:read' } },
      schema: {
        operationId: 'listDeviceLocations',
        tags,
        summary: "A device's locations, newest first",
        params: DeviceLocationsParams,
        querystring: LocationHistoryQuery,
        response: { 200: ListOf(LocationSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, from, to, session_id } = request.query;
      const result = await locations.locationHistory(
        ctx,
        principalOf(request).workspaceId,
        request.params.device_id,
        {
          from: from === undefined ? undefined : new Date(from),
          to: to === undefined ? undefined : new Date(to),
          sessionId: session_id,
        },
        offset,
        limit,
      );
      return page(result.locations.map(locationOut), result.total, offset, limit);
    },
  );
}
