import {
  R_CODE,
  R_GRID,
  R_IN_LAT,
  R_IN_LNG,
  R_LAT,
  R_RINGS,
  R_RINGS_AT,
  REC,
  RINGS_G,
} from './fence-layout.ts';
import { gridBlockLength, gridSize } from './polygon-grid.ts';
import type { FenceGeometry, Position } from './types.ts';
import { ARENA_CHUNK_MASK, type U16Arena } from './u16-builder.ts';

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
 * Files: the record and entry layout in fence-layout.ts; the store and its sizes here; the builder (from
 * geometries, or from slots of another store) in fence-store-builder.ts; the circle's inner box in
 * circle-inner-box.ts; the exact tests in fence-contains.ts. The typed arrays are long-lived (long-lived.ts).
 *
 * Lookups take the point from `lookupPoint` (polygon-grid.ts), not as arguments: the lookup functions are
 * too large for V8 to inline everywhere, and it boxes the double arguments of calls it does not inline.
 */

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

/** Entry column E_RINGS of polygon `slot`: its ring count and, once its grid exists, the grid size. */
export function ringsAndGrid(st: FenceStore, slot: number): number {
  const o = slot * REC;
  const state = st.rec[o + R_GRID] as number;
  return (st.rec[o + R_RINGS] as number) + RINGS_G * (state > 0 ? blockGridSize(st.grids, state - 1) : 0);
}

/** Grid size G of the block at global offset `at` of an arena. */
export function blockGridSize(grids: U16Arena, at: number): number {
  return gridSize(grids.chunk(at), at & ARENA_CHUNK_MASK);
}

/** Length in words of the block at global offset `at` of an arena. */
export function blockLength(grids: U16Arena, at: number): number {
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
