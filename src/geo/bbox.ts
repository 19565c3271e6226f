import { EARTH_RADIUS_M } from './constants.ts';
import type { Bbox, CircleGeometry, FenceGeometry, Position } from './types.ts';

/**
 * Bounding boxes `[west, south, east, north]`.
 *
 * Polygons are planar in lng/lat, so their box is the min/max of their positions and never wraps.
 * Circles are spherical caps; their box follows J. P. Matuschek, "Finding Points Within a Distance of a
 * Latitude/Longitude Using Bounding Coordinates" (2011): with angular radius δ = r / R,
 *  - latitude extent is φ0 ± δ;
 *  - if the cap reaches a pole (φ0 + δ ≥ 90° or φ0 − δ ≤ −90°) the box spans all longitudes and extends
 *    to that pole;
 *  - otherwise the longitude half-width is Δλ = asin(sin δ / cos φ0) (the meridians tangent to the cap),
 *    and a box crossing the antimeridian is returned with west > east (RFC 7946 §5.2).
 */

/** Box of the positions of a polygon's exterior ring (holes lie inside it). */
export function ringBbox(ring: readonly Position[]): Bbox {
  let west = Number.POSITIVE_INFINITY;
  let south = Number.POSITIVE_INFINITY;
  let east = Number.NEGATIVE_INFINITY;
  let north = Number.NEGATIVE_INFINITY;
  for (const p of ring) {
    const x = p[0];
    const y = p[1];
    if (x < west) west = x;
    if (x > east) east = x;
    if (y < south) south = y;
    if (y > north) north = y;
  }
  return [west, south, east, north];
}

/**
 * Pole margin in radians (~6 mm): a cap this close to a pole is treated as containing it, so the box
 * stays conservative whatever the rounding of φ0 + δ.
 */
const POLE_EPSILON_RAD = 1e-9;

/**
 * Box of a circle, possibly wrapping the antimeridian (west > east). Latitudes are clamped to ±90.
 * `pad` (degrees) grows the box on every side before wrapping; the index uses a tiny pad so that its
 * filter stays conservative against the last-ulp rounding of this trigonometry.
 */
export function circleBbox(lng: number, lat: number, radiusM: number, pad = 0): Bbox {
  const delta = radiusM / EARTH_RADIUS_M;
  const phi = (lat * Math.PI) / 180;
  const deltaDeg = (delta * 180) / Math.PI;
  const south = Math.max(-90, lat - deltaDeg - pad);
  const north = Math.min(90, lat + deltaDeg + pad);
  if (phi + delta >= Math.PI / 2 - POLE_EPSILON_RAD) return [-180, south, 180, 90];
  if (phi - delta <= -Math.PI / 2 + POLE_EPSILON_RAD) return [-180, -90, 180, north];
  const dLng = (Math.asin(Math.sin(delta) / Math.cos(phi)) * 180) / Math.PI;
  let west = lng - dLng - pad;
  let east = lng + dLng + pad;
  if (west < -180) west += 360;
  if (east > 180) east -= 360;
  return [west, south, east, north];
}

/** `[west, south, east, north]` of a validated geometry; see the module comment for circles. */
export function geometryBbox(geometry: FenceGeometry): Bbox {
  if (geometry.type === 'Circle') return circleGeometryBbox(geometry);
  const shell = geometry.coordinates[0];
  return shell === undefined ? [0, 0, 0, 0] : ringBbox(shell);
}

function circleGeometryBbox(circle: CircleGeometry): Bbox {
  return circleBbox(circle.coordinates[0], circle.coordinates[1], circle.radius);
}

/** Whether a box crosses the antimeridian (RFC 7946 §5.2: west > east). */
export function bboxWraps(bbox: Readonly<Bbox>): boolean {
  return bbox[0] > bbox[2];
}

/**
 * The non-wrapping boxes covering `bbox`: itself, or for a box crossing the antimeridian the two
 * pieces `[west, s, 180, n]` and `[-180, s, east, n]`. This is how the spatial index stores such boxes.
 */
export function splitBbox(bbox: Readonly<Bbox>): Bbox[] {
  const [west, south, east, north] = bbox;
  if (west <= east) return [[west, south, east, north]];
  return [
    [west, south, 180, north],
    [-180, south, east, north],
  ];
}
