import { circleBbox, ringBbox } from './bbox.ts';
import { EARTH_RADIUS_M } from './constants.ts';
import { edgeStep } from './edge-step.ts';
import { toRadians } from './haversine.ts';
import { appendPolygonGrid, GRID_MIN_EDGES, gridBlockLength, gridLocate } from './polygon-grid.ts';
import type { FenceGeometry, Position } from './types.ts';
import { U16Builder } from './u16-builder.ts';

/**
 * Compiled, lookup-ready fences, packed struct-of-arrays style into a few typed arrays ("slots").
 *
 * Why packed: compiling 100 000 fences into their own typed arrays meant ~400 000 ArrayBuffer allocations
 * (seconds of build, mostly GC), and a lookup chased 4–6 pointers per fence. Lookups are bound by cache
 * misses, so a slot's metadata is one record of {@link REC} doubles, which the spatial grid also copies
 * inline into its cell entries (grid-index.ts): a candidate is tested without touching the store's records.
 *
 * Polygons: rings as interleaved [x0, y0, x1, y1, …] in `coords` (rings closed), ring ends in `ringEnds`,
 * and for polygons with ≥ GRID_MIN_EDGES edges a cell grid (polygon-grid.ts) in the `grids` arena that
 * answers most lookups from one cell word. Offsets inside a fence's tables are relative to the fence, so
 * slots are copied between stores (compaction) verbatim.
 *
 * Circles: centre, radius and cos(centre latitude), so the test is the exact floating-point expression of
 * `haversineDistance` (bit-identical) with the centre's cosine hoisted.
 */

/**
 * Record layout, {@link REC} doubles per slot:
 *  [0..3] index box [w, s, e, n] (polygons: the exact bbox; circles: padded, may wrap with w > e)
 *  [4]    slot code: slot for a polygon, −(slot + 1) for a circle
 *  polygon [5] first position, [6] first ring end (index in `ringEnds`), [7] ring count, [8] unused
 *  circle  [5] lng, [6] lat, [7] radius (m), [8] cos(lat)
 */
export const REC = 9;
const R_CODE = 4;
const R_P0 = 5;
const R_RINGS_AT = 6;
const R_RINGS = 7;
const R_LNG = 5;
const R_LAT = 6;
const R_RADIUS = 7;
const R_COS_LAT = 8;

/** Validated polygons have ≤ 500 vertices plus one closing position per ring; ring ends are Uint16. */
const MAX_POSITIONS_PER_FENCE = 8000;
/** ~0.1 mm: makes a circle's index box conservative against rounding in its trigonometry. */
export const CIRCLE_INDEX_PAD_DEG = 1e-9;

export class FenceStore {
  readonly count: number;
  readonly ids: string[];
  readonly rec: Float64Array;
  /** Stored vertices per slot (Σ over rings of positions − 1; 1 for a circle). */
  readonly vertices: Int32Array;
  readonly coords: Float64Array;
  /** Ring ends of each polygon, in positions relative to its first position. */
  readonly ringEnds: Uint16Array;
  /** Per slot: 0 = no grid, −1 = grid not built yet, b + 1 = grid block at `grids.data[b]`. */
  readonly gridState: Float64Array;
  /**
   * Arena of the polygons' cell grids. A grid is built on the polygon's first lookup (see
   * {@link polygonContains}), so this is the only part of a store that grows after the build.
   */
  readonly grids: U16Builder;

  constructor(parts: {
    ids: string[];
    rec: Float64Array;
    vertices: Int32Array;
    coords: Float64Array;
    ringEnds: Uint16Array;
    gridState: Float64Array;
    grids: U16Builder;
  }) {
    this.count = parts.ids.length;
    this.ids = parts.ids;
    this.rec = parts.rec;
    this.vertices = parts.vertices;
    this.coords = parts.coords;
    this.ringEnds = parts.ringEnds;
    this.gridState = parts.gridState;
    this.grids = parts.grids;
  }

  isCircle(slot: number): boolean {
    return (this.rec[slot * REC + R_CODE] as number) < 0;
  }

  /** The slot's index box `[w, s, e, n]` (may wrap for circles). */
  box(slot: number): [number, number, number, number] {
    const o = slot * REC;
    const r = this.rec;
    return [r[o] as number, r[o + 1] as number, r[o + 2] as number, r[o + 3] as number];
  }

  /** Bytes of the typed-array payloads plus the id strings and array slots (an estimate of retained heap). */
  get approxBytes(): number {
    let bytes = 8 * this.ids.length + this.grids.data.byteLength + 100;
    for (const a of [this.rec, this.vertices, this.coords, this.ringEnds, this.gridState])
      bytes += a.byteLength + 100;
    for (const id of this.ids) bytes += 16 + id.length;
    return bytes;
  }
}

/** Source of one slot for {@link buildFenceStore}: a validated geometry, or a slot of an existing store. */
export type FenceSource = { id: string; geometry: FenceGeometry } | { store: FenceStore; slot: number };

/**
 * Pack fences into a new store. Geometries are compiled; slots of existing stores are copied verbatim
 * (compaction), including the grids already built: a few `TypedArray#set`s per fence.
 */
export function buildFenceStore(sources: readonly FenceSource[]): FenceStore {
  const n = sources.length;
  let positions = 0;
  let rings = 0;
  let gridWords = 0;
  for (const src of sources) {
    if ('geometry' in src) {
      if (src.geometry.type === 'Polygon') {
        rings += src.geometry.coordinates.length;
        for (const ring of src.geometry.coordinates) positions += ring.length;
      }
    } else if (!src.store.isCircle(src.slot)) {
      const rc = src.store.rec[src.slot * REC + R_RINGS] as number;
      rings += rc;
      positions += (src.store.vertices[src.slot] as number) + rc;
      const gs = src.store.gridState[src.slot] as number;
      if (gs > 0) gridWords += gridBlockLength(src.store.grids.data, gs - 1);
    }
  }
  const ids = new Array<string>(n);
  const rec = new Float64Array(REC * n);
  const vertices = new Int32Array(n);
  const coords = new Float64Array(2 * positions);
  const ringEnds = new Uint16Array(rings);
  const gridState = new Float64Array(n);
  const grids = new U16Builder(Math.max(1024, gridWords));
  let p = 0; // next free position
  let r = 0; // next free ring end
  for (let slot = 0; slot < n; slot++) {
    const src = sources[slot] as FenceSource;
    const o = slot * REC;
    if (!('geometry' in src)) {
      const st = src.store;
      const from = src.slot;
      const so = from * REC;
      ids[slot] = st.ids[from] as string;
      vertices[slot] = st.vertices[from] as number;
      for (let k = 0; k < REC; k++) rec[o + k] = st.rec[so + k] as number;
      if (st.isCircle(from)) {
        rec[o + R_CODE] = -(slot + 1);
        continue;
      }
      rec[o + R_CODE] = slot;
      const rc = st.rec[so + R_RINGS] as number;
      const pc = (st.vertices[from] as number) + rc;
      const sp = st.rec[so + R_P0] as number;
      coords.set(st.coords.subarray(2 * sp, 2 * (sp + pc)), 2 * p);
      rec[o + R_P0] = p;
      p += pc;
      const ra = st.rec[so + R_RINGS_AT] as number;
      for (let k = 0; k < rc; k++) ringEnds[r + k] = st.ringEnds[ra + k] as number;
      rec[o + R_RINGS_AT] = r;
      r += rc;
      const gs = st.gridState[from] as number;
      gridState[slot] = gs;
      if (gs > 0) {
        const len = gridBlockLength(st.grids.data, gs - 1);
        grids.reserve(len);
        grids.data.set(st.grids.data.subarray(gs - 1, gs - 1 + len), grids.length);
        gridState[slot] = grids.length + 1;
        grids.length += len;
      }
      continue;
    }
    ids[slot] = src.id;
    const g = src.geometry;
    if (g.type === 'Circle') {
      const [lng, lat] = g.coordinates;
      vertices[slot] = 1;
      rec.set(circleBbox(lng, lat, g.radius, CIRCLE_INDEX_PAD_DEG), o);
      rec[o + R_CODE] = -(slot + 1);
      rec[o + R_LNG] = lng;
      rec[o + R_LAT] = lat;
      rec[o + R_RADIUS] = g.radius;
      rec[o + R_COS_LAT] = Math.cos(toRadians(lat));
      continue;
    }
    const rc = g.coordinates.length;
    const p0 = p;
    for (let k = 0; k < rc; k++) {
      const ring = g.coordinates[k] as Position[];
      if (p - p0 + ring.length > MAX_POSITIONS_PER_FENCE) {
        throw new RangeError(
          `fence ${src.id}: more than ${MAX_POSITIONS_PER_FENCE} positions; validate geometries first`,
        );
      }
      for (const pos of ring) {
        coords[2 * p] = pos[0];
        coords[2 * p + 1] = pos[1];
        p++;
      }
      ringEnds[r + k] = p - p0;
    }
    const edges = p - p0 - rc;
    rec.set(ringBbox(g.coordinates[0] ?? []), o);
    rec[o + R_CODE] = slot;
    rec[o + R_P0] = p0;
    rec[o + R_RINGS_AT] = r;
    rec[o + R_RINGS] = rc;
    vertices[slot] = edges;
    gridState[slot] = edges >= GRID_MIN_EDGES ? -1 : 0;
    r += rc;
  }
  return new FenceStore({ ids, rec, vertices, coords, ringEnds, gridState, grids });
}

/**
 * Build the grid of a polygon now, on its first lookup. A grid costs ~10–50 µs per polygon; building it
 * lazily keeps the bulk build fast and spends that only on fences that are actually looked up.
 */
function buildGrid(st: FenceStore, slot: number): number {
  const rec = st.rec;
  const o = slot * REC;
  const block = appendPolygonGrid(
    st.coords,
    rec[o + R_P0] as number,
    st.ringEnds,
    rec[o + R_RINGS_AT] as number,
    rec[o + R_RINGS] as number,
    st.grids,
    rec[o] as number,
    rec[o + 1] as number,
    rec[o + 2] as number,
    rec[o + 3] as number,
  );
  st.gridState[slot] = block + 1; // 0 when no grid could be built: scan from now on
  return block + 1;
}

/** Exact test by scanning every edge of the polygon whose record is `row[b ..]` (boundary inside). */
function scanContains(
  c: Float64Array,
  ringEnds: Uint16Array,
  row: Float64Array,
  b: number,
  x: number,
  y: number,
): boolean {
  const p0 = (row[b + R_P0] as number) | 0;
  const ringsAt = (row[b + R_RINGS_AT] as number) | 0;
  const rings = (row[b + R_RINGS] as number) | 0;
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
 * Exact test of the polygon whose record (of store `st`) is `row[b ..]` — the store's own `rec` or a copy
 * in a grid entry. Boundary counts as inside. Precondition: (x, y) lies in the record's box, which the
 * index's box filter guarantees; {@link slotContains} checks it for other callers.
 */
export function polygonContains(st: FenceStore, row: Float64Array, b: number, x: number, y: number): boolean {
  const slot = (row[b + R_CODE] as number) | 0;
  let grid = st.gridState[slot] as number;
  if (grid < 0) grid = buildGrid(st, slot);
  if (grid > 0) {
    const located = gridLocate(st.coords, st.grids.data, grid - 1, row, b, x, y);
    if (located >= 0) return located === 1;
  }
  return scanContains(st.coords, st.ringEnds, row, b, x, y);
}

/**
 * Exact circle test of the record `row[b ..]`, bit-identical to `haversineDistance(lng, lat, x, y) <= radius`
 * (same operations, with the centre's cosine precomputed); `cosY` must be `Math.cos(toRadians(y))`.
 */
export function circleContains(row: Float64Array, b: number, x: number, y: number, cosY: number): boolean {
  const dLat = toRadians(y - (row[b + R_LAT] as number));
  const dLon = toRadians(x - (row[b + R_LNG] as number));
  const a = Math.sin(dLat / 2) ** 2 + Math.sin(dLon / 2) ** 2 * (row[b + R_COS_LAT] as number) * cosY;
  return 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a)) * EARTH_RADIUS_M <= (row[b + R_RADIUS] as number);
}

/** Slot of a record's code. */
export function slotOfCode(code: number): number {
  return code < 0 ? -code - 1 : code;
}

/** Exact containment test of any slot and any point (boundary inside). */
export function slotContains(st: FenceStore, slot: number, x: number, y: number): boolean {
  const o = slot * REC;
  const rec = st.rec;
  if ((rec[o + R_CODE] as number) < 0) return circleContains(rec, o, x, y, Math.cos(toRadians(y)));
  if (
    x < (rec[o] as number) ||
    y < (rec[o + 1] as number) ||
    x > (rec[o + 2] as number) ||
    y > (rec[o + 3] as number)
  ) {
    return false;
  }
  return polygonContains(st, rec, o, x, y);
}
