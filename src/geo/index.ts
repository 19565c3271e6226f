/** Geometry engine: validation, exact predicates, bounding boxes and the geofence spatial index. */
export { bboxWraps, circleBbox, geometryBbox, ringBbox, splitBbox } from './bbox.ts';
export { EARTH_RADIUS_M, MAX_RADIUS_M, MAX_VERTICES } from './constants.ts';
export { distanceToFenceM } from './distance-to-fence.ts';
export {
  type GeofenceEntry,
  GeofenceIndex,
  type GeofenceIndexOptions,
  type GeofenceIndexStats,
} from './geofence-index.ts';
export { haversineDistance } from './haversine.ts';
export { pointInCircle } from './point-in-circle.ts';
export { pointInPolygon } from './point-in-polygon.ts';
export type {
  Bbox,
  CircleGeometry,
  FenceGeometry,
  GeometryErrorReason,
  GeometryInvalid,
  GeometrySchemaInvalid,
  GeometryValid,
  GeometryValidation,
  LinearRing,
  PolygonGeometry,
  Position,
  SchemaError,
  SchemaErrorType,
} from './types.ts';
export { validateGeometry } from './validate-geometry.ts';
