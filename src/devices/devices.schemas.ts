/** Request and response schemas of /devices (contract §4.1), and the record's JSON form. */
import { Type } from 'typebox';
import { PointSchema } from '../geo/point.ts';
import { component } from '../http/components.ts';
import { freeObject } from '../http/free-object.ts';
import { FreeObject, Id, Nullable, PaginationQuery, StringEnum, Timestamp } from '../http/schemas.ts';
import { DEVICE_SORTS, type Device } from './devices.repository.ts';

export const LastLocationSchema = Type.Object(
  {
    point: PointSchema,
    timestamp: Timestamp,
    accuracy: Nullable(Type.Number({ description: 'Metres' })),
  },
  { description: 'The newest evaluated location' },
);

export const DeviceSchema = Type.Object({
  id: Id,
  workspace_id: Id,
  name: Type.String(),
  external_id: Nullable(Type.String({ description: 'Your own identifier; unique in the workspace' })),
  user_id: Nullable(
    Type.String({
      description:
        'Your identifier of the person or asset carrying the device; `data.user_id` in event payloads ' +
        '(the device id when null)',
    }),
  ),
  metadata: FreeObject,
  last_location: Nullable(LastLocationSchema),
  last_seen_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the newest evaluated location arrived (out-of-order locations change nothing)',
    }),
  ),
  inside_geofence_ids: Type.Array(Id, {
    description: 'Enabled geofences containing the newest evaluated location',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
component('Device', DeviceSchema);

const Name = Type.String({ minLength: 1, maxLength: 255 });
const ExternalId = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'Unique in the workspace (400 DUPLICATE_RESOURCE)',
  }),
);
const UserId = Nullable(Type.String({ minLength: 1, maxLength: 255 }));
const Metadata = freeObject('Free-form JSON object');

export const CreateDeviceBody = Type.Object(
  {
    name: Name,
    external_id: Type.Optional(ExternalId),
    user_id: Type.Optional(UserId),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const UpdateDeviceBody = Type.Object(
  {
    name: Type.Optional(Name),
    external_id: Type.Optional(ExternalId),
    user_id: Type.Optional(UserId),
    metadata: Type.Optional(freeObject('Replaces the metadata whole')),
  },
  { additionalProperties: false, description: 'Partial update: absent fields keep their value' },
);

export const DeviceParams = Type.Object({ device_id: Type.String() });

export const ListDevicesQuery = Type.Object({
  ...PaginationQuery.properties,
  external_id: Type.Optional(Type.String({ maxLength: 255, description: 'Exact external_id' })),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Case-insensitive substring of the name or the external_id',
    }),
  ),
  sort: Type.Optional(
    StringEnum(DEVICE_SORTS, {
      description:
        'Order: `-created_at` newest first (the default), `created_at` oldest first, `name` A to Z or ' +
        '`-name` Z to A (names compared case-insensitively; ties by id)',
      default: '-created_at',
    }),
  ),
});

export function deviceOut(d: Device) {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    name: d.name,
    external_id: d.externalId,
    user_id: d.userId,
    metadata: d.metadata,
    last_location: d.lastLocation,
    last_seen_at: d.lastSeenAt?.toISOString() ?? null,
    inside_geofence_ids: d.insideGeofenceIds,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  };
}
