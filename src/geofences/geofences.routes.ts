/**
 * /geofences (contract §3): CRUD, filtered list, the point query `/geofences/contains`, the
 * devices inside a geofence now (§4.5), and bulk import (`/geofences/batch`) and export
 * (`/geofences/export`, GeoJSON).
 */
import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../auth/route-auth.ts';
import { domainErrorBody } from '../http/error-handler.ts';
import { errorResponses, ListOf, PaginationQuery, page } from '../http/schemas.ts';
import { FieldValidationError } from '../shared/errors.ts';
import {
  BatchRequest,
  BatchResult,
  EXPORT_DESCRIPTION,
  ExportQuery,
  FeatureCollectionOut,
  featureCollectionText,
} from './geofence-batch.schemas.ts';
import { writeBatch } from './geofence-batch.service.ts';
import { envelopeIssues, parseBatch } from './geofence-batch-input.ts';
import {
  ContainsQuery,
  CreateGeofenceBody,
  GeofenceDeviceSchema,
  GeofenceParams,
  GeofenceSchema,
  geofenceDeviceOut,
  geofenceOut,
  ListGeofencesQuery,
  UpdateGeofenceBody,
} from './geofences.schemas.ts';
import * as geofences from './geofences.service.ts';

const tags = ['geofences'];
const read = { auth: { scope: 'geofences:read' as const } };
const write = { auth: { scope: 'geofences:write' as const } };

/** As batch ingestion (contract §1): 1,000 geofences of a few hundred vertices fit. */
export const GEOFENCE_BATCH_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/**
 * The batch route checks only the body as a whole (a 422 for the request); each item is checked
 * by the handler on its own, so one bad item does not fail the others.
 */
function validateBatchEnvelope(body: unknown): true | { error: FieldValidationError } {
  const issues = envelopeIssues(body);
  return issues.length === 0 ? true : { error: new FieldValidationError(issues) };
}

export async function geofenceRoutes(
  fastify: FastifyInstance,
  ctx: geofences.GeofencesContext,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/geofences',
    {
      config: write,
      schema: {
        operationId: 'createGeofence',
        tags,
        summary: 'Create a geofence (polygon or circle)',
        description:
          'Validates the geometry (see the `geometry` field) and stores its normalised form with its bbox.',
        body: CreateGeofenceBody,
        response: { 201: GeofenceSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const geofence = await geofences.createGeofence(ctx, principalOf(request).workspaceId, {
        name: body.name,
        description: body.description,
        externalId: body.external_id,
        geometry: body.geometry,
        metadata: body.metadata,
        enabled: body.enabled,
        rules: {
          dwellSeconds: body.dwell_seconds ?? null,
          exitBufferM: body.exit_buffer_m ?? null,
          maxAccuracyM: body.max_accuracy_m ?? null,
        },
      });
      return reply.status(201).send(geofenceOut(geofence));
    },
  );

  app.post(
    '/geofences/batch',
    {
      // Contract §1: an item breaking the text rules is rejected alone (checked item by item).
      config: { ...write, bodyTextRulesPerItem: true },
      bodyLimit: GEOFENCE_BATCH_BODY_LIMIT_BYTES,
      validatorCompiler: () => validateBatchEnvelope,
      schema: {
        operationId: 'upsertGeofences',
        tags,
        summary: 'Create or update (by external_id) up to 1000 geofences; also takes GeoJSON',
        description:
          'Each item is handled as POST /geofences would handle it and lands in `created`, `updated` or ' +
          '`rejected`; see the request body for the rules.',
        body: BatchRequest,
        response: { 200: BatchResult, ...errorResponses(401, 403, 413) },
      },
    },
    async (request) => {
      const workspaceId = principalOf(request).workspaceId;
      const parsed = parseBatch(request.body as Record<string, unknown>);
      const outcome = await writeBatch(ctx, workspaceId, parsed.items, parsed.rejected);
      return {
        created: outcome.created.map(geofenceOut),
        updated: outcome.updated.map(geofenceOut),
        rejected: outcome.rejected.map(({ index, error }) => ({ index, ...domainErrorBody(error) })),
      };
    },
  );

  // A static segment, like /geofences/contains.
  app.get(
    '/geofences/export',
    {
      config: read,
      schema: {
        operationId: 'exportGeofences',
        tags,
        summary: 'All geofences as one GeoJSON FeatureCollection',
        description: EXPORT_DESCRIPTION,
        querystring: ExportQuery,
        response: {
          200: {
            description: 'The FeatureCollection',
            content: { 'application/geo+json': { schema: FeatureCollectionOut } },
          },
          ...errorResponses(401, 403),
        },
      },
    },
    async (request, reply) => {
      const { enabled, q } = request.query;
      const pages = geofences.exportGeofences(ctx, principalOf(request).workspaceId, {
        enabled,
        nameContains: q,
      });
      // The first page is read before the answer starts, so a failure there is an ordinary error answer.
      const first = await pages.next();
      async function* all() {
        if (!first.done) yield first.value;
        yield* pages;
      }
      // Streamed text: the schema documents it, nothing serialises it (hence the cast).
      const body = Readable.from(featureCollectionText(all()));
      return reply.type('application/geo+json').send(body as never);
    },
  );

  app.get(
    '/geofences',
    {
      config: read,
      schema: {
        operationId: 'listGeofences',
        tags,
        summary: 'List geofences, newest first',
        querystring: ListGeofencesQuery,
        response: { 200: ListOf(GeofenceSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, enabled, external_id, q } = request.query;
      const result = await geofences.listGeofences(
        ctx,
        principalOf(request).workspaceId,
        { enabled, externalId: external_id, nameContains: q },
        offset,
        limit,
      );
      return page(result.geofences.map(geofenceOut), result.total, offset, limit);
    },
  );

  // A static segment: the router prefers it to `/geofences/:geofence_id` whatever the order.
  app.get(
    '/geofences/contains',
    {
      config: read,
      schema: {
        operationId: 'listGeofencesContainingPoint',
        tags,
        summary: 'Enabled geofences containing a point',
        description:
          'Answered by the same in-memory index as location evaluation; a point on a boundary is inside. ' +
          'Writes made through this node show at once; writes made through another node within a short ' +
          'interval (GEOFENCE_INDEX_CHECK_MS, default 250 ms).',
        querystring: ContainsQuery,
        response: { 200: ListOf(GeofenceSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { lng, lat, offset = 0, limit = 50 } = request.query;
      const result = await geofences.geofencesContaining(
        ctx,
        principalOf(request).workspaceId,
        lng,
        lat,
        offset,
        limit,
      );
      return page(result.geofences.map(geofenceOut), result.total, offset, limit);
    },
  );

  app.get(
    '/geofences/:geofence_id',
    {
      config: read,
      schema: {
        operationId: 'getGeofence',
        tags,
        summary: 'One geofence',
        params: GeofenceParams,
        response: { 200: GeofenceSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      geofenceOut(
        await geofences.getGeofence(ctx, principalOf(request).workspaceId, request.params.geofence_id),
      ),
  );

  app.get(
    '/geofences/:geofence_id/devices',
    {
      config: read,
      schema: {
        operationId: 'listGeofenceDevices',
        tags,
        summary: 'Devices inside a geofence now',
        description:
          'The devices whose latest evaluated location put them inside the geofence (contract §4.5), the ' +
          'latest to enter first, each with the start of its visit (`entered_at`) and whether its `dwell` ' +
          'event happened (`dwelling`). A device leaves the list with its `exit`.',
        params: GeofenceParams,
        querystring: PaginationQuery,
        response: { 200: ListOf(GeofenceDeviceSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50 } = request.query;
      const result = await geofences.devicesInside(
        ctx,
        principalOf(request).workspaceId,
        request.params.geofence_id,
        offset,
        limit,
      );
      return page(result.devices.map(geofenceDeviceOut), result.total, offset, limit);
    },
  );

  app.patch(
    '/geofences/:geofence_id',
    {
      config: write,
      schema: {
        operationId: 'updateGeofence',
        tags,
        summary: 'Update a geofence (partial)',
        params: GeofenceParams,
        body: UpdateGeofenceBody,
        response: { 200: GeofenceSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const body = request.body;
      const geofence = await geofences.updateGeofence(
        ctx,
        principalOf(request).workspaceId,
        request.params.geofence_id,
        {
          name: body.name,
          description: body.description,
          externalId: body.external_id,
          geometry: body.geometry,
          metadata: body.metadata,
          enabled: body.enabled,
          rules: {
            dwellSeconds: body.dwell_seconds,
            exitBufferM: body.exit_buffer_m,
            maxAccuracyM: body.max_accuracy_m,
          },
        },
      );
      return geofenceOut(geofence);
    },
  );

  app.delete(
    '/geofences/:geofence_id',
    {
      config: write,
      schema: {
        operationId: 'deleteGeofence',
        tags,
        summary: 'Delete a geofence',
        params: GeofenceParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await geofences.deleteGeofence(ctx, principalOf(request).workspaceId, request.params.geofence_id);
      return reply.status(204).send(null);
    },
  );
}
