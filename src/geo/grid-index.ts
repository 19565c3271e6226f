/**
 * Static hierarchical spatial grid: the point-lookup filter of the index's static part.
 *
 * Boxes are listed in every cell they overlap of a square grid (cell side 2^L degrees). The base level L
 * is chosen from the data so that 99 % of the boxes span at most {@link MAX_SPAN}+1 cells per axis; the
 * larger rest go to the first coarser level (2× per step) where they do, so the number of cells per box
 * stays bounded whatever the size distribution, and only non-empty levels exist. A lookup probes one cell
 * per level (one level for GEO-100K) and tests the boxes listed there, so its cost depends on how many
 * fences overlap near the point, not on how many fences there are or how they are spread over the globe.
 * References: C. Ericson, "Real-Time Collision Detection", 2005, §7.2 (hierarchical grids); M. Teschner
 * et al., "Optimized Spatial Hashing for Collision Detection of Deformable Objects", VMV 2003.
 * docs/decisions/006-spatial-index.md compares it with Flatbush and RBush.
 *
 * Layout (CSR, compressed sparse rows): the entries of all cells of all levels are contiguous — per entry
 * a copy of its item's row in `entries` (`stride` doubles, the box first, then what the exact test needs,
 * so that a candidate costs no further pointer chase; 8 doubles = one cache line) and its item code in
 * `codes` (Int32) — and each cell is a range [start, end) of entries. A level finds a cell's range either
 *  - densely: an Int32 offset table over the bounding rectangle of its occupied cells, when that rectangle
 *    has at most {@link DENSE_FACTOR}× as many cells as are occupied (clustered data: one read, and the
 *    table is small enough to stay in cache — 350 KB for GEO-100K), or
 *  - hashed: an open-addressing table (linear probing, a 16-byte row [cx, cy, start, end] per occupied
 *    cell, load ≤ 0.7), for data spread thinly over the globe.
 *
 * Exactness: a cell index is `floor((v + offset) · 2^−L)`, a monotone function of v (the addition is
 * correctly rounded and the power-of-two scaling is exact), so a point inside a box maps to a cell the box
 * is listed in; the box test and the fence test that follow are exact.
 */

import { longF64, longI32 } from './long-lived.ts';

/** A box spans at most MAX_SPAN + 1 cells per axis at its level. */
export const MAX_SPAN = 4;
/** Fraction of the boxes that the base level must hold. */
const BASE_QUANTILE = 0.99;
/** Coarser levels are 2^LEVEL_STEP times coarser than the previous one. */
const LEVEL_STEP = 1;
const MIN_LEVEL = -22; // 2^-22 ° ≈ 2.7 cm; keeps cell indices below 2^31 (360 · 2^22 ≈ 1.5e9)
const MAX_LEVEL = 8; // 256° cells: anything fits
/** A level is dense when its occupied cells' bounding rectangle has at most this many times as many cells. */
export const DENSE_FACTOR = 4;
/** Hash table row: [cellX (−1 = empty), cellY, first entry, end of entries]. */
export const ROW = 4;

export class GridLevel {
  readonly level: number;
  /** 2^−L: cells per degree. */
  readonly inv: number;
  /** Dense: `cells` is an offset table over [x0, x0 + w) × [y0, y0 + h); cell (cx, cy) is entries
   * [cells[k], cells[k + 1]) with k = (cy − y0)·w + (cx − x0). Hashed: `cells` holds the table rows. */
  readonly dense: boolean;
  readonly x0: number;
  readonly y0: number;
  readonly w: number;
  readonly h: number;
  /** Hashed: capacity − 1. */
  readonly mask: number;
  readonly cells: Int32Array;
  constructor(level: number, dense: boolean, x0: number, y0: number, w: number, h: number, occupied: number) {
    this.level = level;
    this.inv = 2 ** -level;
    this.dense = dense;
    this.x0 = x0;
    this.y0 = y0;
    this.w = w;
    this.h = h;
    if (dense) {
      this.mask = 0;
      this.cells = longI32(w * h + 1);
    } else {
      const capacity = nextPow2(Math.ceil(occupied / 0.7));
      this.mask = capacity - 1;
      this.cells = longI32(capacity * ROW);
      for (let r = 0; r < this.cells.length; r += ROW) this.cells[r] = -1;
    }
  }

  /** Hashed levels: table row of cell (cx, cy), inserting it when `insert`; −1 when absent. */
  rowOf(cx: number, cy: number, insert: boolean): number {
    const t = this.cells;
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
    return this.cells.byteLength;
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

/**
 * 1/256ths of a cell: the position of `f` = (v + offset) · inv within cell `c` = floor(f), as an integer in
 * 0..255. Exact and monotone in v: f − c is exact (Sterbenz; or c = 0) and the scaling by 256 is exact.
 */
export function cellFraction(f: number, c: number): number {
  return ((f - c) * 256) | 0;
}

/** The quantized box of [w, s, e, n] in cell (cx, cy) at scale `inv` (see StaticGrid.qboxes). */
function quantizeBox(
  w: number,
  s: number,
  e: number,
  n: number,
  cx: number,
  cy: number,
  inv: number,
): number {
  const fw = (w + 180) * inv;
  const fs = (s + 90) * inv;
  const fe = (e + 180) * inv;
  const fn = (n + 90) * inv;
  const x0 = Math.floor(fw) < cx ? 0 : cellFraction(fw, cx);
  const y0 = Math.floor(fs) < cy ? 0 : cellFraction(fs, cy);
  const x1 = Math.floor(fe) > cx ? 255 : cellFraction(fe, cx);
  const y1 = Math.floor(fn) > cy ? 255 : cellFraction(fn, cy);
  return x0 | (y0 << 8) | (x1 << 16) | (y1 << 24);
}

function nextPow2(n: number): number {
  let c = 16;
  while (c < n) c *= 2;
  return c;
}

/** Natural level of the boxes of rows [from, to) into `levels`, counted in `histogram`. */
function naturalLevels(
  rows: Float64Array,
  stride: number,
  levels: Int8Array,
  histogram: Int32Array,
  from: number,
  to: number,
): void {
  for (let i = from; i < to; i++) {
    const b = i * stride;
    const level = naturalLevel(
      (rows[b + 2] as number) - (rows[b] as number),
      (rows[b + 3] as number) - (rows[b + 1] as number),
    );
    levels[i] = level;
    histogram[level - MIN_LEVEL] = (histogram[level - MIN_LEVEL] as number) + 1;
  }
}

/** The base level: the finest one holding BASE_QUANTILE of the boxes. */
function baseLevel(histogram: Int32Array, n: number): number {
  for (let l = MIN_LEVEL, seen = 0; l <= MAX_LEVEL; l++) {
    seen += histogram[l - MIN_LEVEL] as number;
    if (seen >= BASE_QUANTILE * n) return l;
  }
  return MAX_LEVEL;
}

/** Levels [from, to): the base level, or the first coarser level (step LEVEL_STEP) the box fits. */
function assignLevels(levels: Int8Array, base: number, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const l = levels[i] as number;
    levels[i] =
      l <= base ? base : Math.min(MAX_LEVEL, base + LEVEL_STEP * Math.ceil((l - base) / LEVEL_STEP));
  }
}

/** Cell ranges of a level's items: how many entries, and the bounding rectangle of the cells. */
interface LevelUse {
  entries: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** What the passes of a grid build share. */
interface GridBuild {
  rows: Float64Array;
  stride: number;
  codes: Int32Array;
  /** Level of each item. */
  levelOf: Int8Array;
  /** Cell range of each item at its level: [x0, y0, x1, y1]. */
  span: Int32Array;
  entries: Float64Array;
  outCodes: Int32Array;
  qboxes: Int32Array;
}

/** Span pass over items [from, to): each item's cell range, accumulated per level into `used`. */
function spanRange(gb: GridBuild, used: Map<number, LevelUse>, from: number, to: number): void {
  const { rows, stride, levelOf, span } = gb;
  for (let i = from; i < to; i++) {
    const level = levelOf[i] as number;
    const inv = 2 ** -level;
    const r = i * stride;
    const x0 = cellIndex(rows[r] as number, 180, inv);
    const y0 = cellIndex(rows[r + 1] as number, 90, inv);
    const x1 = cellIndex(rows[r + 2] as number, 180, inv);
    const y1 = cellIndex(rows[r + 3] as number, 90, inv);
    const b = 4 * i;
    span[b] = x0;
    span[b + 1] = y0;
    span[b + 2] = x1;
    span[b + 3] = y1;
    let u = used.get(level);
    if (u === undefined) {
      u = { entries: 0, x0, y0, x1, y1 };
      used.set(level, u);
    }
    u.entries += (x1 - x0 + 1) * (y1 - y0 + 1);
    if (x0 < u.x0) u.x0 = x0;
    if (y0 < u.y0) u.y0 = y0;
    if (x1 > u.x1) u.x1 = x1;
    if (y1 > u.y1) u.y1 = y1;
  }
}

/** Dense pass 1 over items [from, to) of `grid`'s level: count entries per cell in cells[k + 1]. */
function countDense(gb: GridBuild, grid: GridLevel, from: number, to: number): void {
  const { levelOf, span } = gb;
  const { cells, w, x0, y0, level } = grid;
  for (let i = from; i < to; i++) {
    if (levelOf[i] !== level) continue;
    const b = 4 * i;
    for (let cy = span[b + 1] as number; cy <= (span[b + 3] as number); cy++) {
      const k0 = (cy - y0) * w - x0 + 1;
      for (let cx = span[b] as number; cx <= (span[b + 2] as number); cx++)
        cells[k0 + cx] = (cells[k0 + cx] as number) + 1;
    }
  }
}

/** Hashed pass 1 over items [from, to): count entries per cell in `tmp`; returns newly occupied cells. */
function countHashed(gb: GridBuild, tmp: GridLevel, from: number, to: number): number {
  const { levelOf, span } = gb;
  const t = tmp.cells;
  let occupied = 0;
  for (let i = from; i < to; i++) {
    if (levelOf[i] !== tmp.level) continue;
    const b = 4 * i;
    for (let cy = span[b + 1] as number; cy <= (span[b + 3] as number); cy++) {
      for (let cx = span[b] as number; cx <= (span[b + 2] as number); cx++) {
        const r = tmp.rowOf(cx, cy, true);
        if (t[r + 3] === 0) occupied++;
        t[r + 3] = (t[r + 3] as number) + 1;
      }
    }
  }
  return occupied;
}

/** Pass 2 over items [from, to): fill their entries; the dense start / hashed end column is each cell's cursor. */
function fillRange(gb: GridBuild, grid: GridLevel, from: number, to: number): void {
  const { rows, stride, codes, levelOf, span, entries, outCodes, qboxes } = gb;
  const { cells, dense, w, x0, y0, level, inv } = grid;
  for (let i = from; i < to; i++) {
    if (levelOf[i] !== level) continue;
    const b = 4 * i;
    const code = codes[i] as number;
    const src = i * stride;
    for (let cy = span[b + 1] as number; cy <= (span[b + 3] as number); cy++) {
      for (let cx = span[b] as number; cx <= (span[b + 2] as number); cx++) {
        const cursor = dense ? (cy - y0) * w + (cx - x0) : grid.rowOf(cx, cy, false) + 3;
        const e = cells[cursor] as number;
        cells[cursor] = e + 1;
        outCodes[e] = code;
        qboxes[e] = quantizeBox(
          rows[src] as number,
          rows[src + 1] as number,
          rows[src + 2] as number,
          rows[src + 3] as number,
          cx,
          cy,
          inv,
        );
        const dst = e * stride;
        for (let k = 0; k < stride; k++) entries[dst + k] = rows[src + k] as number;
      }
    }
  }
}

/**
 * Build the static grid over `n` items: item i has the row `rows[i·stride .. (i+1)·stride)`, whose first four
 * numbers are a non-wrapping box [w, s, e, n], and the code `codes[i]`; every cell an item's box overlaps
 * lists a copy of both. A generator so that a background rebuild (geofence-index.ts) can spread the work:
 * each pass runs over ranges of `batch` items and yields after each; {@link StaticGrid.build} runs it to the
 * end (with an infinite batch: one call per pass, so the passes are plain functions that V8 optimises).
 */
export function* staticGridSteps(
  rows: Float64Array,
  stride: number,
  codes: Int32Array,
  n: number,
  batch: number,
): Generator<void, StaticGrid> {
  const levelOf = new Int8Array(n);
  const histogram = new Int32Array(MAX_LEVEL - MIN_LEVEL + 1);
  for (let i = 0; i < n; i += batch) {
    naturalLevels(rows, stride, levelOf, histogram, i, Math.min(n, i + batch));
    yield;
  }
  const base = baseLevel(histogram, n);
  for (let i = 0; i < n; i += batch) {
    assignLevels(levelOf, base, i, Math.min(n, i + batch));
    yield;
  }
  const gb: GridBuild = {
    rows,
    stride,
    codes,
    levelOf,
    span: longI32(4 * n), // scratch (see static-part.ts)
    entries: new Float64Array(0),
    outCodes: new Int32Array(0),
    qboxes: new Int32Array(0),
  };
  const used = new Map<number, LevelUse>();
  for (let i = 0; i < n; i += batch) {
    spanRange(gb, used, i, Math.min(n, i + batch));
    yield;
  }
  let total = 0;
  for (const u of used.values()) total += u.entries;
  gb.entries = longF64(stride * total);
  gb.outCodes = longI32(total);
  gb.qboxes = longI32(total);
  const levels: GridLevel[] = [];
  let at = 0; // first entry of the level being built
  for (const [level, u] of [...used].sort((a, b) => a[0] - b[0])) {
    const w = u.x1 - u.x0 + 1;
    const h = u.y1 - u.y0 + 1;
    // Dense when the rectangle is small relative to the entries (hence to the occupied cells).
    const dense = w * h <= DENSE_FACTOR * u.entries && w * h < 2 ** 28;
    let grid: GridLevel;
    if (dense) {
      // Pass 1: count entries per cell in cells[k + 1], then prefix sums: cells[k] = start of cell k.
      grid = new GridLevel(level, true, u.x0, u.y0, w, h, 0);
      for (let i = 0; i < n; i += batch) {
        countDense(gb, grid, i, Math.min(n, i + batch));
        yield;
      }
      const cells = grid.cells;
      cells[0] = at;
      for (let k = 1; k < cells.length; k++) cells[k] = (cells[k] as number) + (cells[k - 1] as number);
    } else {
      // Pass 1 in a table sized by the entries (an upper bound on the cells), then rehash the occupied
      // cells into a table sized by their count; "start" = "end" = start of the cell's range.
      const tmp = new GridLevel(level, false, 0, 0, 0, 0, u.entries);
      const t = tmp.cells;
      let occupied = 0;
      for (let i = 0; i < n; i += batch) {
        occupied += countHashed(gb, tmp, i, Math.min(n, i + batch));
        yield;
      }
      grid = new GridLevel(level, false, 0, 0, 0, 0, occupied);
      const cells = grid.cells;
      for (let r = 0; r < t.length; r += ROW) {
        if (t[r] === -1) continue;
        cells[grid.rowOf(t[r] as number, t[r + 1] as number, true) + 3] = t[r + 3] as number;
      }
      let next = at;
      for (let r = 0; r < cells.length; r += ROW) {
        if (cells[r] === -1) continue;
        const c = cells[r + 3] as number;
        cells[r + 2] = next;
        cells[r + 3] = next;
        next += c;
      }
    }
    for (let i = 0; i < n; i += batch) {
      fillRange(gb, grid, i, Math.min(n, i + batch));
      yield;
    }
    // Dense: every start has moved to its cell's end, i.e. the next cell's start; shift back.
    if (dense) {
      const cells = grid.cells;
      for (let k = cells.length - 1; k > 0; k--) cells[k] = cells[k - 1] as number;
      cells[0] = at;
    }
    at += u.entries;
    levels.push(grid);
  }
  return new StaticGrid(levels, gb.entries, stride, gb.outCodes, gb.qboxes);
}

/** The static grid: levels of cell tables over one contiguous array of cell entries (see the module comment). */
export class StaticGrid {
  readonly levels: GridLevel[];
  /** Entry rows, `stride` doubles each (box first). */
  readonly entries: Float64Array;
  readonly stride: number;
  /** Entry codes, parallel to `entries`. */
  readonly codes: Int32Array;
  /**
   * Entry boxes quantized to their cell, parallel to `entries`: 8 bits per side, [x0 | y0 << 8 | x1 << 16 |
   * y1 << 24] in 1/256ths of the cell (see {@link cellFraction}), rounded so that the point's own
   * quantization falls inside whenever the point is inside the box. A lookup screens a cell's candidates
   * with these (4 bytes each, usually one cache line for the whole cell) and reads a 64-byte entry only
   * for those that pass.
   */
  readonly qboxes: Int32Array;

  constructor(
    levels: GridLevel[],
    entries: Float64Array,
    stride: number,
    codes: Int32Array,
    qboxes: Int32Array,
  ) {
    this.levels = levels;
    this.entries = entries;
    this.stride = stride;
    this.codes = codes;
    this.qboxes = qboxes;
  }

  /** The grid over `n` items, built in one go (see {@link staticGridSteps}). */
  static build(rows: Float64Array, stride: number, codes: Int32Array, n: number): StaticGrid {
    const steps = staticGridSteps(rows, stride, codes, n, Number.POSITIVE_INFINITY);
    for (let r = steps.next(); ; r = steps.next()) if (r.done === true) return r.value;
  }

  /**
   * Set columns `col` and `col + 2` of every entry of the item with code `code` and box [w, s, e, n] to
   * `value` and `value2` (e.g. a polygon's grid, built after the index). Visits the cells the box overlaps
   * on every level.
   */
  setColumns(
    code: number,
    w: number,
    s: number,
    e: number,
    n: number,
    col: number,
    value: number,
    value2: number,
  ): void {
    for (const level of this.levels) {
      const { inv, cells } = level;
      const x0 = cellIndex(w, 180, inv);
      const x1 = cellIndex(e, 180, inv);
      const y0 = cellIndex(s, 90, inv);
      const y1 = cellIndex(n, 90, inv);
      for (let cy = y0; cy <= y1; cy++) {
        for (let cx = x0; cx <= x1; cx++) {
          let from: number;
          let to: number;
          if (level.dense) {
            const ix = cx - level.x0;
            const iy = cy - level.y0;
            if (ix < 0 || iy < 0 || ix >= level.w || iy >= level.h) continue;
            const k = iy * level.w + ix;
            from = cells[k] as number;
            to = cells[k + 1] as number;
          } else {
            const r = level.rowOf(cx, cy, false);
            if (r < 0) continue;
            from = cells[r + 2] as number;
            to = cells[r + 3] as number;
          }
          for (let i = from; i < to; i++) {
            if (this.codes[i] !== code) continue;
            this.entries[i * this.stride + col] = value;
            this.entries[i * this.stride + col + 2] = value2;
          }
        }
      }
    }
  }

  get byteLength(): number {
    let bytes = this.entries.byteLength + this.codes.byteLength + this.qboxes.byteLength;
    for (const level of this.levels) bytes += level.byteLength;
    return bytes;
  }
}
