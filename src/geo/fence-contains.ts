/**
 * Exact containment tests of the point in {@link lookupPoint} against slots of a {@link FenceStore}: polygons
 * through their lazily built cell grid (polygon-grid.ts) or an edge scan, circles through their inner box or
 * the haversine expression. Boundary counts as inside.
 */
import { EARTH_RADIUS_M } from './constants.ts';
import { edgeStep } from './edge-step.ts';
import {
  R_CODE,
  R_COS_LAT,
  R_GRID,
  R_IN_LAT,
  R_IN_LNG,
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
import { appendPolygonGrid, gridLocate, lookupPoint } from './polygon-grid.ts';
import { ARENA_CHUNK_MASK } from './u16-builder.ts';

/** Whether the point in {@link lookupPoint} lies in the inner box of the circle whose entry is `ent[b ..]`. */
export function circleEntryInner(ent: Float64Array, b: number): boolean {
  return (
    Math.abs((lookupPoint[1] as number) - (ent[b + 5] as number)) <= (ent[b + 6] as number) &&
    Math.abs((lookupPoint[0] as number) - (ent[b + 4] as number)) <= (ent[b + 7] as number)
  );
}

/**
 * The grid state of polygon `slot` (0 = none, b + 1 = block at global offset b of `grids`), building it now if
 * it is pending: on the polygon's first lookup. A grid costs far more than a lookup; building it lazily
 * keeps the bulk build fast and spends that only on fences that are actually looked up.
 */
export function ensureGrid(st: FenceStore, slot: number): number {
  const rec = st.rec;
  const o = slot * REC;
  const state = rec[o + R_GRID] as number;
  if (state >= 0) return state;
  const p0 = rec[o + R_P0] as number;
  const block = appendPolygonGrid(
    st.coords[p0 >>> st.chunkBits] as Float64Array,
    p0 & ((1 << st.chunkBits) - 1),
    st.ringEnds,
    rec[o + R_RINGS_AT] as number,
    rec[o + R_RINGS] as number,
    st.grids,
    rec[o] as number,
    rec[o + 1] as number,
    rec[o + 2] as number,
    rec[o + 3] as number,
  );
  rec[o + R_GRID] = block + 1; // 0 when no grid could be built: scan from now on
  return block + 1;
}

/**
 * Exact test of the point in {@link lookupPoint} by scanning every edge of the polygon whose positions start
 * at `c[2·p0]`, ring ends at `ringEnds[ringsAt ..]`. Boundary inside.
 */
function scanContains(
  c: Float64Array,
  ringEnds: Uint16Array,
  p0: number,
  ringsAt: number,
  rings: number,
): boolean {
  const x = lookupPoint[0] as number;
  const y = lookupPoint[1] as number;
  let crossings = 0;
  let begin = p0 << 1;
  for (let k = 0; k < rings; k++) {
    const end = (p0 + (ringEnds[ringsAt + k] as number)) << 1;
    let ax = c[begin] as number;
    let ay = c[begin + 1] as number;
    for (let i = begin + 2; i < end; i += 2) {
      const bx = c[i] as number;
      const by = c[i + 1] as number;
      // Inline rejection of edges entirely above or below the ray (the common case).
      if (ay > y !== by > y || ay === y) {
        const step = edgeStep(ax, ay, bx, by, x, y);
        if (step < 0) return true;
        crossings += step;
      }
      ax = bx;
      ay = by;
    }
    begin = end;
  }
  return (crossings & 1) === 1;
}

/**
 * Exact test of the point in {@link lookupPoint} against a polygon of `st` given by its fields: bbox at
 * `row[b .. b + 4)` (its record or a copy), first position `p0`, grid state `grid` (as from
 * {@link ensureGrid}) and grid size `g`, ring ends at `ringsAt`, `rings` rings. Boundary inside. Precondition: the point lies
 * in the bbox. Integer arguments only: V8 boxes the double arguments of calls it does not inline.
 */
export function polygonTest(
  st: FenceStore,
  row: Float64Array,
  b: number,
  p0: number,
  grid: number,
  g: number,
  ringsAt: number,
  rings: number,
): boolean {
  const bits = st.chunkBits;
  const coords = st.coords[p0 >>> bits] as Float64Array;
  const local = p0 & ((1 << bits) - 1);
  if (grid > 0) {
    const at = grid - 1;
    const located = gridLocate(coords, st.grids.chunk(at), at & ARENA_CHUNK_MASK, g, row, b, local);
    if (located >= 0) return located === 1;
  }
  return scanContains(coords, st.ringEnds, local, ringsAt, rings);
}

/**
 * Exact test of polygon `slot` of `st` for the point in {@link lookupPoint} (set it first). Boundary counts
 * as inside. Precondition: the point lies in the slot's box; {@link slotContains} checks it for other callers.
 */
export function polygonContainsPoint(st: FenceStore, slot: number): boolean {
  const rec = st.rec;
  const o = slot * REC;
  const grid = ensureGrid(st, slot);
  return polygonTest(
    st,
    rec,
    o,
    (rec[o + R_P0] as number) | 0,
    grid,
    grid > 0 ? blockGridSize(st.grids, grid - 1) : 0,
    (rec[o + R_RINGS_AT] as number) | 0,
    (rec[o + R_RINGS] as number) | 0,
  );
}

/** {@link polygonContainsPoint} for (x, y). */
export function polygonContains(st: FenceStore, slot: number, x: number, y: number): boolean {
  setLookupPoint(x, y);
  return polygonContainsPoint(st, slot);
}

/**
 * Whether the point in {@link lookupPoint} lies in circle `slot`'s inner box, hence in the circle (see
 * {@link circleInnerBox}).
 */
export function circleInnerContainsPoint(rec: Float64Array, slot: number): boolean {
  const o = slot * REC;
  return (
    Math.abs((lookupPoint[1] as number) - (rec[o + R_LAT] as number)) <= (rec[o + R_IN_LAT] as number) &&
    Math.abs((lookupPoint[0] as number) - (rec[o + R_LNG] as number)) <= (rec[o + R_IN_LNG] as number)
  );
}

/**
 * Exact circle test of circle `slot` for the point (x, y) in {@link lookupPoint}, bit-identical to
 * `haversineDistance(lng, lat, x, y) <= radius`: the same operations, with the centre's cosine precomputed
 * and cos y cached in `lookupPoint[2]` (NaN = not computed yet for this point).
 */
export function haversineContainsPoint(rec: Float64Array, slot: number): boolean {
  const o = slot * REC;
  const x = lookupPoint[0] as number;
  const y = lookupPoint[1] as number;
  let cosY = lookupPoint[2] as number;
  if (Number.isNaN(cosY)) {
    cosY = Math.cos(toRadians(y));
    lookupPoint[2] = cosY;
  }
  const dLat = toRadians(y - (rec[o + R_LAT] as number));
  const dLon = toRadians(x - (rec[o + R_LNG] as number));
  const a = Math.sin(dLat / 2) ** 2 + Math.sin(dLon / 2) ** 2 * (rec[o + R_COS_LAT] as number) * cosY;
  return 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a)) * EARTH_RADIUS_M <= (rec[o + R_RADIUS] as number);
}

/** Sets the point of the next lookups (x, y); see {@link lookupPoint}. */
export function setLookupPoint(x: number, y: number): void {
  lookupPoint[0] = x;
  lookupPoint[1] = y;
  lookupPoint[2] = Number.NaN;
}

/** Exact circle test of circle `slot` (boundary inside): the inner box, else the haversine expression. */
export function circleContains(rec: Float64Array, slot: number, x: number, y: number): boolean {
  setLookupPoint(x, y);
  return circleInnerContainsPoint(rec, slot) || haversineContainsPoint(rec, slot);
}

/** Exact containment test of any slot and any point (boundary inside). */
export function slotContains(st: FenceStore, slot: number, x: number, y: number): boolean {
  const o = slot * REC;
  const rec = st.rec;
  if ((rec[o + R_CODE] as number) < 0) return circleContains(rec, slot, x, y);
  if (
    x < (rec[o] as number) ||
    y < (rec[o + 1] as number) ||
    x > (rec[o + 2] as number) ||
    y > (rec[o + 3] as number)
  ) {
    return false;
  }
  return polygonContains(st, slot, x, y);
}

export { lookupPoint };
