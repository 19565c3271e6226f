/** The map snapshot's GeoJSON (GET /devices/positions, ADR 016). */
import { Type } from 'typebox';
import { PointSchema } from '../geo/point.ts';
import { component } from '../http/components.ts';
import { Id, Nullable, StringEnum } from '../http/schemas.ts';

export const MAX_POSITIONS = 50_000;

export const DevicePositionSchema = component(
  'DevicePosition',
  Type.Object(
    {
      type: StringEnum(['Feature']),
      id: Id,
      geometry: PointSchema,
      properties: Type.Object({
        name: Type.String(),
        external_id: Nullable(Type.String()),
        last_seen_at: Type.String({ format: 'date-time', description: 'When the position arrived' }),
        recorded_at: Type.String({ format: 'date-time', description: "The position's own timestamp" }),
        accuracy: Nullable(Type.Number({ description: 'Metres' })),
        inside_geofence_ids: Type.Array(Id, { description: 'Enabled geofences containing the position' }),
      }),
    },
    { description: "A device's last position, a GeoJSON Feature whose id is the device id" },
  ),
);

export const DevicePositionsSchema = component(
  'DevicePositions',
  Type.Object(
    {
      type: StringEnum(['FeatureCollection']),
      features: Type.Array(DevicePositionSchema),
      truncated: Type.Boolean({
        description: `More than ${MAX_POSITIONS.toLocaleString('en')} devices have a position: the oldest devices' are listed`,
      }),
    },
    { description: 'Every located device of the workspace, for a map' },
  ),
);
