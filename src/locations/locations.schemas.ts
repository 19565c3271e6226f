/** Request and response schemas of the location endpoints (contract §4.2). */
import { Type } from 'typebox';
import { EventSchema } from '../events/events.schemas.ts';
import { PointSchema, pointOf } from '../geo/point.ts';
import { component } from '../http/components.ts';
import { freeObject } from '../http/free-object.ts';
import {
  FreeObject,
  Id,
  Nullable,
  PaginationQuery,
  StringEnum,
  ValidationIssueSchema,
} from '../http/schemas.ts';
import type { StoredLocation } from './locations.repository.ts';

export const MAX_BATCH_ITEMS = 1000;

const RULES =
  'Give the position as `point` (a GeoJSON Point) or as `coordinates` (`[lng, lat]`), exactly one; lng ' +
  '−180..180, lat −90..90 (otherwise 422). `timestamp` defaults to the receive time and may be at most 10 ' +
  "minutes ahead of the server clock. A location older than the device's newest evaluated one is stored " +
  'with `out_of_order: true` and produces no events. `metadata` becomes `event_metadata` of the events.';

const fields = {
  point: Type.Optional(
    Type.Object(
      {
        type: StringEnum(['Point']),
        coordinates: Type.Array(Type.Number(), {
          minItems: 2,
          maxItems: 3,
          description: '[lng, lat] or [lng, lat, altitude]',
        }),
      },
      { additionalProperties: false, description: 'GeoJSON Point' },
    ),
  ),
  coordinates: Type.Optional(
    Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[lng, lat]' }),
  ),
  timestamp: Type.Optional(
    Nullable(Type.String({ format: 'date-time', description: 'When the fix was taken' })),
  ),
  accuracy: Type.Optional(Nullable(Type.Number({ minimum: 0, description: 'Horizontal accuracy, metres' }))),
  speed: Type.Optional(Nullable(Type.Number({ description: 'Metres per second' }))),
  heading: Type.Optional(
    Nullable(Type.Number({ minimum: 0, maximum: 360, description: 'Degrees from north' })),
  ),
  altitude: Type.Optional(Nullable(Type.Number({ description: 'Metres' }))),
  metadata: Type.Optional(freeObject('Free-form; `event_metadata` of its events')),
};

export const LocationBody = Type.Object(fields, {
  additionalProperties: false,
  description: RULES,
  example: { point: { type: 'Point', coordinates: [13.3777, 52.5163] }, accuracy: 5 },
});

export const BatchItemSchema = Type.Object(
  {
    device_id: Type.Optional(Type.String({ description: 'The device (or give device_external_id)' })),
    device_external_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'Your id of the device; unknown ids create the device',
      }),
    ),
    ...fields,
  },
  { additionalProperties: false, description: `Exactly one of device_id and device_external_id. ${RULES}` },
);

const BATCH_RULES =
  `1..${MAX_BATCH_ITEMS} items, body up to 5 MiB. Each item is checked on its own: a bad item is listed in ` +
  '`rejected` with its index (its `detail` a message or the 422 issue list, `loc` starting ' +
  '`["body", "locations", <index>]`) and the others are still stored. Items of one device are applied in ' +
  'timestamp order.';

/** The documented body; validation checks only the envelope and then each item on its own. */
export const BatchBody = Type.Object(
  { locations: Type.Array(BatchItemSchema, { minItems: 1, maxItems: MAX_BATCH_ITEMS }) },
  {
    additionalProperties: false,
    description: BATCH_RULES,
    example: { locations: [{ device_external_id: 'truck-7', coordinates: [13.3777, 52.5163] }] },
  },
);

export const BatchEnvelope = Type.Object(
  { locations: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH_ITEMS }) },
  { additionalProperties: false },
);

export const LocationSchema = Type.Object({
  id: Id,
  device_id: Id,
  session_id: Nullable(Id),
  point: PointSchema,
  timestamp: Type.String({ format: 'date-time', description: 'The fix time (default: receive time)' }),
  accuracy: Nullable(Type.Number()),
  speed: Nullable(Type.Number()),
  heading: Nullable(Type.Number()),
  altitude: Nullable(Type.Number()),
  metadata: FreeObject,
  out_of_order: Type.Boolean({ description: 'Older than the newest evaluated location: not evaluated' }),
  received_at: Type.String({ format: 'date-time' }),
});
component('Location', LocationSchema);

export const RecordLocationResponse = Type.Object({
  location: LocationSchema,
  events: Type.Array(EventSchema, { description: 'The geofence events this location produced' }),
});

export const BatchResponse = Type.Object({
  accepted: Type.Integer({ description: 'Items stored' }),
  rejected: Type.Array(
    Type.Object({
      index: Type.Integer(),
      detail: Type.Union([Type.String(), Type.Array(ValidationIssueSchema)]),
    }),
  ),
  events: Type.Array(EventSchema, {
    description: 'Events produced by the batch, in the order they happened',
  }),
});

export const DeviceLocationsParams = Type.Object({ device_id: Type.String() });

export const LocationHistoryQuery = Type.Object({
  ...PaginationQuery.properties,
  from: Type.Optional(Type.String({ format: 'date-time', description: 'timestamp ≥ from' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'timestamp ≤ to' })),
  session_id: Type.Optional(Type.String({ description: 'Only locations of this tracking session' })),
});

export function locationOut(l: StoredLocation) {
  return {
    id: l.id,
    device_id: l.deviceId,
    session_id: l.sessionId,
    point: pointOf(l.lng, l.lat),
    timestamp: l.recordedAtIso,
    accuracy: l.accuracy,
    speed: l.speed,
    heading: l.heading,
    altitude: l.altitude,
    metadata: l.metadata,
    out_of_order: l.outOfOrder,
    received_at: l.receivedAt.toISOString(),
  };
}
