import Flatbush from 'flatbush';
import RBush from 'rbush';
import { splitBbox } from './bbox.ts';
import { CompiledFence, circleContains, polygonContains } from './compiled-fence.ts';
import { FlatbushStabber } from './flatbush-stab.ts';
import { toRadians } from './haversine.ts';
import type { FenceGeometry } from './types.ts';

/**
 * In-memory spatial index of geofences answering "which fences contain this point" exactly.
 *
 * Layout (docs/decisions/004-spatial-index.md): a static, packed Hilbert R-tree (`flatbush`) over the
 * bulk of the fences, plus a small dynamic overlay (`rbush`) holding fences upserted since the last
 * compaction, plus tombstones (a byte per static slot) for static fences removed or replaced. When
 * overlay + tombstones exceed `max(compactMin, compactRatio × static size)` the static tree is rebuilt
 * from the already-compiled fences (no re-validation or recompilation), so the rebuild cost O(n log n)
 * is amortised over Θ(n) updates. A box crossing the antimeridian is stored as its two halves
 * (`splitBbox`), which never both contain one point.
 *
 * Candidates from the box filter are then tested exactly (compiled-fence.ts).
 */

export interface GeofenceEntry {
  id: string;
  geometry: FenceGeometry;
}

export interface GeofenceIndexOptions {
  /** Compact when overlay + tombstones exceed this fraction of the static part (default 0.125). */
  compactRatio?: number;
  /** …and at least this many (default 1024). */
  compactMin?: number;
  /** Compact automatically inside `upsert`/`remove` (default true); otherwise call `compact()` yourself. */
  autoCompact?: boolean;
  /** Flatbush node size (default 8, measured best for point lookups). */
  nodeSize?: number;
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
  fence: CompiledFence;
}

interface StaticPart {
  tree: Flatbush;
  stabber: FlatbushStabber;
  slots: CompiledFence[];
  /** Flatbush item → slot (a wrapping circle has two items). */
  itemSlot: Int32Array;
  alive: Uint8Array;
}

function buildStatic(fences: CompiledFence[], nodeSize: number): StaticPart | null {
  if (fences.length === 0) return null;
  let items = 0;
  for (const f of fences) items += f.bbox[0] > f.bbox[2] ? 2 : 1;
  const tree = new Flatbush(items, nodeSize);
  const itemSlot = new Int32Array(items);
  for (let slot = 0; slot < fences.length; slot++) {
    const f = fences[slot] as CompiledFence;
    for (const b of splitBbox(f.bbox)) itemSlot[tree.add(b[0], b[1], b[2], b[3])] = slot;
  }
  tree.finish();
  return {
    tree,
    stabber: new FlatbushStabber(tree),
    slots: fences,
    itemSlot,
    alive: new Uint8Array(fences.length).fill(1),
  };
}

export class GeofenceIndex {
  readonly #compactRatio: number;
  readonly #compactMin: number;
  readonly #autoCompact: boolean;
  readonly #nodeSize: number;
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
    this.#nodeSize = options.nodeSize ?? 8;
  }

  /** Bulk-build from validated geometries (a repeated id: the last one wins). */
  static build(entries: Iterable<GeofenceEntry>, options: GeofenceIndexOptions = {}): GeofenceIndex {
    const index = new GeofenceIndex(options);
    const byId = new Map<string, CompiledFence>();
    for (const { id, geometry } of entries) byId.set(id, new CompiledFence(id, geometry));
    index.#installStatic([...byId.values()]);
    return index;
  }

  #installStatic(fences: CompiledFence[]): void {
    this.#static = buildStatic(fences, this.#nodeSize);
    this.#slotOf = new Map();
    for (let slot = 0; slot < fences.length; slot++)
      this.#slotOf.set((fences[slot] as CompiledFence).id, slot);
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

  /** Insert or replace a fence (the geometry must come from `validateGeometry`). O(log n) amortised. */
  upsert(id: string, geometry: FenceGeometry): void {
    const fence = new CompiledFence(id, geometry);
    this.#detach(id);
    const items = splitBbox(fence.bbox).map((b) => ({
      minX: b[0],
      minY: b[1],
      maxX: b[2],
      maxY: b[3],
      fence,
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

  /** Rebuild the static tree from all live fences (reusing their compiled form) and empty the overlay. */
  compact(): void {
    const live: CompiledFence[] = [];
    const st = this.#static;
    if (st !== null) {
      for (let slot = 0; slot < st.slots.length; slot++)
        if (st.alive[slot] === 1) live.push(st.slots[slot] as CompiledFence);
    }
    for (const items of this.#overlay.values()) live.push((items[0] as OverlayItem).fence);
    this.#installStatic(live);
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
      const n = st.stabber.stab(lng, lat);
      const hits = st.stabber.hits;
      const { itemSlot, alive, slots } = st;
      for (let k = 0; k < n; k++) {
        const slot = itemSlot[hits[k] as number] as number;
        if (alive[slot] === 0) continue;
        const f = slots[slot] as CompiledFence;
        if (f.kind === 0) {
          if (polygonContains(f, lng, lat)) out.push(f.id);
        } else {
          if (cosLat !== cosLat) cosLat = Math.cos(toRadians(lat));
          if (circleContains(f, lng, lat, cosLat)) out.push(f.id);
        }
      }
    }
    if (this.#overlay.size > 0) {
      const probe = this.#probe;
      probe.minX = probe.maxX = lng;
      probe.minY = probe.maxY = lat;
      for (const { fence: f } of this.#overlayTree.search(probe)) {
        if (f.kind === 0) {
          if (polygonContains(f, lng, lat)) out.push(f.id);
        } else {
          if (cosLat !== cosLat) cosLat = Math.cos(toRadians(lat));
          if (circleContains(f, lng, lat, cosLat)) out.push(f.id);
        }
      }
    }
    return out;
  }

  /**
   * Approximate bytes retained by the index: compiled fences (typed-array payloads and object headers),
   * the Flatbush buffer, slot tables, the id maps and overlay items. An estimate for capacity planning;
   * bench/geo.ts measures the real heap delta.
   */
  approxHeapBytes(): number {
    let bytes = 0;
    const st = this.#static;
    if (st !== null) {
      bytes +=
        st.tree.data.byteLength + st.itemSlot.byteLength + st.alive.byteLength + 8 * st.slots.length + 400;
      for (const f of st.slots) bytes += f.approxBytes;
    }
    bytes += 64 * this.#slotOf.size;
    for (const items of this.#overlay.values()) {
      bytes += 64 + 120 * items.length + (items[0] as OverlayItem).fence.approxBytes;
    }
    return bytes;
  }
}
