import RBush from 'rbush';
import { splitBbox } from './bbox.ts';
import {
  buildFenceStore,
  circleContains,
  type FenceSource,
  type FenceStore,
  polygonContains,
  REC,
} from './fence-store.ts';
import { hashCell, ROW, StaticGrid } from './grid-index.ts';
import { toRadians } from './haversine.ts';
import type { Bbox, FenceGeometry } from './types.ts';

/**
 * In-memory spatial index of geofences answering "which fences contain this point", exactly.
 *
 * Layout (docs/decisions/006-spatial-index.md):
 *  - a static part: fences packed into a {@link FenceStore} and a {@link StaticGrid} (hierarchical spatial
 *    hash) over their boxes, built in bulk;
 *  - a dynamic overlay: an `rbush` R-tree of fences upserted since the last compaction, each compiled
 *    into its own one-slot store;
 *  - tombstones: one byte per static slot, cleared when that fence is removed or replaced.
 * When overlay + tombstones exceed `max(compactMin, compactRatio × static size)` the static part is
 * rebuilt from the already-compiled slots (copied, not recompiled), so the O(n) rebuild is amortised
 * over Θ(n) updates and no single update re-validates or recompiles everything.
 *
 * A box crossing the antimeridian is stored as its two halves (`splitBbox`); they are disjoint, so a
 * point never matches a fence twice. Candidates are tested exactly (fence-store.ts).
 */

export interface GeofenceEntry {
  id: string;
  geometry: FenceGeometry;
}

export interface GeofenceIndexOptions {
  /** Compact when overlay + tombstones exceed this fraction of the static part (default 0.125). */
  compactRatio?: number;
  /** …and exceed this count (default 1024). */
  compactMin?: number;
  /** Compact automatically inside `upsert`/`remove` (default true); if false call `compact()` yourself. */
  autoCompact?: boolean;
}

export interface GeofenceIndexStats {
  size: number;
  staticFences: number;
  overlayFences: number;
  tombstones: number;
  compactions: number;
}

interface OverlayItem {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  /** A one-slot store holding the fence. */
  store: FenceStore;
}

interface StaticPart {
  store: FenceStore;
  grid: StaticGrid;
  /** One byte per slot: 1 live, 0 removed or replaced (tombstone). */
  alive: Uint8Array;
}

/**
 * Index rows: the store's records, a wrapping circle's record twice with its two non-wrapping halves as
 * boxes (the circle test does not read the box).
 */
function itemRows(store: FenceStore): Float64Array {
  const rec = store.rec;
  let items = store.count;
  for (let s = 0; s < store.count; s++) if ((rec[s * REC] as number) > (rec[s * REC + 2] as number)) items++;
  if (items === store.count) return rec;
  const rows = new Float64Array(items * REC);
  let it = 0;
  for (let s = 0; s < store.count; s++) {
    const o = s * REC;
    const box: Bbox = store.box(s);
    for (const half of box[0] > box[2] ? splitBbox(box) : [box]) {
      rows.set(rec.subarray(o, o + REC), it * REC);
      rows.set(half, it * REC);
      it++;
    }
  }
  return rows;
}

function buildStatic(store: FenceStore): StaticPart | null {
  if (store.count === 0) return null;
  return { store, grid: new StaticGrid(itemRows(store), REC), alive: new Uint8Array(store.count).fill(1) };
}

export class GeofenceIndex {
  readonly #compactRatio: number;
  readonly #compactMin: number;
  readonly #autoCompact: boolean;
  #static: StaticPart | null = null;
  /** id → static slot, for live static fences only. */
  #slotOf = new Map<string, number>();
  #tombstones = 0;
  #overlay = new Map<string, OverlayItem[]>();
  #overlayTree = new RBush<OverlayItem>();
  readonly #probe = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  #compactions = 0;

  constructor(options: GeofenceIndexOptions = {}) {
    this.#compactRatio = options.compactRatio ?? 0.125;
    this.#compactMin = options.compactMin ?? 1024;
    this.#autoCompact = options.autoCompact ?? true;
  }

  /** Bulk-build from validated geometries (for a repeated id the last one wins). */
  static build(entries: Iterable<GeofenceEntry>, options: GeofenceIndexOptions = {}): GeofenceIndex {
    const index = new GeofenceIndex(options);
    const byId = new Map<string, FenceSource>();
    for (const { id, geometry } of entries) {
      byId.delete(id); // keep insertion order of the last occurrence
      byId.set(id, { id, geometry });
    }
    index.#install(buildFenceStore([...byId.values()]));
    return index;
  }

  #install(store: FenceStore): void {
    this.#static = buildStatic(store);
    this.#slotOf = new Map();
    for (let slot = 0; slot < store.count; slot++) this.#slotOf.set(store.ids[slot] as string, slot);
    this.#tombstones = 0;
    this.#overlay = new Map();
    this.#overlayTree = new RBush<OverlayItem>();
  }

  /** Number of live fences. */
  get size(): number {
    return this.#slotOf.size + this.#overlay.size;
  }

  has(id: string): boolean {
    return this.#slotOf.has(id) || this.#overlay.has(id);
  }

  get stats(): GeofenceIndexStats {
    return {
      size: this.size,
      staticFences: this.#slotOf.size,
      overlayFences: this.#overlay.size,
      tombstones: this.#tombstones,
      compactions: this.#compactions,
    };
  }

  /** Insert or replace a fence; the geometry must come from `validateGeometry`. O(log n) amortised. */
  upsert(id: string, geometry: FenceGeometry): void {
    const store = buildFenceStore([{ id, geometry }]);
    this.#detach(id);
    const items = splitBbox(store.box(0)).map((b) => ({
      minX: b[0],
      minY: b[1],
      maxX: b[2],
      maxY: b[3],
      store,
    }));
    this.#overlay.set(id, items);
    for (const item of items) this.#overlayTree.insert(item);
    this.#maybeCompact();
  }

  /** Remove a fence; returns whether it existed. */
  remove(id: string): boolean {
    const existed = this.#detach(id);
    if (existed) this.#maybeCompact();
    return existed;
  }

  #detach(id: string): boolean {
    const slot = this.#slotOf.get(id);
    if (slot !== undefined && this.#static !== null) {
      this.#static.alive[slot] = 0;
      this.#slotOf.delete(id);
      this.#tombstones++;
      return true;
    }
    const items = this.#overlay.get(id);
    if (items === undefined) return false;
    for (const item of items) this.#overlayTree.remove(item);
    this.#overlay.delete(id);
    return true;
  }

  #maybeCompact(): void {
    if (!this.#autoCompact) return;
    const pending = this.#overlay.size + this.#tombstones;
    if (pending > Math.max(this.#compactMin, this.#compactRatio * this.#slotOf.size)) this.compact();
  }

  /** Rebuild the static part from all live fences (copying their compiled slots) and empty the overlay. */
  compact(): void {
    const sources: FenceSource[] = [];
    const st = this.#static;
    if (st !== null) {
      for (let slot = 0; slot < st.store.count; slot++)
        if (st.alive[slot] === 1) sources.push({ store: st.store, slot });
    }
    for (const items of this.#overlay.values())
      sources.push({ store: (items[0] as OverlayItem).store, slot: 0 });
    this.#install(buildFenceStore(sources));
    this.#compactions++;
  }

  /**
   * Ids of the fences containing (lng, lat), boundary inclusive, in no particular order. Returns `[]` for
   * non-finite or out-of-range coordinates (lng outside −180..180, lat outside −90..90).
   */
  query(lng: number, lat: number): string[] {
    const out: string[] = [];
    if (!(lng >= -180 && lng <= 180 && lat >= -90 && lat <= 90)) return out;
    let cosLat = Number.NaN;
    const st = this.#static;
    if (st !== null) {
      const { alive, store } = st;
      const levels = st.grid.levels;
      for (let l = 0; l < levels.length; l++) {
        const level = levels[l];
        if (level === undefined) break;
        const cx = Math.floor((lng + 180) * level.inv);
        const cy = Math.floor((lat + 90) * level.inv);
        const mask = level.mask;
        const table = level.table;
        let h = hashCell(cx, cy) & mask;
        for (;;) {
          const r = h * ROW;
          const k = table[r] as number;
          if (k === -1) break;
          if (k === cx && table[r + 1] === cy) {
            const ent = level.entries;
            const end = (table[r + 3] as number) * REC;
            for (let b = (table[r + 2] as number) * REC; b < end; b += REC) {
              if (lng < (ent[b] as number) || lat < (ent[b + 1] as number)) continue;
              if (lng > (ent[b + 2] as number) || lat > (ent[b + 3] as number)) continue;
              const code = ent[b + 4] as number;
              if (code >= 0) {
                if (alive[code] === 1 && polygonContains(store, ent, b, lng, lat))
                  out.push(store.ids[code] as string);
              } else {
                if (alive[-code - 1] === 0) continue;
                if (Number.isNaN(cosLat)) cosLat = Math.cos(toRadians(lat));
                if (circleContains(ent, b, lng, lat, cosLat)) out.push(store.ids[-code - 1] as string);
              }
            }
            break;
          }
          h = (h + 1) & mask;
        }
      }
    }
    if (this.#overlay.size > 0) {
      const probe = this.#probe;
      probe.minX = probe.maxX = lng;
      probe.minY = probe.maxY = lat;
      for (const { store } of this.#overlayTree.search(probe)) {
        if (!store.isCircle(0)) {
          if (polygonContains(store, store.rec, 0, lng, lat)) out.push(store.ids[0] as string);
        } else {
          if (Number.isNaN(cosLat)) cosLat = Math.cos(toRadians(lat));
          if (circleContains(store.rec, 0, lng, lat, cosLat)) out.push(store.ids[0] as string);
        }
      }
    }
    return out;
  }

  /**
   * Approximate bytes retained by the index: packed fences, grid tables, item boxes, tombstones, the
   * id → slot map (~64 B per entry) and overlay items. bench/geo.ts measures the real heap delta.
   */
  approxHeapBytes(): number {
    let bytes = 0;
    const st = this.#static;
    if (st !== null) {
      bytes += st.store.approxBytes + st.grid.byteLength + st.alive.byteLength;
    }
    bytes += 64 * this.#slotOf.size;
    for (const items of this.#overlay.values())
      bytes += 64 + 120 * items.length + (items[0] as OverlayItem).store.approxBytes;
    return bytes;
  }
}
