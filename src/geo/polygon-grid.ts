import { crossesLeftOf, edgeStep } from './edge-step.ts';
import type { U16Builder } from './u16-builder.ts';

/**
 * Per-polygon cell grid for exact point-in-polygon in (near) constant time — the "grid method" of
 * E. Haines, "Point in Polygon Strategies" (Graphics Gems IV, 1994), made exact.
 *
 * The polygon's bbox is cut into G × G cells. Each cell lists the edges that may meet it (a superset is
 * fine, see below); a cell with no edges is entirely inside or entirely outside and stores that bit.
 * - Point in an empty cell: the answer is the cell's bit (one memory read).
 * - Point p in a non-empty cell: walk right along the row to the first empty cell k (or past the last
 *   column, which is outside), let q = (left side of cell k, p.y). The ray from p to +∞ crosses the
 *   boundary as often as the segment p→q does plus the ray from q; the latter's parity is cell k's bit
 *   and the former only involves edges listed in the cells walked (an edge listed in several of them is
 *   counted once, by stamping).
 * - Bits are computed the same way when building, right to left along each row from the outside.
 *
 * Exactness: every decision is `edgeStep` / `crossesLeftOf` (orient2d + coordinate comparisons). Cells
 * are treated as closed rectangles grown by a margin m (≥ 1e-11°, far above the ~1e-13° rounding of the
 * cell arithmetic), so a point that maps to a cell lies in its rectangle, and an edge is listed in every
 * cell whose grown rectangle it may meet (computed with 2m of slack). Hence an empty cell's rectangle
 * truly contains no boundary and q never lies on an edge; should an exact test ever say otherwise, the
 * build drops the grid (plain scan) and a lookup falls back to the plain scan.
 */

/** Polygons with at least this many edges get a cell grid; smaller ones are scanned (a few cache lines). */
export const GRID_MIN_EDGES = 64;
/** Target number of cells per edge (G² ≈ CELLS_PER_EDGE · edges). */
export const CELLS_PER_EDGE = 2;
const MAX_G = 64;
/** Cell words are (first entry << 1 | inside bit) in a Uint16. */
const MAX_ENTRIES = 32767;
const MAX_ENTRIES_PER_EDGE = 8;

/** Margin by which cell rectangles are grown. */
export function cellMargin(cw: number, ch: number): number {
  return 1e-11 + 1e-9 * Math.max(cw, ch);
}

/** Clamp a cell index into [0, g − 1]; `v` is a floor()ed value within a few cells of the grid (int32). */
function clampCell(v: number, g: number): number {
  const i = v | 0;
  return i < 0 ? 0 : i >= g ? g - 1 : i;
}

let cellBuf = new Int32Array(MAX_G * MAX_G);
/** Per-edge stamps de-duplicating edges met in several cells of one walk (edge ids are < 8000). */
const stamps = new Uint32Array(8192);
let stampCounter = 0;
function nextStamp(): number {
  if (stampCounter === 0xffffffff) {
    stamps.fill(0);
    stampCounter = 0;
  }
  return ++stampCounter;
}
let counts = new Int32Array(MAX_G * MAX_G + 1);

/**
 * Grid parameters of the polygon being compiled, [minX, minY, 1/cw, 1/ch, ch, 2m]. Kept in a typed array
 * rather than passed as arguments: V8 boxes doubles passed to a function it does not inline, and that
 * allocation dominated the build.
 */
const params = new Float64Array(6);

/**
 * Cells (row-major indices into `cellBuf`) whose grown rectangles the edge starting at `coords[k]` may
 * meet; returns the count. A multiplication by 1/cw rounds by ≪ m, covered by the 2m of slack.
 */
function edgeCells(coords: Float64Array, k: number, g: number): number {
  const buf = cellBuf;
  const ax = coords[k] as number;
  const ay = coords[k + 1] as number;
  const bx = coords[k + 2] as number;
  const by = coords[k + 3] as number;
  const minX = params[0] as number;
  const minY = params[1] as number;
  const ix = params[2] as number;
  const iy = params[3] as number;
  const ch = params[4] as number;
  const m2 = params[5] as number;
  const ylo = Math.min(ay, by);
  const yhi = Math.max(ay, by);
  const xmin = Math.min(ax, bx);
  const xmax = Math.max(ax, bx);
  const j0 = clampCell(Math.floor((ylo - m2 - minY) * iy), g);
  const j1 = clampCell(Math.floor((yhi + m2 - minY) * iy), g);
  let n = 0;
  if (j0 === j1) {
    // Common case: the edge stays in one row; its x-range is that of its endpoints.
    const i0 = clampCell(Math.floor((xmin - m2 - minX) * ix), g);
    const i1 = clampCell(Math.floor((xmax + m2 - minX) * ix), g);
    for (let i = i0; i <= i1; i++) buf[n++] = j0 * g + i;
    return n;
  }
  const slope = (bx - ax) / (by - ay); // by ≠ ay here: the edge spans two rows
  for (let j = j0; j <= j1; j++) {
    const bandLo = minY + j * ch - m2;
    const bandHi = bandLo + ch + 2 * m2;
    const lo = Math.max(ylo, bandLo);
    const hi = Math.min(yhi, bandHi);
    if (lo > hi) continue;
    const xa = ax + slope * (lo - ay);
    const xb = ax + slope * (hi - ay);
    const xl = Math.max(xmin, Math.min(xa, xb));
    const xr = Math.min(xmax, Math.max(xa, xb));
    const i0 = clampCell(Math.floor((xl - m2 - minX) * ix), g);
    const i1 = clampCell(Math.floor((xr + m2 - minX) * ix), g);
    const base = j * g;
    for (let i = i0; i <= i1; i++) buf[n++] = base + i;
  }
  return n;
}

/**
 * Build the grid of the polygon whose positions are `coords[2·p0 ..]`, rings ending (relative to p0) at
 * `ringEnds[ringsAt .. ringsAt + rings)`, and append it to `out` as one block: [G, G·G + 1 cell words,
 * edge entries (edge = its first position, relative to p0)]. Returns the block's offset in `out`, or −1
 * when the polygon gets no grid (nothing appended). Cell size is `(max − min) / G` on each axis.
 */
export function appendPolygonGrid(
  coords: Float64Array,
  p0: number,
  ringEnds: Uint16Array,
  ringsAt: number,
  rings: number,
  out: U16Builder,
  minX: number,
  minY: number,
  maxX: number,
  maxY: number,
): number {
  if (!(maxX > minX) || !(maxY > minY)) return -1;
  // An edge meets about 1 + |dx|/cw + 2|dy|/ch cells (each row it crosses adds one), so with
  // S = Σ(|dx|/W + 2|dy|/H) a G × G grid has about edges + G·S entries: cap G so that this stays within
  // MAX_ENTRIES_PER_EDGE per edge (spiky polygons, whose edges are long relative to the bbox, get coarser
  // grids) and the count pass rarely has to be redone.
  let spread = 0;
  let edges = 0;
  const w = maxX - minX;
  const h = maxY - minY;
  let begin0 = p0;
  for (let r = 0; r < rings; r++) {
    const end = p0 + (ringEnds[ringsAt + r] as number);
    for (let i = begin0; i + 1 < end; i++) {
      const k = i << 1;
      spread += Math.abs((coords[k + 2] as number) - (coords[k] as number)) / w;
      spread += (2 * Math.abs((coords[k + 3] as number) - (coords[k + 1] as number))) / h;
      edges++;
    }
    begin0 = end;
  }
  const byCells = Math.sqrt(CELLS_PER_EDGE * edges);
  const byEntries = ((MAX_ENTRIES_PER_EDGE - 1) * edges) / spread;
  let g = Math.min(MAX_G, Math.max(2, Math.floor(Math.min(byCells, byEntries))));
  for (;;) {
    const cw = (maxX - minX) / g;
    const ch = (maxY - minY) / g;
    const m = cellMargin(cw, ch);
    params[0] = minX;
    params[1] = minY;
    params[2] = 1 / cw;
    params[3] = 1 / ch;
    params[4] = ch;
    params[5] = 2 * m;
    const cells = g * g;
    if (counts.length < cells + 1) counts = new Int32Array(cells + 1);
    if (cellBuf.length < cells) cellBuf = new Int32Array(cells);
    counts.fill(0, 0, cells + 1);
    let entries = 0;
    let begin = p0;
    for (let r = 0; r < rings; r++) {
      const end = p0 + (ringEnds[ringsAt + r] as number);
      for (let i = begin; i + 1 < end; i++) {
        const n = edgeCells(coords, i << 1, g);
        for (let c = 0; c < n; c++) {
          const cell = cellBuf[c] as number;
          counts[cell + 1] = (counts[cell + 1] as number) + 1;
        }
        entries += n;
      }
      begin = end;
    }
    if ((entries > MAX_ENTRIES || entries > MAX_ENTRIES_PER_EDGE * edges) && g > 2) {
      g = Math.max(2, Math.floor(g * 0.7));
      continue;
    }
    if (entries > MAX_ENTRIES) return -1;
    const block = out.length;
    out.reserve(1 + cells + 1 + entries);
    const d = out.data;
    const cellsAt = block + 1;
    const entriesAt = cellsAt + cells + 1;
    d[block] = g;
    for (let c = 0; c < cells; c++) counts[c + 1] = (counts[c + 1] as number) + (counts[c] as number);
    for (let c = 0; c <= cells; c++) d[cellsAt + c] = (counts[c] as number) << 1;
    begin = p0;
    for (let r = 0; r < rings; r++) {
      const end = p0 + (ringEnds[ringsAt + r] as number);
      for (let i = begin; i + 1 < end; i++) {
        const n = edgeCells(coords, i << 1, g);
        for (let c = 0; c < n; c++) {
          const cell = cellBuf[c] as number;
          const at = counts[cell] as number;
          d[entriesAt + at] = i - p0;
          counts[cell] = at + 1;
        }
      }
      begin = end;
    }
    if (!fillInsideBits(coords, p0, d, cellsAt, entriesAt, g, minX, minY, cw, ch, m)) return -1;
    out.length = entriesAt + entries;
    return block;
  }
}

/** Length in the arena of the grid block starting at `block` (for copying it between stores). */
export function gridBlockLength(data: Uint16Array, block: number): number {
  const g = data[block] as number;
  return 1 + g * g + 1 + ((data[block + 1 + g * g] as number) >> 1);
}

/** Compute the inside bit of every empty cell, row by row from the right (outside) end. */
function fillInsideBits(
  coords: Float64Array,
  p0: number,
  d: Uint16Array,
  cellsAt: number,
  entriesAt: number,
  g: number,
  minX: number,
  minY: number,
  cw: number,
  ch: number,
  m: number,
): boolean {
  for (let j = 0; j < g; j++) {
    const row = cellsAt + j * g;
    const qy = minY + j * ch - m;
    let rightBit = 0;
    let rightX = Number.POSITIVE_INFINITY;
    let runEnd = g; // boundary cells of the current run are (k, runEnd)
    for (let k = g - 1; k >= 0; k--) {
      const w = d[row + k] as number;
      if (w >> 1 !== (d[row + k + 1] as number) >> 1) continue;
      const qx = minX + k * cw - m;
      let count = 0;
      const from = entriesAt + ((d[row + k + 1] as number) >> 1);
      const to = entriesAt + ((d[row + runEnd] as number) >> 1);
      const stamp = nextStamp();
      for (let e = from; e < to; e++) {
        const edge = d[e] as number;
        if (stamps[edge] === stamp) continue;
        stamps[edge] = stamp;
        const at = (p0 + edge) << 1;
        const ax = coords[at] as number;
        const ay = coords[at + 1] as number;
        const bx = coords[at + 2] as number;
        const by = coords[at + 3] as number;
        const step = edgeStep(ax, ay, bx, by, qx, qy);
        if (step < 0) return false;
        if (step === 1) {
          if (runEnd === g) count++;
          else {
            const left = crossesLeftOf(ax, ay, bx, by, rightX, qy);
            if (left < 0) return false;
            count += left;
          }
        }
      }
      const bit = (count + rightBit) & 1;
      d[row + k] = w | bit;
      rightBit = bit;
      rightX = qx;
      runEnd = k;
    }
  }
  return true;
}

/**
 * Exact point-in-polygon through the grid block at `grids[block]`. `row[b ..]` is the polygon's record
 * (fence-store.ts: [minX, minY, maxX, maxY, slot, first position, …]); only x and y are passed as
 * doubles because V8 boxes the double arguments of calls it does not inline. The point must lie in the
 * bbox (the caller's box filter guarantees it). Returns 1 inside or on the boundary, 0 outside, −1 when
 * the grid cannot decide (never expected; the caller then scans all edges).
 */
export function gridLocate(
  coords: Float64Array,
  grids: Uint16Array,
  block: number,
  row: Float64Array,
  b: number,
  x: number,
  y: number,
): number {
  const minX = row[b] as number;
  const minY = row[b + 1] as number;
  const maxX = row[b + 2] as number;
  const maxY = row[b + 3] as number;
  const p0 = row[b + 5] as number;
  const g = grids[block] as number;
  const cw = (maxX - minX) / g;
  const ch = (maxY - minY) / g;
  const cellsAt = block + 1;
  const i = clampCell(Math.floor((x - minX) / cw), g);
  const j = clampCell(Math.floor((y - minY) / ch), g);
  const line = cellsAt + j * g;
  const w = grids[line + i] as number;
  if (w >> 1 === (grids[line + i + 1] as number) >> 1) return w & 1;
  let k = i + 1;
  while (k < g && (grids[line + k] as number) >> 1 !== (grids[line + k + 1] as number) >> 1) k++;
  const qx = k < g ? minX + k * cw - cellMargin(cw, ch) : Number.POSITIVE_INFINITY;
  const entriesAt = cellsAt + g * g + 1;
  const to = entriesAt + ((grids[line + k] as number) >> 1);
  let count = k < g ? (grids[line + k] as number) & 1 : 0;
  const stamp = k > i + 1 ? nextStamp() : 0; // a single cell lists each edge once
  for (let e = entriesAt + (w >> 1); e < to; e++) {
    const edge = grids[e] as number;
    const at = (p0 + edge) << 1;
    const ay = coords[at + 1] as number;
    const by = coords[at + 3] as number;
    if (ay > y === by > y && ay !== y) continue; // cannot cross the ray nor hold the point
    if (stamp !== 0) {
      if (stamps[edge] === stamp) continue;
      stamps[edge] = stamp;
    }
    const ax = coords[at] as number;
    const bx = coords[at + 2] as number;
    const step = edgeStep(ax, ay, bx, by, x, y);
    if (step < 0) return 1;
    if (step === 1) {
      if (k === g) count++;
      else {
        const left = crossesLeftOf(ax, ay, bx, by, qx, y);
        if (left < 0) return -1;
        count += left;
      }
    }
  }
  return count & 1;
}
