/**
 * The GeoJSON Point every record of the location pipeline shows (RFC 7946 §3.1.2: `[lng, lat]`):
 * devices, locations, events and the live stream. Its schema is the one named `Point` component.
 */
import { Type } from 'typebox';
import { component } from '../http/components.ts';
import { StringEnum } from '../http/schemas.ts';

export interface GeoJsonPoint {
  type: 'Point';
  coordinates: [number, number];
}

export const PointSchema = Type.Object(
  {
    type: StringEnum(['Point']),
    coordinates: Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[lng, lat]' }),
  },
  { description: 'GeoJSON Point' },
);
component('Point', PointSchema);

export function pointOf(lng: number, lat: number): GeoJsonPoint {
  return { type: 'Point', coordinates: [lng, lat] };
}
