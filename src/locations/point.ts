/** The GeoJSON Point every record of this pipeline shows (RFC 7946 §3.1.2: `[lng, lat]`). */
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
