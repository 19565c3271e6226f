import { type CompiledEntries, compileEntries, type GeofenceEntry } from './compile-entries.ts';
import {
  circleEntryInner,
  ensureGrid,
  haversineContainsPoint,
  polygonTest,
  setLookupPoint,
} from './fence-contains.ts';
import { slotDistanceM } from './fence-distance.ts';
import { E_GRID, E_P0, E_RINGS, E_RINGS_AT, ENTRY, REC, RINGS_G } from './fence-layout.ts';
import { type FenceStore, ringsAndGrid, type StoreCapacity, slotSize } from './fence-store.ts';
import { buildFenceStore, FenceStoreBuilder } from './fence-store-builder.ts';
import { cellFraction, type GridLevel } from './grid-index.ts';
import { IdTable } from './id-table.ts';
import { Overlay } from './overlay.ts';
import { buildStatic, runToEnd, type StaticPart, staticPartSteps } from './static-part.ts';
import type { FenceGeometry } from './types.ts';

export type { GeofenceEntry } from './compile-entries.ts';

/**
 * In-memory spatial index of geofences answering "which fences contain this point", exactly.
 *
 * Layout (docs/decisions/006-spatial-index.md):
 *  - a static part: fences packed into a FenceStore and a StaticGrid (hierarchical grid: per level a dense
 *    or hashed cell table over one contiguous array of cell entries) over their boxes, built in bulk, with
 *    an id → slot table;
 *  - an overlay (`rbush` R-tree) of fences upserted since the last compaction, each compiled into its own
 *    one-slot store;
 *  - tombstones: one byte per static slot, cleared when that fence is removed or replaced.
 *
 * Compaction (folding the overlay and tombstones into a new static part) never stalls an update: when
 * overlay + tombstones exceed `max(compactMin, compactRatio × static size)`, a rebuild starts in the
 * background of the updates. It snapshots the fences (the current overlay is frozen and a new one takes the
 * updates), then each later `upsert`/`remove` (or `compactStep()`) advances it by a bounded amount of work
 * — copying ~`batch` already-compiled slots (not recompiling them), or ~`batch` items of a grid pass — while
 * the old static part and both overlays keep answering queries. Updates made meanwhile are replayed: a fence
 * removed or replaced before its slot is copied is skipped, after it is tombstoned in the new part. When the
 * last step has run, the new static part replaces the old one and the frozen overlay is dropped: a few
 * pointer swaps. `batch` is chosen so that the rebuild ends well before the next threshold.
 *
 * A box crossing the antimeridian is stored as its two halves (`splitBbox`); they are disjoint, so a
 * point never matches a fence twice. Candidates are tested exactly (fence-contains.ts).
 *
 * A lookup reads one cell range per grid level, screens the cell's entries with their 4-byte quantized
 * boxes, reads the 64-byte entry of each survivor (exact box, then the fence's data for the exact test)
 * and collects slots in an internal buffer: `query` allocates only its result, `queryInto` nothing.
 */

export interface GeofenceIndexOptions {
  /** Compact when overlay + tombstones exceed this fraction of the static part (default 0.125). */
  compactRatio?: number;
  /** …and exceed this count (default 1024). */
  compactMin?: number;
  /**
   * Compact automatically (default true): the background rebuild starts, and advances by one bounded step,
   * inside `upsert`/`remove`. If false, call `compactStep()` (e.g. when idle) or `compact()` yourself.
   */
  autoCompact?: boolean;
}

export interface GeofenceIndexStats {
  size: number;
  staticFences: number;
  /** Fences in the overlay, including the frozen one a running compaction is folding in. */
  overlayFences: number;
  tombstones: number;
  compactions: number;
  /** Whether a background compaction is running. */
  compacting: boolean;
}

/** Least slots (or grid items) per step of a background compaction. */
const MIN_STEP_BATCH = 128;

/** The new static part a background compaction is building. */
interface Rebuild {
  steps: Generator<void, void>;
  /** Ids of the slots copied so far into the new part. */
  ids: IdTable;
  /** New slots whose fence was removed or replaced after being copied: tombstoned at the swap. */
  dead: Uint8Array;
  deadCount: number;
}

export class GeofenceIndex {
  readonly #compactRatio: number;
  readonly #compactMin: number;
  readonly #autoCompact: boolean;
  #static: StaticPart | null = null;
  /** id → static slot (tombstoned slots included: check `alive`). */
  #ids: IdTable | null = null;
  /** Live static fences. */
  #staticLive = 0;
  #tombstones = 0;
  /** Fences upserted since the last compaction started. */
  #overlay = new Overlay();
  /** Fences upserted before the running compaction started, which it is folding in; else null. */
  #frozen: Overlay | null = null;
  #rebuild: Rebuild | null = null;
  /** Scratch of a lookup: static slots found, and ids found in the overlays. */
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

  #install({ store, ids }: CompiledEntries): void {
    this.#static = buildStatic(store);
    this.#ids = ids;
    this.#staticLive = store.count;
    this.#tombstones = 0;
  }

  /** Number of live fences. */
  get size(): number {
    return this.#staticLive + this.#overlay.size + (this.#frozen?.size ?? 0);
  }

  has(id: string): boolean {
    return this.#staticSlot(id) >= 0 || this.#overlay.has(id) || this.#frozen?.has(id) === true;
  }

  get stats(): GeofenceIndexStats {
    return {
      size: this.size,
      staticFences: this.#staticLive,
      overlayFences: this.#overlay.size + (this.#frozen?.size ?? 0),
      tombstones: this.#tombstones,
      compactions: this.#compactions,
      compacting: this.#rebuild !== null,
    };
  }

  /**
   * Insert or replace a fence; the geometry must come from `validateGeometry`. O(log n) plus at most one
   * bounded step of a background compaction.
   */
  upsert(id: string, geometry: FenceGeometry): void {
    const store = buildFenceStore([{ id, geometry }]);
    this.#detach(id);
    this.#overlay.add(store);
    this.#afterUpdate();
  }

  /** Remove a fence; returns whether it existed. */
  remove(id: string): boolean {
    const existed = this.#detach(id);
    if (existed) this.#afterUpdate();
    return existed;
  }

  /** Live static slot of `id`, or −1. */
  #staticSlot(id: string): number {
    const st = this.#static;
    if (st === null || this.#ids === null) return -1;
    const slot = this.#ids.get(id);
    return slot >= 0 && st.alive[slot] === 1 ? slot : -1;
  }

  #detach(id: string): boolean {
    // A compaction has perhaps copied the fence already: replay the change on the new part too.
    const rebuild = this.#rebuild;
    if (rebuild !== null) {
      const copied = rebuild.ids.get(id);
      if (copied >= 0 && rebuild.dead[copied] === 0) {
        rebuild.dead[copied] = 1;
        rebuild.deadCount++;
      }
    }
    const slot = this.#staticSlot(id);
    if (slot >= 0) {
      (this.#static as StaticPart).alive[slot] = 0;
      this.#staticLive--;
      this.#tombstones++;
      return true;
    }
    return this.#overlay.remove(id) || this.#frozen?.remove(id) === true;
  }

  #afterUpdate(): void {
    if (this.#autoCompact) this.compactStep();
  }

  #compactThreshold(): number {
    return Math.max(this.#compactMin, this.#compactRatio * this.#staticLive);
  }

  /**
   * Advance the background compaction by one bounded step, starting it first if overlay + tombstones
   * exceed the threshold. Returns whether a compaction is (still) running. `upsert`/`remove` call this
   * themselves unless `autoCompact` is false.
   */
  compactStep(): boolean {
    if (this.#rebuild === null) {
      if (this.#overlay.size + this.#tombstones <= this.#compactThreshold()) return false;
      // Enough steps that the rebuild ends within ~1/4 of the next threshold's updates (~6–8 passes of
      // `batch` items each over the fences).
      const batch = Math.max(MIN_STEP_BATCH, Math.ceil((32 * this.size) / this.#compactThreshold()));
      this.#startRebuild(batch);
    }
    (this.#rebuild as Rebuild).steps.next();
    return this.#rebuild !== null;
  }

  /** Rebuild the static part from all live fences now (finishing a running compaction first). */
  compact(): void {
    if (this.#rebuild !== null) runToEnd(this.#rebuild.steps);
    runToEnd(this.#startRebuild(Number.POSITIVE_INFINITY).steps);
  }

  #startRebuild(batch: number): Rebuild {
    // Freeze the overlay: new upserts go to a fresh one, queries read both until the swap.
    const frozen = this.#overlay;
    this.#frozen = frozen;
    this.#overlay = new Overlay();
    const bound = (this.#static?.store.count ?? 0) + frozen.size;
    const rebuild: Rebuild = {
      steps: this.#rebuildSteps(frozen, batch),
      ids: new IdTable(0, []), // nothing copied yet; replaced once the new store's builder exists
      dead: new Uint8Array(bound),
      deadCount: 0,
    };
    this.#rebuild = rebuild;
    return rebuild;
  }

  /**
   * The compaction's work, in steps of ~`batch` slots: size the new store, copy the live slots of the old
   * static part and the frozen overlay (skipping those removed or replaced meanwhile), build the new static
   * part, then swap it in.
   */
  *#rebuildSteps(frozen: Overlay, batch: number): Generator<void, void> {
    const old = this.#static;
    const size: StoreCapacity = { fences: 0, positions: 0, rings: 0, gridWords: 0, exact: true };
    let budget = batch;
    if (old !== null) {
      for (let slot = 0; slot < old.store.count; slot++) {
        if (old.alive[slot] === 1) slotSize(old.store, slot, size);
        if (--budget === 0) {
          budget = batch;
          yield;
        }
      }
    }
    for (const store of frozen.stores()) slotSize(store, 0, size);
    const builder = new FenceStoreBuilder(size);
    const rebuild = this.#rebuild as Rebuild;
    // The table compares against the builder's id array, which becomes the new store's.
    const ids = new IdTable(size.fences, builder.ids);
    rebuild.ids = ids;
    if (old !== null) {
      for (let slot = 0; slot < old.store.count; slot++) {
        // Re-read `alive` at copy time: the fence may have been removed since the sizing pass.
        if (old.alive[slot] === 1) ids.put(old.store.ids[slot] as string, builder.copy(old.store, slot));
        if (--budget === 0) {
          budget = batch;
          yield;
        }
      }
    }
    for (const store of frozen.stores()) {
      if (!frozen.holds(store)) continue;
      ids.put(store.ids[0] as string, builder.copy(store, 0));
      if (--budget === 0) {
        budget = batch;
        yield;
      }
    }
    const store = builder.finish(false);
    const part = yield* staticPartSteps(store, batch);
    // Swap: replay the removals that hit already-copied slots, drop the frozen overlay.
    let live = store.count;
    if (part !== null) {
      const dead = rebuild.dead;
      for (let slot = 0; slot < store.count; slot++) if (dead[slot] === 1) part.alive[slot] = 0;
      live -= rebuild.deadCount;
    }
    this.#static = part;
    this.#ids = ids;
    this.#staticLive = live;
    this.#tombstones = store.count - live;
    this.#frozen = null;
    this.#rebuild = null;
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
   * Metres from (lng, lat) to fence `id`: 0 when the point is inside or on its boundary (exactly where `query`
   * says it contains the point), else the distance to the nearest boundary point (a polygon's edges, holes'
   * included; a circle's rim). The same value as `distanceToFenceM(geometry, lng, lat)`. `null` when `id` is
   * not in the index; NaN for non-finite or out-of-range coordinates. Method and error bound:
   * docs/geometry.md, "Distance to a fence".
   */
  distanceM(id: string, lng: number, lat: number): number | null {
    const slot = this.#staticSlot(id);
    if (slot >= 0) return slotDistanceM((this.#static as StaticPart).store, slot, lng, lat, -1);
    const store = this.#overlayStore(id);
    return store === undefined ? null : slotDistanceM(store, 0, lng, lat, -1);
  }

  /**
   * Whether (lng, lat) is within `metres` of fence `id` (inside counts): exactly `distanceM(id, lng, lat) <=
   * metres`, but cheaper — a point whose distance to the fence's box already exceeds `metres` is settled
   * without reading the fence, and the edge scan stops at the first edge within `metres`. False for an id not
   * in the index, NaN coordinates or NaN `metres`.
   */
  withinM(id: string, lng: number, lat: number, metres: number): boolean {
    if (!(metres >= 0)) return false;
    const slot = this.#staticSlot(id);
    if (slot >= 0) return slotDistanceM((this.#static as StaticPart).store, slot, lng, lat, metres) <= metres;
    const store = this.#overlayStore(id);
    return store !== undefined && slotDistanceM(store, 0, lng, lat, metres) <= metres;
  }

  /** The one-slot store of `id` in the overlay or the frozen overlay, or undefined. */
  #overlayStore(id: string): FenceStore | undefined {
    return this.#overlay.storeOf(id) ?? this.#frozen?.storeOf(id);
  }

  /**
   * The lookup: static slots containing (lng, lat) into `#hits` (returns their count), ids of overlay fences
   * containing it into `#overlayHits`. Allocation-free unless the overlay is non-empty.
   */
  #collect(lng: number, lat: number): number {
    const overlayHits = this.#overlayHits;
    if (overlayHits.length !== 0) overlayHits.length = 0;
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
    if (this.#overlay.size > 0) this.#overlay.collect(lng, lat, overlayHits);
    if (this.#frozen !== null && this.#frozen.size > 0) this.#frozen.collect(lng, lat, overlayHits);
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
   * id → slot table and overlay items. bench/geo.ts measures the real heap delta.
   */
  approxHeapBytes(): number {
    let bytes = this.#overlay.approxBytes() + (this.#frozen?.approxBytes() ?? 0);
    const st = this.#static;
    if (st !== null) bytes += st.store.approxBytes + st.grid.byteLength + st.alive.byteLength;
    if (this.#ids !== null) bytes += this.#ids.byteLength;
    return bytes;
  }
}
