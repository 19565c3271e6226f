/**
 * Public geometry types of the geofence engine.
 *
 * Coordinates are `[longitude, latitude]` in degrees (RFC 7946 §3.1.1 order). Validated geometries are
 * normalised: altitude is dropped, consecutive duplicate positions are removed, every ring is closed.
 */

/** A position `[lng, lat]` in degrees. */
export type Position = [number, number];

/** A closed linear ring: first and last positions are equal, at least 4 positions. */
export type LinearRing = Position[];

/** GeoJSON Polygon (RFC 7946 §3.1.6): the exterior ring first, then holes. */
export interface PolygonGeometry {
  type: 'Polygon';
  coordinates: LinearRing[];
}

/** The service's Circle extension: centre `[lng, lat]` and a great-circle radius in metres. */
export interface CircleGeometry {
  type: 'Circle';
  coordinates: Position;
  radius: number;
}

export type FenceGeometry = PolygonGeometry | CircleGeometry;

/**
 * `[west, south, east, north]` in degrees (RFC 7946 §5). `west > east` means the box crosses the
 * antimeridian (RFC 7946 §5.2); only circles produce such boxes, polygons are planar and never wrap.
 */
export type Bbox = [number, number, number, number];

/** One schema-level (HTTP 422) error, shaped like a pydantic error item. */
export interface SchemaError {
  type: SchemaErrorType;
  /** Path relative to the geometry object, e.g. `['coordinates', 0, 3, 1]`. */
  loc: Array<string | number>;
  msg: string;
}

export type SchemaErrorType =
  | 'missing'
  | 'float_parsing'
  | 'list_type'
  | 'too_long'
  | 'too_short'
  | 'literal_error'
  | 'value_error'
  | 'dict_type';

/** Reasons of a geometric (HTTP 400 `INVALID_GEOMETRY`) rejection. See docs/geometry.md. */
export type GeometryErrorReason =
  | 'unsupported_type'
  | 'unclosed_ring'
  | 'too_few_positions'
  | 'coordinate_out_of_range'
  | 'self_intersection'
  | 'ring_intersection'
  | 'disconnected_interior'
  | 'hole_outside_shell'
  | 'overlapping_holes'
  | 'invalid_radius';

export interface GeometryValid {
  ok: true;
  geometry: FenceGeometry;
  bbox: Bbox;
  /** Stored vertices: for a polygon the sum over rings of (positions − 1) after normalisation; 1 for a circle. */
  vertexCount: number;
}

export interface GeometrySchemaInvalid {
  ok: false;
  kind: 'schema';
  errors: SchemaError[];
}

export interface GeometryInvalid {
  ok: false;
  kind: 'geometry';
  reason: GeometryErrorReason;
  message: string;
  location?: Position;
}

export type GeometryValidation = GeometryValid | GeometrySchemaInvalid | GeometryInvalid;
