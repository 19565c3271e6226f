import { polygonBoundaryRad, setDistancePoint } from './boundary-distance.ts';
import { EARTH_RADIUS_M } from './constants.ts';
import { circleDistanceM } from './fence-distance.ts';
import { MAX_POSITIONS_PER_FENCE, R_COS_LAT, R_LAT, R_LNG, R_RADIUS, REC } from './fence-layout.ts';
import { toRadians } from './haversine.ts';
import { pointInPolygon } from './point-in-polygon.ts';
import type { FenceGeometry, Position } from './types.ts';

/** Scratch: a circle record, and a polygon's positions and ring ends in the store's layout. */
const circleRec = new Float64Array(REC);
const box = new Float64Array(4);
let coords = new Float64Array(2 * 1024);
let ringEnds = new Uint16Array(64);

/**
 * Metres from (lng, lat) to a validated fence geometry: 0 when the point is inside or on the boundary (exactly
 * where `pointInPolygon` / `pointInCircle` say so), else the distance to the nearest boundary point — a
 * circle's rim (haversine distance to the centre minus the radius, exact), or any polygon edge, holes'
 * included (docs/geometry.md, "Distance to a fence", for the method and its error bound). NaN for non-finite or
 * out-of-range coordinates. `GeofenceIndex.distanceM` returns the same values for indexed fences.
 */
export function distanceToFenceM(geometry: FenceGeometry, lng: number, lat: number): number {
  if (!(lng >= -180 && lng <= 180 && lat >= -90 && lat <= 90)) return Number.NaN;
  if (geometry.type === 'Circle') {
    const [clng, clat] = geometry.coordinates;
    circleRec[R_LNG] = clng;
    circleRec[R_LAT] = clat;
    circleRec[R_RADIUS] = geometry.radius;
    circleRec[R_COS_LAT] = Math.cos(toRadians(clat));
    return circleDistanceM(circleRec, 0, lng, lat, -1);
  }
  if (pointInPolygon(lng, lat, geometry)) return 0;
  const rings = geometry.coordinates;
  let positions = 0;
  for (const ring of rings) positions += ring.length;
  if (positions > MAX_POSITIONS_PER_FENCE) {
    throw new RangeError(`more than ${MAX_POSITIONS_PER_FENCE} positions; validate geometries first`);
  }
  if (2 * positions > coords.length) coords = new Float64Array(2 * positions);
  if (rings.length > ringEnds.length) ringEnds = new Uint16Array(rings.length);
  let west = Number.POSITIVE_INFINITY;
  let south = Number.POSITIVE_INFINITY;
  let east = Number.NEGATIVE_INFINITY;
  let north = Number.NEGATIVE_INFINITY;
  let at = 0;
  for (let k = 0; k < rings.length; k++) {
    const ring = rings[k] as Position[];
    for (let i = 0; i < ring.length; i++) {
      const p = ring[i] as Position;
      const x = p[0];
      const y = p[1];
      coords[at++] = x;
      coords[at++] = y;
      // The exterior ring's box holds every ring (as in the store).
      if (k === 0) {
        if (x < west) west = x;
        if (x > east) east = x;
        if (y < south) south = y;
        if (y > north) north = y;
      }
    }
    ringEnds[k] = at >> 1;
  }
  box[0] = west;
  box[1] = south;
  box[2] = east;
  box[3] = north;
  setDistancePoint(lng, lat);
  return (
    polygonBoundaryRad(coords, ringEnds, 0, 0, rings.length, box, 0, -1, EARTH_RADIUS_M) * EARTH_RADIUS_M
  );
}
