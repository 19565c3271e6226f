/**
 * Typed arrays for the index's long-lived payload (coordinates, records, grid entries, polygon grids), over a
 * `SharedArrayBuffer`.
 *
 * Why: V8 counts the memory of ordinary ArrayBuffers as "external memory" and starts a full mark-compact
 * whenever ~64 MB more of it has been allocated since the last one. An index of 100 000 fences allocates
 * ~140 MB at once, so every build (and every compaction) used to pay a full GC inside it — a GC whose cost
 * is set by the caller's heap (with a large parsed input alive it costs more than the build; ADR 006),
 * and which frees nothing, since the new arrays are the index itself. SharedArrayBuffer backing stores are not counted
 * in that per-isolate figure (V8 `BackingStore::PerIsolateAccountingLength`), so allocating them schedules
 * no GC; they are still reported by `process.memoryUsage().arrayBuffers` (the bench's memory figure
 * includes them) and freed when unreachable. The trade-off: the arrays of a discarded index are reclaimed
 * only by the next mark-compact that something else triggers (in the registry, a reload's own parsing
 * garbage does). Loads and stores are plain, as for any typed array; nothing is shared between threads.
 *
 * The large scratch arrays of a build (grid rows and cell spans, ~10 MB for 100 000 fences) are allocated
 * the same way, so that a background compaction step (geofence-index.ts) cannot trigger a full GC either.
 */

export function longF64(length: number): Float64Array {
  return new Float64Array(new SharedArrayBuffer(8 * length));
}

export function longI32(length: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * length));
}

export function longU16(length: number): Uint16Array {
  return new Uint16Array(new SharedArrayBuffer(2 * length));
}

type LongArray = Float64Array | Int32Array | Uint16Array;

/** A long-lived copy of the first `length` elements of `a`. */
export function longPrefix<T extends LongArray>(a: T, length: number): T {
  const copy =
    a instanceof Float64Array ? longF64(length) : a instanceof Int32Array ? longI32(length) : longU16(length);
  copy.set(a.subarray(0, length));
  return copy as T;
}
