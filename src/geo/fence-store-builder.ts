import { circleBbox } from './bbox.ts';
import { circleInnerBox } from './circle-inner-box.ts';
import {
  CIRCLE_INDEX_PAD_DEG,
  MAX_POSITIONS_PER_FENCE,
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
  SIZED_CHUNK_BITS,
  STREAM_CHUNK_BITS,
} from './fence-layout.ts';
import {
  blockLength,
  type FenceSource,
  FenceStore,
  geometrySize,
  type StoreCapacity,
  slotSize,
} from './fence-store.ts';
import { toRadians } from './haversine.ts';
import { longF64, longI32, longPrefix, longU16 } from './long-lived.ts';
import { GRID_MIN_EDGES } from './polygon-grid.ts';
import type { FenceGeometry, Position } from './types.ts';
import { ARENA_CHUNK_MASK, U16Arena } from './u16-builder.ts';

function grownF64(a: Float64Array, need: number): Float64Array {
  if (need <= a.length) return a;
  const next = longF64(Math.max(need, 2 * a.length, 64));
  next.set(a);
  return next;
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
    this.#rec = longF64(REC * capacity.fences);
    this.#vertices = longI32(capacity.fences);
    // Exact: one chunk of the known size. Otherwise the first chunk starts at the expected size and grows
    // by doubling up to a full chunk; later chunks are full-size.
    this.#chunkBits = capacity.exact === true ? SIZED_CHUNK_BITS : STREAM_CHUNK_BITS;
    const first = capacity.exact === true ? capacity.positions : Math.max(64, capacity.positions);
    this.#chunk = longF64(2 * Math.min(2 ** this.#chunkBits, first));
    this.#ringEnds = longU16(capacity.rings);
    this.#grids = new U16Arena(Math.max(1024, capacity.gridWords));
  }

  get count(): number {
    return this.#count;
  }

  /** Ids of the slots added so far: the very array the finished store keeps as `ids`. */
  get ids(): readonly string[] {
    return this.#ids;
  }

  #newSlot(id: string): number {
    const slot = this.#count++;
    if (slot >= this.#vertices.length) {
      const cap = Math.max(16, 2 * this.#vertices.length);
      this.#rec = grownF64(this.#rec, REC * cap);
      const v = longI32(cap);
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
        const next = longF64(2 * Math.min(full, Math.max(this.#chunk.length, this.#used + positions)));
        next.set(this.#chunk.subarray(0, 2 * this.#used));
        this.#chunk = next;
      }
      if (this.#used + positions > this.#chunk.length >> 1) {
        this.#chunks.push(this.#chunk);
        this.#chunk = longF64(2 * Math.min(full, 1 << STREAM_CHUNK_BITS));
        this.#used = 0;
      }
    }
    if (this.#rings + rings > this.#ringEnds.length) {
      const e = longU16(Math.max(this.#rings + rings, 2 * this.#ringEnds.length, 16));
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

  /**
   * The store; arrays are trimmed when more than 1/8 of them would be unused (grown input), unless `trim`
   * is false (a compaction, which must not copy 100 MB in one step and wastes at most what was removed
   * while it ran).
   */
  finish(trim = true): FenceStore {
    const n = this.#count;
    const fit = <T extends Float64Array | Int32Array | Uint16Array>(a: T, used: number): T =>
      trim && a.length - used > a.length / 8 ? longPrefix(a, used) : a;
    if (this.#ids.length !== n) this.#ids.length = n;
    return new FenceStore({
      count: n,
      ids: this.#ids,
      rec: fit(this.#rec, REC * n),
      vertices: fit(this.#vertices, n),
      coords: [...this.#chunks, fit(this.#chunk, 2 * this.#used)],
      chunkBits: this.#chunkBits,
      ringEnds: fit(this.#ringEnds, this.#rings),
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
