/** Request and response schemas of /geofences (contract §3), and the record's JSON form. */
import { Type } from 'typebox';
import { LastLocationSchema } from '../devices/devices.schemas.ts';
import { component } from '../http/components.ts';
import { freeObject } from '../http/free-object.ts';
import { FreeObject, Id, Nullable, PaginationQuery, StringEnum, Timestamp } from '../http/schemas.ts';
import type { Geofence } from './geofences.repository.ts';
import type { DeviceInside } from './presence.repository.ts';

const GEOMETRY_RULES = `Geometry: a GeoJSON \`Polygon\` (exterior ring, then optional holes; positions \`[lng, lat]\`,
an optional altitude is dropped) or \`{"type": "Circle", "coordinates": [lng, lat], "radius": <metres, 1..100000>}\`.
Semantics are planar in longitude/latitude; a point on the boundary is inside; circles use the haversine
distance (R = 6,371,008.8 m); ring orientation is not checked. Repeated consecutive positions are removed and
the normalised geometry is what is stored and returned.

Validation, in this order:
1. Structure → **422** \`VALIDATION_ERROR\` with \`loc\` under \`["body", "geometry", …]\`: not an object, missing
   \`type\`/\`coordinates\`/\`radius\`, wrong JSON types, positions of fewer than 2 or more than 3 numbers, more
   than 500 vertices in all (each ring's closing position counted once).
2. Geometric validity → **400** \`INVALID_GEOMETRY\` with \`details: {reason, location?: [lng, lat]}\`, reasons:
   \`unsupported_type\` (anything but Polygon/Circle), \`unclosed_ring\`, \`too_few_positions\` (fewer than 4
   positions after removing repeats), \`coordinate_out_of_range\` (lng outside −180..180 or lat outside −90..90),
   \`self_intersection\` (a ring crossing or touching itself, spikes, zero area), \`ring_intersection\` (rings
   crossing or sharing an edge piece), \`disconnected_interior\` (rings touching so that the interior is cut in
   two), \`hole_outside_shell\`, \`overlapping_holes\` (a hole inside another hole), \`invalid_radius\` (radius < 1
   or > 100000 m).`;

/** The polygon of the documented examples (also `src/http/examples/records.ts`). */
export const EXAMPLE_POLYGON = {
  type: 'Polygon',
  coordinates: [
    [
      [13.3777, 52.5163],
      [13.3777, 52.5155],
      [13.3795, 52.5155],
      [13.3795, 52.5163],
      [13.3777, 52.5163],
    ],
  ],
};

/** Deliberately loose: the geometry engine reports everything beyond "an object with a type". */
export const GeometryIn = Type.Object(
  { type: Type.String({ description: '`Polygon` or `Circle`' }) },
  { additionalProperties: true, description: GEOMETRY_RULES, example: EXAMPLE_POLYGON },
);
component('GeofenceGeometryInput', GeometryIn);

const PositionOut = Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[lng, lat]' });
const PolygonOut = Type.Object(
  {
    type: StringEnum(['Polygon']),
    coordinates: Type.Array(Type.Array(PositionOut), { description: 'Exterior ring, then holes' }),
  },
  { title: 'Polygon' },
);
component('PolygonGeometry', PolygonOut);
const CircleOut = Type.Object(
  {
    type: StringEnum(['Circle']),
    coordinates: PositionOut,
    radius: Type.Number({ description: 'Metres, 1..100000' }),
  },
  { title: 'Circle' },
);
component('CircleGeometry', CircleOut);
const GeometryOut = Type.Union([PolygonOut, CircleOut], { description: 'The stored (normalised) geometry' });
component('GeofenceGeometry', GeometryOut);

const DWELL_NOTE =
  'A device that stays inside this long after an `enter` gets one `dwell` event for that visit, at enter ' +
  'time + dwell_seconds, whether or not it reports again (a durable timer; an `exit` before then cancels it). ' +
  'null = no dwell events.';
const BUFFER_NOTE =
  'Once inside, a device stays inside until it is more than this many metres outside the geometry (from ' +
  'the nearest boundary point, or from the circle): no enter/exit flapping on an edge. null = exit as soon as ' +
  'the point is outside.';
const ACCURACY_NOTE =
  'A location whose `accuracy` is larger (worse) than this changes nothing for this geofence (no enter, no ' +
  'exit); a location without `accuracy` counts. null = every location counts.';

const DwellSeconds = Nullable(
  Type.Integer({ minimum: 60, maximum: 86_400, description: `Seconds, 60..86,400. ${DWELL_NOTE}` }),
);
const ExitBufferM = Nullable(
  Type.Number({ minimum: 1, maximum: 1000, description: `Metres, 1..1,000. ${BUFFER_NOTE}` }),
);
const MaxAccuracyM = Nullable(
  Type.Number({ minimum: 1, maximum: 10_000, description: `Metres, 1..10,000. ${ACCURACY_NOTE}` }),
);

export const GeofenceSchema = Type.Object({
  id: Id,
  workspace_id: Id,
  name: Type.String(),
  description: Nullable(Type.String()),
  external_id: Nullable(Type.String({ description: 'Your own identifier; unique in the workspace' })),
  geometry: GeometryOut,
  metadata: FreeObject,
  enabled: Type.Boolean({ description: 'Only enabled geofences produce events and match /contains' }),
  bbox: Type.Array(Type.Number(), {
    minItems: 4,
    maxItems: 4,
    description:
      '[west, south, east, north] (GeoJSON order); west > east for a circle crossing the antimeridian',
  }),
  dwell_seconds: DwellSeconds,
  exit_buffer_m: ExitBufferM,
  max_accuracy_m: MaxAccuracyM,
  created_at: Timestamp,
  updated_at: Timestamp,
});
component('Geofence', GeofenceSchema);

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Nullable(Type.String({ maxLength: 2000 }));
const ExternalId = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'Unique in the workspace (400 DUPLICATE_RESOURCE)',
  }),
);
const Metadata = freeObject('Free-form; copied into webhook payloads as `geofence_metadata`');

export const CreateGeofenceBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    external_id: Type.Optional(ExternalId),
    geometry: GeometryIn,
    metadata: Type.Optional(Metadata),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    dwell_seconds: Type.Optional(DwellSeconds),
    exit_buffer_m: Type.Optional(ExitBufferM),
    max_accuracy_m: Type.Optional(MaxAccuracyM),
  },
  { additionalProperties: false },
);

export const UpdateGeofenceBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    external_id: Type.Optional(ExternalId),
    geometry: Type.Optional(GeometryIn),
    metadata: Type.Optional(freeObject('Replaces the metadata whole')),
    enabled: Type.Optional(Type.Boolean()),
    dwell_seconds: Type.Optional(DwellSeconds),
    exit_buffer_m: Type.Optional(ExitBufferM),
    max_accuracy_m: Type.Optional(MaxAccuracyM),
  },
  {
    additionalProperties: false,
    description:
      'Partial update: absent fields keep their value; `geometry` and `metadata` are replaced whole',
  },
);

export const GeofenceParams = Type.Object({ geofence_id: Type.String() });

export const ListGeofencesQuery = Type.Object({
  ...PaginationQuery.properties,
  enabled: Type.Optional(Type.Boolean({ description: 'Only enabled (true) or disabled (false) geofences' })),
  external_id: Type.Optional(Type.String({ maxLength: 255, description: 'Exact external_id' })),
  q: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Case-insensitive substring of the name' }),
  ),
});

export const ContainsQuery = Type.Object({
  lng: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude, −180..180' }),
  lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude, −90..90' }),
  ...PaginationQuery.properties,
});

/** An item of GET /geofences/{id}/devices (contract §4.5). */
export const GeofenceDeviceSchema = component(
  'GeofenceDevice',
  Type.Object(
    {
      device_id: Id,
      name: Type.String(),
      external_id: Nullable(Type.String({ description: 'Your own identifier of the device' })),
      user_id: Nullable(Type.String({ description: 'Your identifier of the person or asset carrying it' })),
      entered_at: Type.String({
        format: 'date-time',
        description: 'When the current visit began: the timestamp of the location of its `enter`',
      }),
      dwelling: Type.Boolean({
        description:
          "True once this visit's `dwell` event happened (the device stayed the geofence's `dwell_seconds`); " +
          'always false for a geofence without `dwell_seconds`',
      }),
      last_seen_at: Nullable(
        Type.String({
          format: 'date-time',
          description: "When the device's newest evaluated location arrived",
        }),
      ),
      last_location: Nullable(LastLocationSchema),
    },
    { description: 'A device inside the geofence now' },
  ),
);

export function geofenceDeviceOut(d: DeviceInside) {
  return {
    device_id: d.deviceId,
    name: d.name,
    external_id: d.externalId,
    user_id: d.userId,
    entered_at: d.enteredAt.toISOString(),
    dwelling: d.dwelledAt !== null,
    last_seen_at: d.lastSeenAt?.toISOString() ?? null,
    last_location: d.lastLocation,
  };
}

export function geofenceOut(g: Geofence) {
  return {
    id: g.id,
    workspace_id: g.workspaceId,
    name: g.name,
    description: g.description,
    external_id: g.externalId,
    geometry: g.geometry,
    metadata: g.metadata,
    enabled: g.enabled,
    bbox: g.bbox,
    dwell_seconds: g.rules.dwellSeconds,
    exit_buffer_m: g.rules.exitBufferM,
    max_accuracy_m: g.rules.maxAccuracyM,
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
  };
}
