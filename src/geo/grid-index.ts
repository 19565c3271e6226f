/**
 * Static hierarchical spatial hash: the point-lookup filter of the index's static part.
 *
 * Boxes are listed in every cell they overlap of a square grid (cell side 2^L degrees). The base level L
 * is chosen from the data so that 99 % of the boxes span at most {@link MAX_SPAN}+1 cells per axis; the
 * larger rest go to the first coarser level (2× per step) where they do, so the number of cells per box
 * stays bounded whatever the size distribution, and only non-empty levels exist. Occupied cells are kept
 * in one open-addressing hash table per level (typed arrays, linear probing, a 16-byte row per cell) with
 * the cell's items stored inline and contiguously (a copy of each item's record, box first). A lookup
 * probes one cell per level (one level for GEO-100K) and tests the listed boxes, so its cost depends on
 * how many fences overlap near the point, not on how many fences there are or how they are spread over
 * the globe. References: C. Ericson, "Real-Time Collision Detection",
 * 2005, §7.2 (hierarchical grids); M. Teschner et al., "Optimized Spatial Hashing for Collision Detection
 * of Deformable Objects", VMV 2003. docs/decisions/006-spatial-index.md compares it with Flatbush and RBush.
 *
 * Exactness: a cell index is `floor((v + offset) · 2^−L)`, a monotone function of v (the addition is
 * correctly rounded and the power-of-two scaling is exact), so a point inside a box maps to a cell the box
 * is listed in; the box test and the fence test that follow are exact.
 */

/** A box spans at most MAX_SPAN + 1 cells per axis at its level. */
export const MAX_SPAN = 4;
/** Fraction of the boxes that the base level must hold. */
const BASE_QUANTILE = 0.99;
/** Coarser levels are 2^LEVEL_STEP times coarser than the previous one. */
const LEVEL_STEP = 1;
const MIN_LEVEL = -22; // 2^-22 ° ≈ 2.7 cm; keeps cell indices below 2^31 (360 · 2^22 ≈ 1.5e9)
const MAX_LEVEL = 8; // 256° cells: anything fits
/** Table row: [cellX (−1 = empty), cellY, first entry, end of entries]. */
export const ROW = 4;

export class GridLevel {
  readonly level: number;
  /** 2^−L: cells per degree. */
  readonly inv: number;
  readonly mask: number;
  readonly table: Int32Array;
  /**
   * Entries, `stride` numbers each: a verbatim copy of the item's row, whose first four numbers are its
   * box `[w, s, e, n]`, inline so that a cell's candidates are contiguous in memory.
   */
  readonly entries: Float64Array;
  readonly stride: number;
  constructor(level: number, capacity: number, entryCount: number, stride: number) {
    this.level = level;
    this.inv = 2 ** -level;
    this.mask = capacity - 1;
    this.table = new Int32Array(capacity * ROW);
    for (let h = 0; h < capacity; h++) this.table[h * ROW] = -1;
    this.stride = stride;
    this.entries = new Float64Array(entryCount * stride);
  }

  /** Table row of cell (cx, cy), inserting it when `insert`; −1 when absent. */
  rowOf(cx: number, cy: number, insert: boolean): number {
    const t = this.table;
    let h = hashCell(cx, cy) & this.mask;
    for (;;) {
      const r = h * ROW;
      const k = t[r] as number;
      if (k === -1) {
        if (!insert) return -1;
        t[r] = cx;
        t[r + 1] = cy;
        return r;
      }
      if (k === cx && t[r + 1] === cy) return r;
      h = (h + 1) & this.mask;
    }
  }

  get byteLength(): number {
    return this.table.byteLength + this.entries.byteLength;
  }
}

/** 32-bit mix of a cell's integer coordinates (multiply–xorshift, after MurmurHash3's finaliser). */
export function hashCell(cx: number, cy: number): number {
  let h = (Math.imul(cx, 0x9e3779b1) + Math.imul(cy, 0x7feb352d)) | 0;
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  return h ^ (h >>> 16);
}

/** Finest level at which a box of this width and height spans at most MAX_SPAN + 1 cells per axis. */
export function naturalLevel(width: number, height: number): number {
  const d = Math.max(width, height) / MAX_SPAN;
  if (!(d > 0)) return MIN_LEVEL;
  let level = Math.ceil(Math.log2(d));
  if (2 ** level < d) level++; // guard against log2 rounding down
  return Math.min(MAX_LEVEL, Math.max(MIN_LEVEL, level));
}

/** Cell index of coordinate v (offset 180 for longitude, 90 for latitude) at scale `inv` = 2^−L. */
export function cellIndex(v: number, offset: number, inv: number): number {
  return Math.floor((v + offset) * inv);
}

function nextPow2(n: number): number {
  let c = 16;
  while (c < n) c *= 2;
  return c;
}

/** Assign each box its level: the base level, or the first coarser level (step LEVEL_STEP) it fits. */
function assignLevels(boxes: Float64Array): Int8Array {
  const n = boxes.length >> 2;
  const natural = new Int8Array(n);
  const histogram = new Int32Array(MAX_LEVEL - MIN_LEVEL + 1);
  for (let i = 0; i < n; i++) {
    const b = 4 * i;
    const level = naturalLevel(
      (boxes[b + 2] as number) - (boxes[b] as number),
      (boxes[b + 3] as number) - (boxes[b + 1] as number),
    );
    natural[i] = level;
    histogram[level - MIN_LEVEL] = (histogram[level - MIN_LEVEL] as number) + 1;
  }
  let base = MAX_LEVEL;
  for (let l = MIN_LEVEL, seen = 0; l <= MAX_LEVEL; l++) {
    seen += histogram[l - MIN_LEVEL] as number;
    if (seen >= BASE_QUANTILE * n) {
      base = l;
      break;
    }
  }
  for (let i = 0; i < n; i++) {
    const l = natural[i] as number;
    natural[i] =
      l <= base ? base : Math.min(MAX_LEVEL, base + LEVEL_STEP * Math.ceil((l - base) / LEVEL_STEP));
  }
  return natural;
}

/**
 * The static grid over `rows`: items of `stride` numbers whose first four are a non-wrapping box
 * `[w, s, e, n]`; entries are verbatim copies of the rows.
 */
export class StaticGrid {
  readonly levels: GridLevel[];

  constructor(rows: Float64Array, stride: number) {
    const items = Math.floor(rows.length / stride);
    const boxes = new Float64Array(4 * items);
    for (let i = 0; i < items; i++) {
      for (let k = 0; k < 4; k++) boxes[4 * i + k] = rows[i * stride + k] as number;
    }
    const levelOf = assignLevels(boxes);
    const entryCount = new Map<number, number>();
    for (let i = 0; i < items; i++) {
      const level = levelOf[i] as number;
      const inv = 2 ** -level;
      const b = 4 * i;
      const cells =
        (cellIndex(boxes[b + 2] as number, 180, inv) - cellIndex(boxes[b] as number, 180, inv) + 1) *
        (cellIndex(boxes[b + 3] as number, 90, inv) - cellIndex(boxes[b + 1] as number, 90, inv) + 1);
      entryCount.set(level, (entryCount.get(level) ?? 0) + cells);
    }
    this.levels = [];
    for (const [level, count] of [...entryCount].sort((a, b) => a[0] - b[0])) {
      const grid = new GridLevel(level, nextPow2(Math.ceil(count * 1.4)), count, stride);
      const { inv, table } = grid;
      // Pass 1: insert the cells, counting their entries in the "end" column.
      for (let i = 0; i < items; i++) {
        if (levelOf[i] !== level) continue;
        const b = 4 * i;
        const x0 = cellIndex(boxes[b] as number, 180, inv);
        const y0 = cellIndex(boxes[b + 1] as number, 90, inv);
        const x1 = cellIndex(boxes[b + 2] as number, 180, inv);
        const y1 = cellIndex(boxes[b + 3] as number, 90, inv);
        for (let cy = y0; cy <= y1; cy++) {
          for (let cx = x0; cx <= x1; cx++) {
            const r = grid.rowOf(cx, cy, true);
            table[r + 3] = (table[r + 3] as number) + 1;
          }
        }
      }
      // Counts → [start, start) ranges in table order; pass 2 advances "end" while filling.
      let at = 0;
      for (let r = 0; r < table.length; r += ROW) {
        if (table[r] === -1) continue;
        const c = table[r + 3] as number;
        table[r + 2] = at;
        table[r + 3] = at;
        at += c;
      }
      for (let i = 0; i < items; i++) {
        if (levelOf[i] !== level) continue;
        const b = 4 * i;
        const x0 = cellIndex(boxes[b] as number, 180, inv);
        const y0 = cellIndex(boxes[b + 1] as number, 90, inv);
        const x1 = cellIndex(boxes[b + 2] as number, 180, inv);
        const y1 = cellIndex(boxes[b + 3] as number, 90, inv);
        for (let cy = y0; cy <= y1; cy++) {
          for (let cx = x0; cx <= x1; cx++) {
            const r = grid.rowOf(cx, cy, false);
            const e = table[r + 3] as number;
            const ent = grid.entries;
            for (let k = 0, from = i * stride, to = e * stride; k < stride; k++)
              ent[to + k] = rows[from + k] as number;
            table[r + 3] = e + 1;
          }
        }
      }
      this.levels.push(grid);
    }
  }

  get byteLength(): number {
    let bytes = 0;
    for (const level of this.levels) bytes += level.byteLength;
    return bytes;
  }
}
