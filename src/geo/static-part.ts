import { splitBbox } from './bbox.ts';
import { ENTRY, REC } from './fence-layout.ts';
import { type FenceStore, writeEntry } from './fence-store.ts';
import { type StaticGrid, staticGridSteps } from './grid-index.ts';
import { longF64, longI32 } from './long-lived.ts';
import type { Bbox } from './types.ts';

/** The bulk-built part of a GeofenceIndex: packed fences, the grid over their boxes, and tombstones. */
export interface StaticPart {
  store: FenceStore;
  grid: StaticGrid;
  /** One byte per slot: 1 live, 0 removed or replaced (tombstone). */
  alive: Uint8Array;
}

/**
 * The static part over every slot of `store`, as a generator yielding after every ~`batch` slots of each
 * pass (a background compaction spreads it over many updates; {@link buildStatic} runs it at once).
 *
 * The grid's items come straight from the store's records: each slot's entry row (box + what its exact test
 * needs, fence-layout.ts {@link ENTRY}) and code; a wrapping circle twice, with its two non-wrapping halves as
 * boxes (`splitBbox`; the circle test does not read the box).
 */
export function* staticPartSteps(store: FenceStore, batch: number): Generator<void, StaticPart | null> {
  const n = store.count;
  if (n === 0) return null;
  const rec = store.rec;
  let items = n;
  for (let s = 0; s < n; s++) if ((rec[s * REC] as number) > (rec[s * REC + 2] as number)) items++;
  // Scratch, but allocated like the payload so that a compaction step never triggers a full GC (long-lived.ts).
  const rows = longF64(ENTRY * items);
  const codes = longI32(items);
  for (let s = 0, it = 0; s < n; s += batch) {
    it = writeItems(store, rows, codes, s, Math.min(n, s + batch), it);
    yield;
  }
  const grid = yield* staticGridSteps(rows, ENTRY, codes, items, batch);
  return { store, grid, alive: new Uint8Array(n).fill(1) };
}

/** Grid items of slots [from, to) into `rows`/`codes` from item `it` on; returns the next item. */
function writeItems(
  store: FenceStore,
  rows: Float64Array,
  codes: Int32Array,
  from: number,
  to: number,
  it: number,
): number {
  const rec = store.rec;
  for (let s = from; s < to; s++) {
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
  return it;
}

/** The static part over every slot of `store`, built in one go. */
export function buildStatic(store: FenceStore): StaticPart | null {
  return runToEnd(staticPartSteps(store, Number.POSITIVE_INFINITY));
}

/** Run a step generator to its end and return its result. */
export function runToEnd<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}
