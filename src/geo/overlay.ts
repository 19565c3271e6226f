import RBush from 'rbush';
import { splitBbox } from './bbox.ts';
import { circleInnerContainsPoint, haversineContainsPoint, polygonContainsPoint } from './fence-contains.ts';
import type { FenceStore } from './fence-store.ts';

interface OverlayItem {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  /** A one-slot store holding the fence. */
  store: FenceStore;
}

/**
 * Fences changed since the static part was built: an `rbush` R-tree (O(log n) insert and remove) of
 * one-slot stores, each holding one compiled fence; a wrapping circle box is inserted as its two halves.
 */
export class Overlay {
  readonly #items = new Map<string, OverlayItem[]>();
  readonly #tree = new RBush<OverlayItem>();
  readonly #probe = { minX: 0, minY: 0, maxX: 0, maxY: 0 };

  get size(): number {
    return this.#items.size;
  }

  has(id: string): boolean {
    return this.#items.has(id);
  }

  /** The one-slot store of fence `id`, or undefined. */
  storeOf(id: string): FenceStore | undefined {
    return this.#items.get(id)?.[0]?.store;
  }

  /** Add a fence compiled into the one-slot store `store` (the id must not be present). */
  add(store: FenceStore): void {
    const items = splitBbox(store.box(0)).map((b) => ({
      minX: b[0],
      minY: b[1],
      maxX: b[2],
      maxY: b[3],
      store,
    }));
    this.#items.set(store.ids[0] as string, items);
    for (const item of items) this.#tree.insert(item);
  }

  /** Remove a fence; returns whether it was present. */
  remove(id: string): boolean {
    const items = this.#items.get(id);
    if (items === undefined) return false;
    for (const item of items) this.#tree.remove(item);
    this.#items.delete(id);
    return true;
  }

  /** The one-slot store of every fence, live view (entries removed meanwhile are skipped). */
  stores(): IterableIterator<FenceStore> {
    return (function* (items: Map<string, OverlayItem[]>) {
      for (const list of items.values()) yield (list[0] as OverlayItem).store;
    })(this.#items);
  }

  /** Whether `store` is still the current store of its id (not removed or replaced since). */
  holds(store: FenceStore): boolean {
    return this.#items.get(store.ids[0] as string)?.[0]?.store === store;
  }

  /** Push the ids of fences containing (lng, lat), which is also in lookupPoint, boundary inside. */
  collect(lng: number, lat: number, out: string[]): void {
    const probe = this.#probe;
    probe.minX = probe.maxX = lng;
    probe.minY = probe.maxY = lat;
    for (const { store } of this.#tree.search(probe)) {
      if (
        store.isCircle(0)
          ? circleInnerContainsPoint(store.rec, 0) || haversineContainsPoint(store.rec, 0)
          : polygonContainsPoint(store, 0)
      )
        out.push(store.ids[0] as string);
    }
  }

  approxBytes(): number {
    let bytes = 0;
    for (const items of this.#items.values())
      bytes += 64 + 120 * items.length + (items[0] as OverlayItem).store.approxBytes;
    return bytes;
  }
}
