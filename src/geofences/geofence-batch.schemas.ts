/**
 * Schemas of POST /geofences/batch and GET /geofences/export (contract §3): the two body forms of
 * the batch, its result, and the GeoJSON FeatureCollection of the export (which the batch accepts
 * back, so an export re-imports exactly).
 */
import { Type } from 'typebox';
import { component } from '../http/components.ts';
import { freeObject } from '../http/free-object.ts';
import { Id, Nullable, StringEnum, Timestamp, ValidationIssueSchema } from '../http/schemas.ts';
import type { ExportedGeofence } from './geofences.repository.ts';
import {
  CreateGeofenceBody,
  EXAMPLE_POLYGON,
  GeofenceSchema,
  ListGeofencesQuery,
} from './geofences.schemas.ts';

export const MAX_BATCH_GEOFENCES = 1000;

/** The fields of a create body other than the geometry: the `properties` of a Feature. */
const { geometry: _geometry, ...CREATE_FIELDS } = CreateGeofenceBody.properties;

const BATCH_RULES = `Creates, or by \`external_id\` updates, up to ${MAX_BATCH_GEOFENCES.toLocaleString('en-US')} geofences; body up to 5 MiB.
Two forms:
- \`{"geofences": [<body of POST /geofences>, …]}\`;
- a GeoJSON \`FeatureCollection\` (RFC 7946) whose Features carry the geometry in \`geometry\` and the other
  fields of a create body (\`name\`, \`description\`, \`external_id\`, \`metadata\`, \`enabled\`, \`dwell_seconds\`,
  \`exit_buffer_m\`, \`max_accuracy_m\`) in \`properties\`. The geometry is a \`Polygon\`, our \`Circle\` object, or —
  GeoJSON having no circle — a \`Point\` whose \`properties.radius\` (metres) makes it that circle. A Feature's
  \`id\` and \`bbox\`, the \`created_at\`/\`updated_at\` of its properties and other foreign members are ignored;
  unknown \`properties\` are refused (\`extra_forbidden\`) as unknown fields of POST /geofences are. The document
  GET /geofences/export answers is a valid body.

**Each item on its own.** Items are checked and written in order with exactly the rules of POST /geofences.
An item that fails is listed in \`rejected\` with its \`index\` and the error body a single create would have
answered: \`detail\` (a message, or for a schema failure the \`{type, loc, msg}\` array), \`error_code\`
(\`VALIDATION_ERROR\`, \`INVALID_GEOMETRY\`, \`DUPLICATE_RESOURCE\`, \`QUOTA_EXCEEDED\`) and \`details\` (for
INVALID_GEOMETRY \`{reason, location?}\`, for QUOTA_EXCEEDED \`{resource, limit, count}\`); the other items are
stored. A \`loc\` points into the body as sent: \`["body", "geofences", <index>, <field>, …]\`, or for a Feature
\`["body", "features", <index>, "properties", <field>]\` and \`["body", "features", <index>, "geometry", …]\`.
Text breaking contract §1 (NUL, a lone surrogate, metadata nested more than 16 levels) rejects only its item.
A body that is neither form, or holds more than ${MAX_BATCH_GEOFENCES.toLocaleString('en-US')} items, is a 422 for the whole request and stores nothing.

**Upsert.** An item whose \`external_id\` already names a geofence of the workspace replaces that geofence's
fields (an absent optional field takes its create default: \`description\` null, \`metadata\` {}, \`enabled\`
true, the rules null) and keeps its \`id\` and \`created_at\`; it is listed in \`updated\`, not \`created\`. An
item equal to the stored geofence writes nothing (its \`updated_at\` stays), so a nightly sync can re-send its
whole set. A later item repeating an \`external_id\` of an earlier item of the batch is rejected
(\`DUPLICATE_RESOURCE\`).

**Limits.** The plan's geofence count applies item by item: a create beyond it is rejected with the
\`QUOTA_EXCEEDED\` error of a single create; updates add nothing to the count. The accepted items are written
in one transaction and the geofence index changes once for the whole batch.`;

const EXAMPLE_CIRCLE = { type: 'Circle', coordinates: [13.405, 52.52], radius: 250 };

const BatchList = component(
  'GeofenceBatchList',
  Type.Object(
    {
      geofences: Type.Array(CreateGeofenceBody, {
        minItems: 1,
        maxItems: MAX_BATCH_GEOFENCES,
        description: 'Create bodies, as POST /geofences takes them',
      }),
    },
    { additionalProperties: false, title: 'List form' },
  ),
);

const FeatureGeometryIn = Type.Object(
  { type: Type.String({ description: '`Polygon`, `Circle`, or `Point` with `properties.radius`' }) },
  {
    additionalProperties: true,
    description:
      'A `Polygon` or our `Circle` exactly as POST /geofences takes them, or a GeoJSON `Point` read as the ' +
      'circle of radius `properties.radius` around it.',
    example: EXAMPLE_POLYGON,
  },
);

const FeatureProperties = Type.Object(
  {
    ...CREATE_FIELDS,
    radius: Type.Optional(
      Type.Number({
        description:
          'Only with a `Point` geometry: the radius in metres (1..100000) of the circle the Point stands for',
      }),
    ),
    created_at: Type.Optional(Type.Unknown({ description: 'As exported; ignored' })),
    updated_at: Type.Optional(Type.Unknown({ description: 'As exported; ignored' })),
  },
  {
    additionalProperties: false,
    description: 'The fields of a POST /geofences body other than `geometry`',
  },
);

export const FeatureIn = Type.Object(
  {
    type: StringEnum(['Feature']),
    geometry: FeatureGeometryIn,
    properties: FeatureProperties,
    id: Type.Optional(Type.Unknown({ description: 'Ignored (geofences are matched by `external_id`)' })),
    bbox: Type.Optional(Type.Unknown({ description: 'Ignored' })),
  },
  { additionalProperties: true, description: 'One geofence to create or update' },
);

const FeatureCollectionIn = component(
  'GeofenceFeatureCollectionInput',
  Type.Object(
    {
      type: StringEnum(['FeatureCollection']),
      features: Type.Array(FeatureIn, { minItems: 1, maxItems: MAX_BATCH_GEOFENCES }),
    },
    {
      additionalProperties: true,
      title: 'GeoJSON form',
      description: 'A GeoJSON FeatureCollection; foreign members (e.g. `bbox`, `name`) are ignored',
      example: {
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            geometry: EXAMPLE_POLYGON,
            properties: { name: 'Berlin depot', external_id: 'depot-berlin', metadata: { region: 'north' } },
          },
          {
            type: 'Feature',
            geometry: { type: 'Point', coordinates: [13.405, 52.52] },
            properties: { name: 'Mitte drop-off', external_id: 'drop-mitte', radius: 250 },
          },
        ],
      },
    },
  ),
);

export const BatchRequest = component(
  'GeofenceBatchRequest',
  Type.Union([BatchList, FeatureCollectionIn], {
    description: BATCH_RULES,
    example: {
      geofences: [
        { name: 'Berlin depot', external_id: 'depot-berlin', geometry: EXAMPLE_POLYGON },
        { name: 'Mitte drop-off', external_id: 'drop-mitte', geometry: EXAMPLE_CIRCLE, dwell_seconds: 300 },
      ],
    },
  }),
);

export const BatchRejectionSchema = component(
  'GeofenceBatchRejection',
  Type.Object(
    {
      index: Type.Integer({ description: 'Position of the item in `geofences` / `features`, from 0' }),
      detail: Type.Union([Type.String(), Type.Array(ValidationIssueSchema)], {
        description: 'What a single POST /geofences would have answered: a message, or the 422 issue list',
      }),
      error_code: Type.Optional(
        Type.String({
          description: '`VALIDATION_ERROR`, `INVALID_GEOMETRY`, `DUPLICATE_RESOURCE` or `QUOTA_EXCEEDED`',
        }),
      ),
      details: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), {
          description: 'INVALID_GEOMETRY: `{reason, location?}`; QUOTA_EXCEEDED: `{resource, limit, count}`',
        }),
      ),
    },
    { description: 'An item that was not stored, and why' },
  ),
);

export const BatchResult = component(
  'GeofenceBatchResult',
  Type.Object(
    {
      created: Type.Array(GeofenceSchema, { description: 'New geofences, in item order' }),
      updated: Type.Array(GeofenceSchema, {
        description:
          'Existing geofences matched by `external_id`, as they are now, in item order (unchanged ones too)',
      }),
      rejected: Type.Array(BatchRejectionSchema, { description: 'Items not stored, in item order' }),
    },
    { description: 'Every item is in exactly one of the three lists' },
  ),
);

export const FeatureOut = component(
  'GeofenceFeature',
  Type.Object(
    {
      type: StringEnum(['Feature']),
      id: Id,
      geometry: GeofenceSchema.properties.geometry,
      properties: Type.Object(
        {
          name: Type.String(),
          description: Nullable(Type.String()),
          external_id: Nullable(Type.String()),
          metadata: freeObject('Free-form'),
          enabled: Type.Boolean(),
          dwell_seconds: Nullable(Type.Integer()),
          exit_buffer_m: Nullable(Type.Number()),
          max_accuracy_m: Nullable(Type.Number()),
          created_at: Timestamp,
          updated_at: Timestamp,
        },
        { description: 'Every field of the geofence record but `id`, `geometry`, `bbox` and `workspace_id`' },
      ),
      bbox: Type.Array(Type.Number(), {
        minItems: 4,
        maxItems: 4,
        description: '[west, south, east, north]; west > east for a circle crossing the antimeridian',
      }),
    },
    {
      description:
        'One geofence. `geometry` is the stored geometry: a Polygon, or a circle as our `Circle` object ' +
        '(not RFC 7946, which has no circle), so that the export re-imports exactly.',
    },
  ),
);

export const FeatureCollectionOut = component(
  'GeofenceFeatureCollection',
  Type.Object(
    {
      type: StringEnum(['FeatureCollection']),
      features: Type.Array(FeatureOut, { description: 'Oldest first (creation order)' }),
    },
    {
      description:
        "The workspace's geofences as one GeoJSON FeatureCollection (RFC 7946, with circles as our `Circle` " +
        'geometry). POST /geofences/batch takes it back as it is.',
    },
  ),
);

export const ExportQuery = Type.Object({
  enabled: ListGeofencesQuery.properties.enabled,
  q: ListGeofencesQuery.properties.q,
});

export const EXPORT_DESCRIPTION = `The workspace's geofences (filters \`enabled\` and \`q\` as in the list) as one GeoJSON
FeatureCollection, oldest first, whole (no pagination; streamed). Each Feature has \`id\` = the geofence id,
\`geometry\` as stored, \`properties\` with every other field of the record (\`name\`, \`description\`,
\`external_id\`, \`metadata\`, \`enabled\`, \`dwell_seconds\`, \`exit_buffer_m\`, \`max_accuracy_m\`, \`created_at\`,
\`updated_at\`) and \`bbox\`. Circles are our \`Circle\` geometry \`{"type": "Circle", "coordinates": [lng, lat],
"radius": <metres>}\`: RFC 7946 has no circle, and a Point with a radius property would round-trip only through
tools that keep that property. Sending this document to POST /geofences/batch recreates the same geofences
(new ids and timestamps; a Feature whose \`external_id\` exists updates that geofence instead).
Content-Type \`application/geo+json\`.`;

const text = (value: string | null) => JSON.stringify(value);
const numberOrNull = (value: number | null) => (value === null ? 'null' : JSON.stringify(value));

/**
 * One Feature of the export as JSON text, built by hand: the JSON columns are spliced in as the
 * database holds them (valid JSON, written by the service), every other value is serialised here.
 */
export function featureText(g: ExportedGeofence): string {
  return (
    `{"type":"Feature","id":${text(g.id)},"geometry":${g.geometryJson},"properties":{` +
    `"name":${text(g.name)},"description":${text(g.description)},"external_id":${text(g.externalId)},` +
    `"metadata":${g.metadataJson},"enabled":${g.enabled},` +
    `"dwell_seconds":${numberOrNull(g.rules.dwellSeconds)},"exit_buffer_m":${numberOrNull(g.rules.exitBufferM)},` +
    `"max_accuracy_m":${numberOrNull(g.rules.maxAccuracyM)},` +
    `"created_at":"${g.createdAt.toISOString()}","updated_at":"${g.updatedAt.toISOString()}"},` +
    `"bbox":${g.bboxJson}}`
  );
}

/** The export's body as JSON text, a page of Features at a time. */
export async function* featureCollectionText(
  pages: AsyncIterable<ExportedGeofence[]>,
): AsyncGenerator<string> {
  yield '{"type":"FeatureCollection","features":[';
  let separator = '';
  for await (const page of pages) {
    let text = '';
    for (const g of page) {
      text += separator + featureText(g);
      separator = ',';
    }
    yield text;
  }
  yield ']}';
}
