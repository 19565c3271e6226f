import { type FenceSource, type FenceStore, geometrySize, type StoreCapacity } from './fence-store.ts';
import { buildFenceStore, FenceStoreBuilder } from './fence-store-builder.ts';
import { IdTable } from './id-table.ts';
import type { FenceGeometry } from './types.ts';

export interface GeofenceEntry {
  id: string;
  geometry: FenceGeometry;
}

/** A compiled store and its id → slot table. */
export interface CompiledEntries {
  store: FenceStore;
  ids: IdTable;
}

/**
 * Compile entries into a store, straight from the geometries into typed arrays. An array first gets a
 * counting pass (positions and rings), so that every typed array is allocated once at its final size — all
 * at once: V8 schedules a full GC per ~64 MB of new ArrayBuffer memory, so allocating as the compile goes
 * would cost two. Any other iterable (e.g. a generator parsing rows one by one) is streamed in a single
 * pass into growing chunks, so the caller need not hold all geometries at once. For a repeated id the last
 * occurrence wins: earlier ones are dropped by one extra copy pass, only when there are repeats.
 */
export function compileEntries(entries: Iterable<GeofenceEntry>): CompiledEntries {
  let builder: FenceStoreBuilder;
  let table: IdTable;
  const replaced: number[] = [];
  if (Array.isArray(entries)) {
    const list = entries as readonly GeofenceEntry[];
    const size: StoreCapacity = { fences: 0, positions: 0, rings: 0, gridWords: 0, exact: true };
    for (let i = 0; i < list.length; i++) geometrySize((list[i] as GeofenceEntry).geometry, size);
    builder = new FenceStoreBuilder(size);
    table = new IdTable(list.length, builder.ids);
    for (let i = 0; i < list.length; i++) {
      const entry = list[i] as GeofenceEntry;
      const before = table.put(entry.id, builder.add(entry.id, entry.geometry));
      if (before >= 0) replaced.push(before);
    }
  } else {
    builder = new FenceStoreBuilder();
    table = new IdTable(1024, builder.ids);
    for (const entry of entries) {
      const before = table.put(entry.id, builder.add(entry.id, entry.geometry));
      if (before >= 0) replaced.push(before);
    }
  }
  const store = builder.finish();
  if (replaced.length === 0) return { store, ids: table };
  const dead = new Uint8Array(store.count);
  for (const slot of replaced) dead[slot] = 1;
  const live: FenceSource[] = [];
  for (let slot = 0; slot < store.count; slot++) if (dead[slot] === 0) live.push({ store, slot });
  const compacted = buildFenceStore(live);
  const ids = new IdTable(compacted.count, compacted.ids);
  for (let slot = 0; slot < compacted.count; slot++) ids.put(compacted.ids[slot] as string, slot);
  return { store: compacted, ids };
}
