import { boxLowerBoundRad, polygonBoundaryRad, setDistancePoint } from './boundary-distance.ts';
import { EARTH_RADIUS_M } from './constants.ts';
import { polygonTest, setLookupPoint } from './fence-contains.ts';
import {
  R_CODE,
  R_COS_LAT,
  R_GRID,
  R_LAT,
  R_LNG,
  R_P0,
  R_RADIUS,
  R_RINGS,
  R_RINGS_AT,
  REC,
} from './fence-layout.ts';
import { blockGridSize, type FenceStore } from './fence-store.ts';
import { toRadians } from './haversine.ts';

/**
 * Metres from (lng, lat) to fence `slot` of `st`: 0 inside or on the boundary (exactly where the containment
 * tests say inside), else the distance to the nearest boundary point (docs/geometry.md, "Distance to a fence").
 * NaN for non-finite or out-of-range coordinates.
 *
 * `stop` ≥ 0 asks only whether the distance is ≤ stop, and lets the computation end early: the result is then
 * ≤ stop exactly when the distance is (it may be a lower bound above stop, or an edge's distance below it).
 * Pass −1 for the distance itself.
 */
export function slotDistanceM(st: FenceStore, slot: number, lng: number, lat: number, stop: number): number {
  if (!(lng >= -180 && lng <= 180 && lat >= -90 && lat <= 90)) return Number.NaN;
  const rec = st.rec;
  const o = slot * REC;
  if ((rec[o + R_CODE] as number) < 0) return circleDistanceM(rec, o, lng, lat, stop);
  const west = rec[o] as number;
  const south = rec[o + 1] as number;
  const east = rec[o + 2] as number;
  const north = rec[o + 3] as number;
  setDistancePoint(lng, lat);
  if (stop >= 0) {
    const lowerBound = boxLowerBoundRad(rec, o) * EARTH_RADIUS_M;
    if (lowerBound > stop) return lowerBound;
  }
  const p0 = (rec[o + R_P0] as number) | 0;
  const ringsAt = (rec[o + R_RINGS_AT] as number) | 0;
  const rings = (rec[o + R_RINGS] as number) | 0;
  if (lng >= west && lng <= east && lat >= south && lat <= north) {
    // The exact containment test, through the polygon's cell grid when a lookup has built it (building one
    // costs more than the scan below: distance queries leave that to lookups).
    setLookupPoint(lng, lat);
    const state = rec[o + R_GRID] as number;
    const grid = Math.max(state, 0);
    const g = grid > 0 ? blockGridSize(st.grids, grid - 1) : 0;
    if (polygonTest(st, rec, o, p0, grid, g, ringsAt, rings)) return 0;
  }
  const bits = st.chunkBits;
  const coords = st.coords[p0 >>> bits] as Float64Array;
  const local = p0 & ((1 << bits) - 1);
  return (
    polygonBoundaryRad(coords, st.ringEnds, local, ringsAt, rings, rec, o, stop, EARTH_RADIUS_M) *
    EARTH_RADIUS_M
  );
}

/**
 * Metres from (lng, lat) to the circle whose record starts at `rec[o]`: haversine distance to the centre minus
 * the radius, 0 inside. The distance is the expression of `haversineContainsPoint` and `haversineDistance`,
 * bit for bit, so this is 0 exactly where containment says inside, and > 0 everywhere else. `stop` as in
 * {@link slotDistanceM}.
 */
export function circleDistanceM(
  rec: Float64Array,
  o: number,
  lng: number,
  lat: number,
  stop: number,
): number {
  const radius = rec[o + R_RADIUS] as number;
  const dLat = toRadians(lat - (rec[o + R_LAT] as number));
  if (stop >= 0) {
    // Every point is at least |Δφ| from the centre (margin far above rounding).
    const lowerBound = Math.abs(dLat) * EARTH_RADIUS_M * (1 - 1e-9) - radius;
    if (lowerBound > stop) return lowerBound;
  }
  const dLon = toRadians(lng - (rec[o + R_LNG] as number));
  const a =
    Math.sin(dLat / 2) ** 2 +
    Math.sin(dLon / 2) ** 2 * (rec[o + R_COS_LAT] as number) * Math.cos(toRadians(lat));
  const d = 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a)) * EARTH_RADIUS_M;
  return d <= radius ? 0 : d - radius;
}
