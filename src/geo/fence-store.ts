import { circleBbox } from './bbox.ts';
import { EARTH_RADIUS_M } from './constants.ts';
import { edgeStep } from './edge-step.ts';
import { toRadians } from './haversine.ts';
import {
  appendPolygonGrid,
  GRID_MIN_EDGES,
  gridBlockLength,
  gridLocate,
  gridSize,
  lookupPoint,
} from './polygon-grid.ts';
import type { FenceGeometry, Position } from './types.ts';
import { ARENA_CHUNK_MASK, U16Arena } from './u16-builder.ts';

/**
 * Compiled, lookup-ready fences, packed struct-of-arrays style into a few typed arrays ("slots").
 *
 * Why packed: compiling 100 000 fences into their own typed arrays meant ~400 000 ArrayBuffer allocations
 * (seconds of build, mostly GC), and a lookup chased 4–6 pointers per fence. A slot's metadata is one
 * record of {@link REC} doubles in `rec`. The spatial grid (grid-index.ts) lists each slot in its cells as
 * an {@link ENTRY} row — its box plus what its exact test needs — so that testing a candidate reads no
 * record: only the polygon's grid cell and coordinates, or nothing more for a point in a circle's inner box.
 *
 * Polygons: rings as interleaved [x0, y0, x1, y1, …] (rings closed) in coordinate chunks: position p is at
 * `coords[p >>> chunkBits][2 · (p & (2^chunkBits − 1))]`, a polygon never straddling two. A store built
 * from counted input has one exactly-sized chunk; streamed input fills chunks of 2^20 positions (16 MB),
 * so nothing is copied as it grows. Ring ends in `ringEnds`; for polygons with ≥ GRID_MIN_EDGES edges a
 * cell grid (polygon-grid.ts), built on the polygon's first lookup, in the `grids` arena. Offsets inside a
 * fence's tables are relative to the fence, so slots are copied between stores (compaction) verbatim.
 *
 * Circles: centre, radius and cos(centre latitude), so the test is the exact floating-point expression of
 * `haversineDistance` (bit-identical) with the centre's cosine hoisted; plus an "inner box" in degrees
 * around the centre that lies inside the circle with a relative margin of 1e-6, so most points inside skip
 * the trigonometry (see {@link circleInnerBox}).
 *
 * The store is built by a {@link FenceStoreBuilder}, straight from geometries (or from slots of another
 * store).
 *
 * Lookups take the point from {@link lookupPoint} (polygon-grid.ts), not as arguments: the lookup functions
 * are too large for V8 to inline everywhere, and it boxes the double arguments of calls it does not inline.
 */

/**
 * Record layout, {@link REC} doubles per slot:
 *  [0..3] index box [w, s, e, n] (polygons: the exact bbox; circles: padded, may wrap with w > e)
 *  [4]    slot code: slot for a polygon, −(slot + 1) for a circle
 *  polygon [5] first position, [6] first ring end (index in `ringEnds`), [7] ring count,
 *          [8] grid: 0 = none, −1 = not built yet, b + 1 = grid block at global offset b of `grids`
 *  circle  [5] lng, [6] lat, [7] radius (m), [8] cos(lat), [9] inner half-height (°), [10] inner half-width (°)
 */
export const REC = 11;
const R_CODE = 4;
const R_P0 = 5;
const R_RINGS_AT = 6;
const R_RINGS = 7;
const R_GRID = 8;
const R_LNG = 5;
const R_LAT = 6;
const R_RADIUS = 7;
const R_COS_LAT = 8;
const R_IN_LAT = 9;
const R_IN_LNG = 10;

/**
 * A slot's entry in the spatial grid's cells (grid-index.ts): {@link ENTRY} doubles, one cache line, so
 * that a candidate is tested without reading its record:
 *  [0..3] box [w, s, e, n] (never wrapping: a wrapping circle has two entries, one per half)
 *  polygon [4] first position, [5] grid state (as `rec`), [6] first ring end,
 *          [7] ring count + {@link RINGS_G} × grid size G (0 without a grid)
 *  circle  [4] lng, [5] lat, [6] inner half-height (°), [7] inner half-width (°); the exact test reads `rec`
 */
export const ENTRY = 8;
export const E_P0 = 4;
export const E_GRID = 5;
export const E_RINGS_AT = 6;
export const E_RINGS = 7;
/** Ring counts are < 1024 (≤ 501 rings); the grid size G (≤ 64) is packed above them. */
export const RINGS_G = 1024;

/** Entry column E_RINGS of polygon `slot`: its ring count and, once its grid exists, the grid size. */
export function ringsAndGrid(st: FenceStore, slot: number): number {
  const o = slot * REC;
  const state = st.rec[o + R_GRID] as number;
  return (st.rec[o + R_RINGS] as number) + RINGS_G * (state > 0 ? blockGridSize(st.grids, state - 1) : 0);
}

/** Grid size G of the block at global offset `at` of an arena. */
function blockGridSize(grids: U16Arena, at: number): number {
  return gridSize(grids.chunk(at), at & ARENA_CHUNK_MASK);
}

/** Length in words of the block at global offset `at` of an arena. */
function blockLength(grids: U16Arena, at: number): number {
  return gridBlockLength(grids.chunk(at), at & ARENA_CHUNK_MASK);
}

/** Write slot `slot`'s entry columns 4..7 at `out[at + 4 ..]` (the caller writes the box, 0..3). */
export function writeEntry(st: FenceStore, slot: number, out: Float64Array, at: number): void {
  const rec = st.rec;
  const o = slot * REC;
  out[at + 4] = rec[o + 5] as number; // first position | lng
  if (st.isCircle(slot)) {
    out[at + 5] = rec[o + R_LAT] as number;
    out[at + 6] = rec[o + R_IN_LAT] as number;
    out[at + 7] = rec[o + R_IN_LNG] as number;
  } else {
    out[at + 5] = rec[o + R_GRID] as number;
    out[at + 6] = rec[o + R_RINGS_AT] as number;
    out[at + 7] = ringsAndGrid(st, slot);
  }
}

/** Whether the point in {@link lookupPoint} lies in the inner box of the circle whose entry is `ent[b ..]`. */
export function circleEntryInner(ent: Float64Array, b: number): boolean {
  return (
    Math.abs((lookupPoint[1] as number) - (ent[b + 5] as number)) <= (ent[b + 6] as number) &&
    Math.abs((lookupPoint[0] as number) - (ent[b + 4] as number)) <= (ent[b + 7] as number)
  );
}

/** Chunk width when the number of positions is not known up front: 2^20 positions (16 MB of doubles). */
export const STREAM_CHUNK_BITS = 20;
/** Chunk width when it is (one chunk; 2^30 positions is far beyond any index). */
export const SIZED_CHUNK_BITS = 30;

/** Validated polygons have ≤ 500 vertices plus one closing position per ring; ring ends are Uint16. */
const MAX_POSITIONS_PER_FENCE = 8000;
/** ~0.1 mm: makes a circle's index box conservative against rounding in its trigonometry. */
export const CIRCLE_INDEX_PAD_DEG = 1e-9;
/**
 * Relative margin of a circle's inner box: points in it are at most (1 − 1e-6) · radius from the centre,
 * far beyond the ~1e-15 relative rounding of the haversine expression, so the exact test would say inside.
 */
const INNER_MARGIN = 1e-6;
/** Circles smaller than this (metres) get no inner box (keeps the error analysis trivially safe). */
const INNER_MIN_RADIUS_M = 1;

export class FenceStore {
  readonly count: number;
  readonly ids: string[];
  readonly rec: Float64Array;
  /** Stored vertices per slot (Σ over rings of positions − 1; 1 for a circle). */
  readonly vertices: Int32Array;
  /** Coordinate chunks (see the module comment). */
  readonly coords: Float64Array[];
  readonly chunkBits: number;
  /** Ring ends of each polygon, in positions relative to its first position. */
  readonly ringEnds: Uint16Array;
  /**
   * Arena of the polygons' cell grids. A grid is built on the polygon's first lookup (see
   * {@link polygonContains}), so this is the only part of a store that grows after the build.
   */
  readonly grids: U16Arena;

  constructor(parts: {
    count: number;
    ids: string[];
    rec: Float64Array;
    vertices: Int32Array;
    coords: Float64Array[];
    chunkBits: number;
    ringEnds: Uint16Array;
    grids: U16Arena;
  }) {
    this.chunkBits = parts.chunkBits;
    this.count = parts.count;
    this.ids = parts.ids;
    this.rec = parts.rec;
    this.vertices = parts.vertices;
    this.coords = parts.coords;
    this.ringEnds = parts.ringEnds;
    this.grids = parts.grids;
  }

  isCircle(slot: number): boolean {
    return (this.rec[slot * REC + R_CODE] as number) < 0;
  }

  /** A polygon's grid state: 0 = no grid (scanned), −1 = not built yet, > 0 = built. Circles: 0. */
  gridState(slot: number): number {
    return this.isCircle(slot) ? 0 : (this.rec[slot * REC + R_GRID] as number);
  }

  /** The slot's index box `[w, s, e, n]` (may wrap for circles). */
  box(slot: number): [number, number, number, number] {
    const o = slot * REC;
    const r = this.rec;
    return [r[o] as number, r[o + 1] as number, r[o + 2] as number, r[o + 3] as number];
  }

  /** Bytes of the typed-array payloads plus the id strings and array slots (an estimate of retained heap). */
  get approxBytes(): number {
    let bytes = 8 * this.ids.length + this.grids.byteLength + 100;
    for (const a of [this.rec, this.vertices, this.ringEnds, ...this.coords]) bytes += a.byteLength + 100;
    for (const id of this.ids) bytes += 16 + id.length;
    return bytes;
  }
}

/** Source of one slot for {@link buildFenceStore}: a validated geometry, or a slot of an existing store. */
export type FenceSource = { id: string; geometry: FenceGeometry } | { store: FenceStore; slot: number };

/**
 * Capacities to pre-size a {@link FenceStoreBuilder} with (it grows beyond them when needed). `exact`:
 * `positions` is the exact total, so coordinates go into one chunk of exactly that size.
 */
export interface StoreCapacity {
  fences: number;
  positions: number;
  rings: number;
  gridWords: number;
  exact?: boolean;
}

/** Positions and rings a geometry will occupy in a store (0 for a circle). */
export function geometrySize(g: FenceGeometry, into: StoreCapacity): void {
  into.fences++;
  if (g.type !== 'Polygon') return;
  const rings = g.coordinates;
  into.rings += rings.length;
  for (let r = 0; r < rings.length; r++) into.positions += (rings[r] as Position[]).length;
}

/** Positions, rings and grid words one slot of a store will occupy when copied. */
export function slotSize(st: FenceStore, slot: number, into: StoreCapacity): void {
  into.fences++;
  if (st.isCircle(slot)) return;
  const o = slot * REC;
  const rc = st.rec[o + R_RINGS] as number;
  into.rings += rc;
  into.positions += (st.vertices[slot] as number) + rc;
  const gs = st.rec[o + R_GRID] as number;
  if (gs > 0) into.gridWords += blockLength(st.grids, gs - 1) + 3; // + alignment
}

function grownF64(a: Float64Array, need: number): Float64Array {
  if (need <= a.length) return a;
  const next = new Float64Array(Math.max(need, 2 * a.length, 64));
  next.set(a);
  return next;
}

/**
 * Half-height and half-width (degrees) of a box around a circle's centre whose points all lie within
 * (1 − INNER_MARGIN) · radius of it; [−1, −1] (never passes) for radii < INNER_MIN_RADIUS_M.
 *
 * With θ = (1 − INNER_MARGIN) · r / R and hav(t) = sin²(t/2), the haversine formula gives
 * hav(d/R) = hav(Δφ) + cos φ0 · cos φ · hav(Δλ). Take hav(A) = hav(θ)/2 for |Δφ| ≤ A and
 * cos φ0 · cmax · hav(B) = hav(θ)/2 for |Δλ| ≤ B, where cmax bounds cos φ over φ0 ± A (plus 1e-15, the
 * absolute error of Math.cos near the poles; cos φ0 is the stored value the expression uses). Then the
 * true distance is ≤ θ · R, and the floating-point expression (relative error ~1e-15 for these inputs:
 * differences of doubles are correctly rounded, sin/cos/atan2/sqrt are accurate to an ulp or two) stays
 * below r. A and B are shrunk by 1e-9 to absorb the rounding of this computation itself. The box ignores
 * longitude wrap (|x − lng| beyond it falls through to the exact test).
 */
export function circleInnerBox(lat: number, radius: number, cosLat: number): [number, number] {
  if (!(radius >= INNER_MIN_RADIUS_M)) return [-1, -1];
  const theta = ((1 - INNER_MARGIN) * radius) / EARTH_RADIUS_M;
  const hTheta = Math.sin(theta / 2) ** 2;
  const aRad = 2 * Math.asin(Math.sqrt(hTheta / 2));
  const phi = toRadians(lat);
  const lo = phi - aRad;
  const hi = phi + aRad;
  const nearest = lo <= 0 && hi >= 0 ? 0 : Math.min(Math.abs(lo), Math.abs(hi));
  const cmax = Math.min(1, Math.cos(nearest) * (1 + 1e-12) + 1e-15);
  const k = Math.abs(cosLat) * cmax;
  const toDeg = (180 / Math.PI) * (1 - 1e-9);
  const halfLat = aRad * toDeg;
  if (k * 1 <= hTheta / 2) return [halfLat, 360]; // any longitude difference (hav ≤ 1)
  const s = Math.sqrt(hTheta / (2 * k));
  const halfLng = s >= 1 ? 360 : 2 * Math.asin(s) * toDeg;
  return [halfLat, halfLng];
}

/** Compiles fences into a new {@link FenceStore}, slot by slot. */
export class FenceStoreBuilder {
  #count = 0;
  #ids: string[];
  #rec: Float64Array;
  #vertices: Int32Array;
  /** Full chunks, then the current one (`#chunk`, of which `#used` positions are filled). */
  readonly #chunks: Float64Array[] = [];
  #chunk: Float64Array;
  #used = 0;
  readonly #chunkBits: number;
  #ringEnds: Uint16Array;
  #rings = 0;
  readonly #grids: U16Arena;

  constructor(capacity: StoreCapacity = { fences: 16, positions: 256, rings: 16, gridWords: 0 }) {
    this.#ids = new Array<string>(capacity.fences);
    this.#rec = new Float64Array(REC * capacity.fences);
    this.#vertices = new Int32Array(capacity.fences);
    // Exact: one chunk of the known size. Otherwise the first chunk starts at the expected size and grows
    // by doubling up to a full chunk; later chunks are full-size.
    this.#chunkBits = capacity.exact === true ? SIZED_CHUNK_BITS : STREAM_CHUNK_BITS;
    const first = capacity.exact === true ? capacity.positions : Math.max(64, capacity.positions);
    this.#chunk = new Float64Array(2 * Math.min(2 ** this.#chunkBits, first));
    this.#ringEnds = new Uint16Array(capacity.rings);
    this.#grids = new U16Arena(Math.max(1024, capacity.gridWords));
  }

  get count(): number {
    return this.#count;
  }

  /** Id of a slot added so far. */
  id(slot: number): string {
    return this.#ids[slot] as string;
  }

  #newSlot(id: string): number {
    const slot = this.#count++;
    if (slot >= this.#vertices.length) {
      const cap = Math.max(16, 2 * this.#vertices.length);
      this.#rec = grownF64(this.#rec, REC * cap);
      const v = new Int32Array(cap);
      v.set(this.#vertices);
      this.#vertices = v;
    }
    this.#ids[slot] = id;
    return slot;
  }

  /** Room for a polygon of `positions` positions and `rings` rings; returns its first position. */
  #reserve(positions: number, rings: number): number {
    if (this.#used + positions > this.#chunk.length >> 1) {
      const full = 2 ** this.#chunkBits;
      if (this.#chunk.length < 2 * full) {
        // Grow the current chunk by doubling up to the full chunk size.
        const next = new Float64Array(
          2 * Math.min(full, Math.max(this.#chunk.length, this.#used + positions)),
        );
        next.set(this.#chunk.subarray(0, 2 * this.#used));
        this.#chunk = next;
      }
      if (this.#used + positions > this.#chunk.length >> 1) {
        this.#chunks.push(this.#chunk);
        this.#chunk = new Float64Array(2 * Math.min(full, 1 << STREAM_CHUNK_BITS));
        this.#used = 0;
      }
    }
    if (this.#rings + rings > this.#ringEnds.length) {
      const e = new Uint16Array(Math.max(this.#rings + rings, 2 * this.#ringEnds.length, 16));
      e.set(this.#ringEnds);
      this.#ringEnds = e;
    }
    return this.#chunks.length * 2 ** this.#chunkBits + this.#used;
  }

  /** Compile a validated geometry into the next slot; returns the slot. */
  add(id: string, g: FenceGeometry): number {
    const slot = this.#newSlot(id);
    const rec = this.#rec;
    const o = slot * REC;
    if (g.type === 'Circle') {
      const lng = g.coordinates[0];
      const lat = g.coordinates[1];
      const box = circleBbox(lng, lat, g.radius, CIRCLE_INDEX_PAD_DEG);
      rec[o] = box[0];
      rec[o + 1] = box[1];
      rec[o + 2] = box[2];
      rec[o + 3] = box[3];
      rec[o + R_CODE] = -(slot + 1);
      rec[o + R_LNG] = lng;
      rec[o + R_LAT] = lat;
      rec[o + R_RADIUS] = g.radius;
      const cosLat = Math.cos(toRadians(lat));
      rec[o + R_COS_LAT] = cosLat;
      const inner = circleInnerBox(lat, g.radius, cosLat);
      rec[o + R_IN_LAT] = inner[0];
      rec[o + R_IN_LNG] = inner[1];
      this.#vertices[slot] = 1;
      return slot;
    }
    const rings = g.coordinates;
    const rc = rings.length;
    let pc = 0;
    for (let k = 0; k < rc; k++) pc += (rings[k] as Position[]).length;
    if (pc > MAX_POSITIONS_PER_FENCE) {
      throw new RangeError(
        `fence ${id}: more than ${MAX_POSITIONS_PER_FENCE} positions; validate geometries first`,
      );
    }
    const p0 = this.#reserve(pc, rc);
    const c = this.#chunk;
    const ends = this.#ringEnds;
    const r0 = this.#rings;
    let west = Number.POSITIVE_INFINITY;
    let south = Number.POSITIVE_INFINITY;
    let east = Number.NEGATIVE_INFINITY;
    let north = Number.NEGATIVE_INFINITY;
    const at0 = 2 * this.#used;
    let at = at0;
    for (let k = 0; k < rc; k++) {
      const ring = rings[k] as Position[];
      const n = ring.length;
      if (k === 0) {
        // The exterior ring: copy and take its bbox (holes lie inside it).
        for (let i = 0; i < n; i++) {
          const pos = ring[i] as Position;
          const x = pos[0];
          const y = pos[1];
          c[at++] = x;
          c[at++] = y;
          if (x < west) west = x;
          if (x > east) east = x;
          if (y < south) south = y;
          if (y > north) north = y;
        }
      } else {
        for (let i = 0; i < n; i++) {
          const pos = ring[i] as Position;
          c[at++] = pos[0];
          c[at++] = pos[1];
        }
      }
      ends[r0 + k] = (at - at0) >> 1;
    }
    this.#used += pc;
    this.#rings = r0 + rc;
    const edges = pc - rc;
    rec[o] = west;
    rec[o + 1] = south;
    rec[o + 2] = east;
    rec[o + 3] = north;
    rec[o + R_CODE] = slot;
    rec[o + R_P0] = p0;
    rec[o + R_RINGS_AT] = r0;
    rec[o + R_RINGS] = rc;
    rec[o + R_GRID] = edges >= GRID_MIN_EDGES ? -1 : 0;
    this.#vertices[slot] = edges;
    return slot;
  }

  /** Copy slot `from` of `st` verbatim (compaction), including a grid already built; returns the slot. */
  copy(st: FenceStore, from: number): number {
    const slot = this.#newSlot(st.ids[from] as string);
    const rec = this.#rec;
    const o = slot * REC;
    const so = from * REC;
    for (let k = 0; k < REC; k++) rec[o + k] = st.rec[so + k] as number;
    this.#vertices[slot] = st.vertices[from] as number;
    if (st.isCircle(from)) {
      rec[o + R_CODE] = -(slot + 1);
      return slot;
    }
    rec[o + R_CODE] = slot;
    const rc = st.rec[so + R_RINGS] as number;
    const pc = (st.vertices[from] as number) + rc;
    const p0 = this.#reserve(pc, rc);
    const sp = st.rec[so + R_P0] as number;
    const at = 2 * (sp & ((1 << st.chunkBits) - 1));
    const source = st.coords[sp >>> st.chunkBits] as Float64Array;
    this.#chunk.set(source.subarray(at, at + 2 * pc), 2 * this.#used);
    rec[o + R_P0] = p0;
    this.#used += pc;
    const ra = st.rec[so + R_RINGS_AT] as number;
    for (let k = 0; k < rc; k++) this.#ringEnds[this.#rings + k] = st.ringEnds[ra + k] as number;
    rec[o + R_RINGS_AT] = this.#rings;
    this.#rings += rc;
    const gs = st.rec[so + R_GRID] as number;
    if (gs > 0) {
      const len = blockLength(st.grids, gs - 1);
      const at = this.#grids.alloc(len);
      const from = (gs - 1) & ARENA_CHUNK_MASK;
      this.#grids.chunk(at).set(st.grids.chunk(gs - 1).subarray(from, from + len), at & ARENA_CHUNK_MASK);
      rec[o + R_GRID] = at + 1;
    }
    return slot;
  }

  /** The store; arrays are trimmed when more than 1/8 of them would be unused (grown input). */
  finish(): FenceStore {
    const n = this.#count;
    const trim = <T extends Float64Array | Int32Array | Uint16Array>(a: T, used: number): T =>
      a.length - used > a.length / 8 ? (a.slice(0, used) as T) : a;
    if (this.#ids.length !== n) this.#ids.length = n;
    return new FenceStore({
      count: n,
      ids: this.#ids,
      rec: trim(this.#rec, REC * n),
      vertices: trim(this.#vertices, n),
      coords: [...this.#chunks, trim(this.#chunk, 2 * this.#used)],
      chunkBits: this.#chunkBits,
      ringEnds: trim(this.#ringEnds, this.#rings),
      grids: this.#grids,
    });
  }
}

/**
 * Pack fences into a new store. Geometries are compiled; slots of existing stores are copied verbatim
 * (compaction), including the grids already built: a few `TypedArray#set`s per fence.
 */
export function buildFenceStore(sources: readonly FenceSource[]): FenceStore {
  const size: StoreCapacity = { fences: 0, positions: 0, rings: 0, gridWords: 0, exact: true };
  for (const src of sources) {
    if ('geometry' in src) geometrySize(src.geometry, size);
    else slotSize(src.store, src.slot, size);
  }
  const builder = new FenceStoreBuilder(size);
  for (const src of sources) {
    if ('geometry' in src) builder.add(src.id, src.geometry);
    else builder.copy(src.store, src.slot);
  }
  return builder.finish();
}

/**
 * The grid state of polygon `slot` (0 = none, b + 1 = block at global offset b of `grids`), building it now if
 * it is pending: on the polygon's first lookup. A grid costs ~10–50 µs; building it lazily keeps the bulk
 * build fast and spends that only on fences that are actually looked up.
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
