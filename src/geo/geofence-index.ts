import RBush from 'rbush';
import { splitBbox } from './bbox.ts';
import {
  buildFenceStore,
  circleEntryInner,
  circleInnerContainsPoint,
  E_GRID,
  E_P0,
  E_RINGS,
  E_RINGS_AT,
  ENTRY,
  ensureGrid,
  type FenceSource,
  type FenceStore,
  FenceStoreBuilder,
  geometrySize,
  haversineContainsPoint,
  polygonContainsPoint,
  polygonTest,
  REC,
  RINGS_G,
  ringsAndGrid,
  type StoreCapacity,
  setLookupPoint,
  slotSize,
  writeEntry,
} from './fence-store.ts';
import { cellFraction, type GridLevel, StaticGrid } from './grid-index.ts';
import type { Bbox, FenceGeometry } from './types.ts';

/**
 * In-memory spatial index of geofences answering "which fences contain this point", exactly.
 *
 * Layout (docs/decisions/006-spatial-index.md):
 *  - a static part: fences packed into a {@link FenceStore} and a {@link StaticGrid} (hierarchical grid:
 *    per level a dense or hashed cell table over one contiguous array of cell entries) over their boxes,
 *    built in bulk;
 *  - a dynamic overlay: an `rbush` R-tree of fences upserted since the last compaction, each compiled
 *    into its own one-slot store;
 *  - tombstones: one byte per static slot, cleared when that fence is removed or replaced.
 * When overlay + tombstones exceed `max(compactMin, compactRatio × static size)` the static part is
 * rebuilt from the already-compiled slots (copied, not recompiled), so the O(n) rebuild is amortised
 * over Θ(n) updates and no single update re-validates or recompiles everything.
 *
 * A box crossing the antimeridian is stored as its two halves (`splitBbox`); they are disjoint, so a
 * point never matches a fence twice. Candidates are tested exactly (fence-store.ts).
 *
 * A lookup reads one cell range per grid level, screens the cell's entries with their 4-byte quantized
 * boxes, reads the 64-byte entry of each survivor (exact box, then the fence's data for the exact test)
 * and collects slots in an internal buffer: `query` allocates only its result, `queryInto` nothing.
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
 * The grid's items straight from the store's records: each slot's entry row (box + what its exact test
 * needs, fence-store.ts {@link ENTRY}) and code; a wrapping circle twice, with its two non-wrapping halves
 * as boxes (`splitBbox`; the circle test does not read the box).
 */
function buildStatic(store: FenceStore): StaticPart | null {
  const n = store.count;
  if (n === 0) return null;
  const rec = store.rec;
  let items = n;
  for (let s = 0; s < n; s++) if ((rec[s * REC] as number) > (rec[s * REC + 2] as number)) items++;
  const rows = new Float64Array(ENTRY * items);
  const codes = new Int32Array(items);
  let it = 0;
  for (let s = 0; s < n; s++) {
    const o = s * REC;
    const code = rec[o + 4] as number;
    const west = rec[o] as number;
    const east = rec[o + 2] as number;
    const halves: Bbox[] =
      west > east ? splitBbox([west, rec[o + 1] as number, east, rec[o + 3] as number]) : [];
    for (let h = 0; h < Math.max(1, halves.length); h++) {
      const r = ENTRY * it;
      const half = halves[h];
      rows[r] = half === undefined ? west : half[0];
      rows[r + 1] = rec[o + 1] as number;
      rows[r + 2] = half === undefined ? east : half[2];
      rows[r + 3] = rec[o + 3] as number;
      writeEntry(store, s, rows, r);
      codes[it++] = code;
    }
  }
  return { store, grid: new StaticGrid(rows, ENTRY, codes, items), alive: new Uint8Array(n).fill(1) };
}

/**
 * Slots by id during a build, to find repeated ids: open addressing over an Int32Array with an FNV-1a hash
 * of the id's characters. Much cheaper than filling the Map<string, number> that `has`/`upsert`/`remove`
 * need (hashing and inserting 100 000 fresh strings into a Map costs 20–70 ms here), which the index
 * therefore builds only on first use.
 */
class IdTable {
  #table: Int32Array;
  #count = 0;
  constructor(expected: number) {
    this.#table = new Int32Array(tableSize(expected)).fill(-1);
  }

  /** Record `id` at `slot`; returns the slot it had before, or −1. `ids` maps slots to ids. */
  put(id: string, slot: number, ids: FenceStoreBuilder): number {
    if (2 * (this.#count + 1) > this.#table.length) this.#grow(ids);
    const t = this.#table;
    const mask = t.length - 1;
    for (let h = hashId(id) & mask; ; h = (h + 1) & mask) {
      const at = t[h] as number;
      if (at < 0) {
        t[h] = slot;
        this.#count++;
        return -1;
      }
      if (ids.id(at) === id) {
        t[h] = slot;
        return at;
      }
    }
  }

  #grow(ids: FenceStoreBuilder): void {
    const old = this.#table;
    const t = new Int32Array(2 * old.length).fill(-1);
    const mask = t.length - 1;
    for (const at of old) {
      if (at < 0) continue;
      let h = hashId(ids.id(at)) & mask;
      while ((t[h] as number) >= 0) h = (h + 1) & mask;
      t[h] = at;
    }
    this.#table = t;
  }
}

function tableSize(expected: number): number {
  let size = 16;
  while (size < 2 * expected) size *= 2;
  return size;
}

/** FNV-1a over the UTF-16 code units, with a final xor-shift. */
function hashId(id: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 15);
}

/**
 * Compile entries into a store, straight from the geometries into typed arrays. An array first gets a
 * counting pass (positions and rings), so that every typed array is allocated once at its final size — all
 * at once: V8 schedules a full GC per ~64 MB of new ArrayBuffer memory, so allocating as the compile goes
 * would cost two. Any other iterable (e.g. a generator parsing rows one by one) is streamed in a single
 * pass into growing chunks, so the caller need not hold all geometries at once. For a repeated id the last
 * occurrence wins: earlier ones are dropped by one extra copy pass, only when there are repeats.
 */
function compileEntries(entries: Iterable<GeofenceEntry>): FenceStore {
  let builder: FenceStoreBuilder;
  let table: IdTable;
  const replaced: number[] = [];
  if (Array.isArray(entries)) {
    const list = entries as readonly GeofenceEntry[];
    const size: StoreCapacity = { fences: 0, positions: 0, rings: 0, gridWords: 0, exact: true };
    for (let i = 0; i < list.length; i++) geometrySize((list[i] as GeofenceEntry).geometry, size);
    builder = new FenceStoreBuilder(size);
    table = new IdTable(list.length);
    for (let i = 0; i < list.length; i++) {
      const entry = list[i] as GeofenceEntry;
      const before = table.put(entry.id, builder.add(entry.id, entry.geometry), builder);
      if (before >= 0) replaced.push(before);
    }
  } else {
    builder = new FenceStoreBuilder();
    table = new IdTable(1024);
    for (const entry of entries) {
      const before = table.put(entry.id, builder.add(entry.id, entry.geometry), builder);
      if (before >= 0) replaced.push(before);
    }
  }
  const store = builder.finish();
  if (replaced.length === 0) return store;
  const dead = new Uint8Array(store.count);
  for (const slot of replaced) dead[slot] = 1;
  const live: FenceSource[] = [];
  for (let slot = 0; slot < store.count; slot++) if (dead[slot] === 0) live.push({ store, slot });
  return buildFenceStore(live);
}

export class GeofenceIndex {
  readonly #compactRatio: number;
  readonly #compactMin: number;
  readonly #autoCompact: boolean;
  #static: StaticPart | null = null;
  /** id → static slot, for live static fences only; built on first use (`#slots()`). */
  #slotOf: Map<string, number> | null = null;
  /** Live static fences. */
  #staticLive = 0;
  #tombstones = 0;
  #overlay = new Map<string, OverlayItem[]>();
  #overlayTree = new RBush<OverlayItem>();
  readonly #probe = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  /** Scratch of a lookup: static slots found, and ids found in the overlay. */
  #hits: Int32Array = new Int32Array(64);
  readonly #overlayHits: string[] = [];
  #compactions = 0;

  constructor(options: GeofenceIndexOptions = {}) {
    this.#compactRatio = options.compactRatio ?? 0.125;
    this.#compactMin = options.compactMin ?? 1024;
    this.#autoCompact = options.autoCompact ?? true;
  }

  /**
   * Bulk-build from validated geometries (for a repeated id the last one wins). An array is compiled into
   * typed arrays sized up front; any other iterable (e.g. a generator parsing rows one by one) is streamed,
   * so the caller's GeoJSON need not all be alive at once.
   */
  static build(entries: Iterable<GeofenceEntry>, options: GeofenceIndexOptions = {}): GeofenceIndex {
    const index = new GeofenceIndex(options);
    index.#install(compileEntries(entries));
    return index;
  }

  #install(store: FenceStore): void {
    this.#static = buildStatic(store);
    this.#slotOf = null;
    this.#staticLive = store.count;
    this.#tombstones = 0;
    this.#overlay = new Map();
    this.#overlayTree = new RBush<OverlayItem>();
  }

  /** Number of live fences. */
  get size(): number {
    return this.#staticLive + this.#overlay.size;
  }

  has(id: string): boolean {
    return this.#slots().has(id) || this.#overlay.has(id);
  }

  get stats(): GeofenceIndexStats {
    return {
      size: this.size,
      staticFences: this.#staticLive,
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
    const slots = this.#slots();
    const slot = slots.get(id);
    if (slot !== undefined && this.#static !== null) {
      this.#static.alive[slot] = 0;
      slots.delete(id);
      this.#staticLive--;
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
    if (pending > Math.max(this.#compactMin, this.#compactRatio * this.#staticLive)) this.compact();
  }

  /** The id → static slot map of live static fences, built on first use. */
  #slots(): Map<string, number> {
    if (this.#slotOf !== null) return this.#slotOf;
    const slots = new Map<string, number>();
    const st = this.#static;
    if (st !== null) {
      const ids = st.store.ids;
      for (let slot = 0; slot < st.store.count; slot++)
        if (st.alive[slot] === 1) slots.set(ids[slot] as string, slot);
    }
    this.#slotOf = slots;
    return slots;
  }

  /** Rebuild the static part from all live fences (copying their compiled slots) and empty the overlay. */
  compact(): void {
    const size: StoreCapacity = { fences: 0, positions: 0, rings: 0, gridWords: 0, exact: true };
    const st = this.#static;
    if (st !== null) {
      for (let slot = 0; slot < st.store.count; slot++)
        if (st.alive[slot] === 1) slotSize(st.store, slot, size);
    }
    for (const items of this.#overlay.values()) slotSize((items[0] as OverlayItem).store, 0, size);
    const builder = new FenceStoreBuilder(size);
    if (st !== null) {
      for (let slot = 0; slot < st.store.count; slot++)
        if (st.alive[slot] === 1) builder.copy(st.store, slot);
    }
    for (const items of this.#overlay.values()) builder.copy((items[0] as OverlayItem).store, 0);
    this.#install(builder.finish());
    this.#compactions++;
  }

  /**
   * Ids of the fences containing (lng, lat), boundary inclusive, in no particular order. Returns `[]` for
   * non-finite or out-of-range coordinates (lng outside −180..180, lat outside −90..90).
   */
  query(lng: number, lat: number): string[] {
    const n = this.#collect(lng, lat);
    const extra = this.#overlayHits.length;
    if (n + extra === 0) return [];
    if (extra === 0 && n === 1) return [this.#idOf(this.#hits[0] as number)];
    const out = new Array<string>(n + extra);
    for (let i = 0; i < n; i++) out[i] = this.#idOf(this.#hits[i] as number);
    for (let i = 0; i < extra; i++) out[n + i] = this.#overlayHits[i] as string;
    return out;
  }

  /**
   * Like {@link query}, but into a caller-owned array, so that a caller looking up many points allocates
   * nothing: `out` receives the ids (its previous content is replaced). Returns how many there are.
   */
  queryInto(lng: number, lat: number, out: string[]): number {
    const n = this.#collect(lng, lat);
    const extra = this.#overlayHits.length;
    // Overwrite, then push or pop: all fast paths (assigning `length` is a runtime call in V8).
    const had = out.length;
    for (let i = 0; i < n; i++) {
      const id = this.#idOf(this.#hits[i] as number);
      if (i < had) out[i] = id;
      else out.push(id);
    }
    for (let i = 0; i < extra; i++) {
      const id = this.#overlayHits[i] as string;
      if (n + i < had) out[n + i] = id;
      else out.push(id);
    }
    while (out.length > n + extra) out.pop();
    return n + extra;
  }

  /**
   * The lookup: static slots containing (lng, lat) into `#hits` (returns their count), ids of overlay fences
   * containing it into `#overlayHits`. Allocation-free unless the overlay is non-empty.
   */
  #collect(lng: number, lat: number): number {
    if (this.#overlayHits.length !== 0) this.#overlayHits.length = 0;
    if (!(lng >= -180 && lng <= 180 && lat >= -90 && lat <= 90)) return 0;
    setLookupPoint(lng, lat);
    let n = 0;
    const st = this.#static;
    if (st !== null) {
      const { alive, store, grid } = st;
      const rec = store.rec;
      const { entries, codes, qboxes, levels } = grid;
      let hits = this.#hits;
      for (let l = 0; l < levels.length; l++) {
        const level = levels[l] as GridLevel;
        const fx = (lng + 180) * level.inv;
        const fy = (lat + 90) * level.inv;
        const cx = Math.floor(fx);
        const cy = Math.floor(fy);
        const cells = level.cells;
        let e: number;
        let end: number;
        if (level.dense) {
          const ix = cx - level.x0;
          const iy = cy - level.y0;
          if (ix < 0 || iy < 0 || ix >= level.w || iy >= level.h) continue;
          const k = iy * level.w + ix;
          e = cells[k] as number;
          end = cells[k + 1] as number;
        } else {
          const r = level.rowOf(cx, cy, false);
          if (r < 0) continue;
          e = cells[r + 2] as number;
          end = cells[r + 3] as number;
        }
        const ux = cellFraction(fx, cx);
        const uy = cellFraction(fy, cy);
        for (; e < end; e++) {
          // Screen with the cell-quantized box, then the exact box of the entry's row.
          const q = qboxes[e] as number;
          if (ux < (q & 255) || ux > ((q >>> 16) & 255)) continue;
          if (uy < ((q >>> 8) & 255) || uy > q >>> 24) continue;
          const b = e * ENTRY;
          if (lng < (entries[b] as number) || lat < (entries[b + 1] as number)) continue;
          if (lng > (entries[b + 2] as number) || lat > (entries[b + 3] as number)) continue;
          const code = codes[e] as number;
          let slot: number;
          if (code >= 0) {
            slot = code;
            if (alive[slot] === 0) continue;
            let gridState = (entries[b + E_GRID] as number) | 0;
            if (gridState < 0) gridState = this.#buildGrid(st, slot);
            const p0 = (entries[b + E_P0] as number) | 0;
            const ringsAt = (entries[b + E_RINGS_AT] as number) | 0;
            const packed = (entries[b + E_RINGS] as number) | 0;
            const g = (packed / RINGS_G) | 0;
            if (!polygonTest(store, entries, b, p0, gridState, g, ringsAt, packed - g * RINGS_G)) continue;
          } else {
            slot = -code - 1;
            if (alive[slot] === 0) continue;
            if (!circleEntryInner(entries, b) && !haversineContainsPoint(rec, slot)) continue;
          }
          if (n === hits.length) hits = this.#growHits();
          hits[n++] = slot;
        }
      }
    }
    if (this.#overlay.size > 0) {
      const probe = this.#probe;
      probe.minX = probe.maxX = lng;
      probe.minY = probe.maxY = lat;
      for (const { store } of this.#overlayTree.search(probe)) {
        if (
          store.isCircle(0)
            ? circleInnerContainsPoint(store.rec, 0) || haversineContainsPoint(store.rec, 0)
            : polygonContainsPoint(store, 0)
        )
          this.#overlayHits.push(store.ids[0] as string);
      }
    }
    return n;
  }

  /** Id of static slot `slot` (only called for slots a lookup found, so the static part exists). */
  #idOf(slot: number): string {
    return (this.#static as StaticPart).store.ids[slot] as string;
  }

  #growHits(): Int32Array {
    const next = new Int32Array(2 * this.#hits.length);
    next.set(this.#hits);
    this.#hits = next;
    return next;
  }

  /** Build polygon `slot`'s grid (first lookup) and record it in the slot's entries. */
  #buildGrid(st: StaticPart, slot: number): number {
    const store = st.store;
    const state = ensureGrid(store, slot);
    const o = slot * REC;
    const r = store.rec;
    st.grid.setColumns(
      slot,
      r[o] as number,
      r[o + 1] as number,
      r[o + 2] as number,
      r[o + 3] as number,
      E_GRID,
      state,
      ringsAndGrid(store, slot),
    );
    return state;
  }

  /**
   * Approximate bytes retained by the index: packed fences, grid tables and entries, tombstones, the
   * id → slot map (~64 B per entry) and overlay items. bench/geo.ts measures the real heap delta.
   */
  approxHeapBytes(): number {
    let bytes = 0;
    const st = this.#static;
    if (st !== null) {
      bytes += st.store.approxBytes + st.grid.byteLength + st.alive.byteLength;
    }
    bytes += 64 * (this.#slotOf === null ? 0 : this.#slotOf.size); // built on first has/upsert/remove
    for (const items of this.#overlay.values())
      bytes += 64 + 120 * items.length + (items[0] as OverlayItem).store.approxBytes;
    return bytes;
  }
}
