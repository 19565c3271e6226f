import { orient2d } from 'robust-predicates';
import { crossesLeftOf, edgeStep } from './edge-step.ts';
import { ARENA_CHUNK_MASK, type U16Arena } from './u16-builder.ts';

/**
 * Per-polygon cell grid for exact point-in-polygon in (near) constant time — the "grid method" of
 * E. Haines, "Point in Polygon Strategies" (Graphics Gems IV, 1994): each cell stores whether a reference
 * point of the cell (a corner) is inside, and a lookup tests only the edges listed in its own cell against
 * a path from the point to that corner. Made exact here.
 *
 * The polygon's bbox is cut into G × G cells; cell (i, j) is treated as the closed rectangle
 * R = [x0 + i·cw − m, x0 + (i+1)·cw + m] × [y0 + j·ch − m, y0 + (j+1)·ch + m], grown by a margin m
 * (≥ 1e-11°, far above the ~1e-13° rounding of the cell arithmetic), so a point that maps to a cell lies in
 * its rectangle. Each cell lists the edges that may meet its rectangle (a superset is fine, computed with
 * 2m of slack) and one bit: whether its bottom-right corner C = (X, Y) = (x0 + (i+1)·cw + m, y0 + j·ch − m)
 * is inside. The corners are never on the boundary (the build checks it exactly and gives up otherwise).
 * - Point in a cell without edges: the rectangle holds no boundary, so the point is where C is: the bit.
 * - Point p = (x, y) in a cell with edges: with q = (X, y), the crossing number of the ray from p is
 *   (crossings of the horizontal segment [p, q)) + (that of the ray from q), and the parity of q's equals
 *   C's bit plus the crossings of the vertical segment C → q. Both segments lie in R, so only the cell's
 *   own edges are tested (so a lookup tests only its cell's edges instead of walking to an empty cell;
 *   ADR 005).
 * - Bits are computed at build time along each row from the right (outside the bbox), corner to corner:
 *   the crossings between two neighbouring corners lie on the bottom side of one cell's rectangle.
 *
 * Exactness: every decision is `edgeStep` / `crossesLeftOf` / `orient2d` (plus coordinate comparisons).
 * Ties follow the half-open rules: a vertex at height y counts as below the horizontal line through y, one
 * at x = X as left of the vertical line x = X. With those rules the counts are exactly those of the path
 * p → q* → C for q* = q + (ε, ε), infinitesimally up and right; should q lie on an edge that enters the
 * quadrant up-right of it, q* might lie on the boundary too, so the lookup detects that case (an exact
 * zero) and returns −1: the caller scans all edges instead (a measure-zero event, never expected).
 */

/**
 * Polygons with at least this many edges get a cell grid; smaller ones are scanned (a few cache lines).
 * The threshold is chosen by measurement (ADR 006, "Lookup path").
 */
export const GRID_MIN_EDGES = 16;
/** Target number of cells per edge (G² ≈ CELLS_PER_EDGE · edges), chosen by measurement (ADR 006, "Lookup path"). */
export const CELLS_PER_EDGE = 4;
const MAX_G = 64;
/** Edge entries per grid (u16 offsets into the block must stay below 65 536). */
const MAX_ENTRIES = 32767;
/** Words of a block header. */
const HEADER = 4;
/** Edges stored inside a cell record; busier cells use the overflow area. */
const INLINE_EDGES = 1;
/**
 * Words of a cell record: [count << 1 | corner bit, INLINE_EDGES edges or the overflow offset]. Most busy
 * cells have several edges either way, so more inline edges save little lookup work and cost grid memory
 * (ADR 006).
 */
const CELL_WORDS = INLINE_EDGES + 1;
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
/** Scratch of a grid being built, in CSR form: cell c lists `list[starts[c] .. starts[c + 1])`. */
let starts = new Int32Array(MAX_G * MAX_G + 1);
let list = new Int32Array(1024);
const bits = new Uint8Array(MAX_G * MAX_G);

/**
 * Grid parameters of the polygon being compiled, [minX, minY, 1/cw, 1/ch, ch, 2m]. Kept in a typed array
 * rather than passed as arguments: V8 boxes doubles passed to a function it does not inline, and that
 * allocation dominated the build.
 */
const params = new Float64Array(6);

/**
 * The point being located: [x, y, cos y (NaN until needed, set by the index), corner X, corner Y (set by
 * gridLocate)]. Lookups pass doubles here rather than as arguments for the same reason as `params`: the
 * lookup functions are too large for V8 to inline everywhere, and boxing the doubles of every call (each
 * edge test had six) made the lookup loop allocation- and GC-bound.
 */
export const lookupPoint = new Float64Array(5);
const P_X = 0;
const P_Y = 1;
const P_QX = 3;
const P_CY = 4;

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
 * `ringEnds[ringsAt .. ringsAt + rings)`, and append it to `out` as one block (see `emitBlock`). Returns
 * the block's global offset in `out`, or −1 when the polygon gets no grid (nothing appended). Cell size is
 * `(max − min) / G` on each axis. `forceG` (tests) imposes G instead of choosing it from the edges.
 */
export function appendPolygonGrid(
  coords: Float64Array,
  p0: number,
  ringEnds: Uint16Array,
  ringsAt: number,
  rings: number,
  out: U16Arena,
  minX: number,
  minY: number,
  maxX: number,
  maxY: number,
  forceG = 0,
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
  let g = forceG > 0 ? forceG : Math.min(MAX_G, Math.max(2, Math.floor(Math.min(byCells, byEntries))));
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
    if (starts.length < cells + 1) starts = new Int32Array(cells + 1);
    if (cellBuf.length < cells) cellBuf = new Int32Array(cells);
    starts.fill(0, 0, cells + 1);
    let entries = 0;
    let begin = p0;
    for (let r = 0; r < rings; r++) {
      const end = p0 + (ringEnds[ringsAt + r] as number);
      for (let i = begin; i + 1 < end; i++) {
        const n = edgeCells(coords, i << 1, g);
        for (let c = 0; c < n; c++) {
          const cell = cellBuf[c] as number;
          starts[cell + 1] = (starts[cell + 1] as number) + 1;
        }
        entries += n;
      }
      begin = end;
    }
    if ((entries > MAX_ENTRIES || entries > MAX_ENTRIES_PER_EDGE * edges) && g > 2 && forceG === 0) {
      g = Math.max(2, Math.floor(g * 0.7));
      continue;
    }
    if (entries > MAX_ENTRIES) return -1;
    // Counts → starts; the fill pass advances starts[c] to the end of cell c, i.e. starts[c + 1].
    for (let c = 0; c < cells; c++) starts[c + 1] = (starts[c + 1] as number) + (starts[c] as number);
    if (list.length < entries) list = new Int32Array(Math.max(entries, 2 * list.length));
    begin = p0;
    for (let r = 0; r < rings; r++) {
      const end = p0 + (ringEnds[ringsAt + r] as number);
      for (let i = begin; i + 1 < end; i++) {
        const n = edgeCells(coords, i << 1, g);
        for (let c = 0; c < n; c++) {
          const cell = cellBuf[c] as number;
          const at = starts[cell] as number;
          list[at] = i - p0;
          starts[cell] = at + 1;
        }
      }
      begin = end;
    }
    for (let c = cells; c > 0; c--) starts[c] = starts[c - 1] as number;
    starts[0] = 0;
    if (!fillCornerBits(coords, p0, g, minX, minY, maxX, cw, ch, m)) return -1;
    return emitBlock(out, g);
  }
}

/**
 * Append the grid in `starts` / `list` / `bits` to `out` as a block (at a multiple of 4 words, so that no
 * cell record straddles a cache line): header [G, overflow length, 0, 0], then G·G cell records of
 * {@link CELL_WORDS} words [count << 1 | corner bit, edge] — a cell's single edge inline (then reading the
 * cell's record also yields its edge), or for more edges the offset of its list in the overflow area
 * (relative to the block) — then the overflow lists. Edges are given as their first position relative to
 * p0. Returns the block's global offset in the arena.
 */
function emitBlock(out: U16Arena, g: number): number {
  const cells = g * g;
  let overflow = 0;
  for (let c = 0; c < cells; c++) {
    const n = (starts[c + 1] as number) - (starts[c] as number);
    if (n > INLINE_EDGES) overflow += n;
  }
  const at = out.alloc(HEADER + CELL_WORDS * cells + overflow);
  const d = out.chunk(at);
  const block = at & ARENA_CHUNK_MASK;
  d[block] = g;
  d[block + 1] = overflow;
  d[block + 2] = 0;
  d[block + 3] = 0;
  let next = HEADER + CELL_WORDS * cells; // overflow cursor, relative to the block
  for (let c = 0; c < cells; c++) {
    const from = starts[c] as number;
    const n = (starts[c + 1] as number) - from;
    const rec = block + HEADER + CELL_WORDS * c;
    d[rec] = (n << 1) | (bits[c] as number);
    for (let k = 1; k < CELL_WORDS; k++) d[rec + k] = 0;
    if (n <= INLINE_EDGES) {
      for (let k = 0; k < n; k++) d[rec + 1 + k] = list[from + k] as number;
    } else {
      d[rec + 1] = next;
      for (let k = 0; k < n; k++) d[block + next + k] = list[from + k] as number;
      next += n;
    }
  }
  return at;
}

/** Length in the arena of the grid block starting at `block` (for copying it between stores). */
export function gridBlockLength(data: Uint16Array, block: number): number {
  const g = data[block] as number;
  return HEADER + CELL_WORDS * g * g + (data[block + 1] as number);
}

/** Grid size G of the block at `block`. */
export function gridSize(data: Uint16Array, block: number): number {
  return data[block] as number;
}

/** Right side X of the grown rectangle of column i; build and lookup must evaluate this same expression. */
export function cellRight(minX: number, cw: number, i: number, m: number): number {
  return minX + (i + 1) * cw + m;
}

/** Bottom side Y of the grown rectangle of row j; build and lookup must evaluate this same expression. */
export function cellBottom(minY: number, ch: number, j: number, m: number): number {
  return minY + j * ch - m;
}

/**
 * Set each cell's bit to whether its corner C = (cellRight, cellBottom) is inside: per row, from the right
 * (the last corner lies right of the bbox: outside), bit(k) = bit(k+1) xor the parity of the crossings of
 * the segment [C_k, C_k+1) — which lies on the bottom side of cell k+1's rectangle, so only that cell's edges
 * can cross it. Returns false when a corner lies on an edge (no grid then).
 */
function fillCornerBits(
  coords: Float64Array,
  p0: number,
  g: number,
  minX: number,
  minY: number,
  maxX: number,
  cw: number,
  ch: number,
  m: number,
): boolean {
  if (!(cellRight(minX, cw, g - 1, m) > maxX)) return false;
  for (let j = 0; j < g; j++) {
    const row = j * g;
    const cy = cellBottom(minY, ch, j, m);
    let bit = 0; // corner of the last column: right of every vertex
    bits[row + g - 1] = 0;
    let rightX = cellRight(minX, cw, g - 1, m);
    for (let k = g - 2; k >= 0; k--) {
      const cx = cellRight(minX, cw, k, m);
      const to = starts[row + k + 2] as number;
      let count = 0;
      for (let e = starts[row + k + 1] as number; e < to; e++) {
        const at = (p0 + (list[e] as number)) << 1;
        const ax = coords[at] as number;
        const ay = coords[at + 1] as number;
        const bx = coords[at + 2] as number;
        const by = coords[at + 3] as number;
        const step = edgeStep(ax, ay, bx, by, cx, cy);
        if (step < 0) return false;
        if (step === 1) {
          const left = crossesLeftOf(ax, ay, bx, by, rightX, cy);
          if (left < 0) return false;
          count += left;
        }
      }
      bit ^= count & 1;
      bits[row + k] = bit;
      rightX = cx;
    }
  }
  return true;
}

/**
 * For an edge that straddles the vertical line x = X (half-open: exactly one endpoint has x > X), whether it
 * crosses that line strictly between heights y0 < y1: 1 yes, 0 no, −1 when (X, y0) or (X, y1) lies on it.
 */
export function crossesBetween(
  ax: number,
  ay: number,
  bx: number,
  by: number,
  qx: number,
  y0: number,
  y1: number,
): number {
  // Orient the edge left → right: then (X, v) lies below it ⇔ orient2d > 0 (robust-predicates' sign).
  const left = ax <= qx;
  const lx = left ? ax : bx;
  const ly = left ? ay : by;
  const rx = left ? bx : ax;
  const ry = left ? by : ay;
  const s1 = orient2d(lx, ly, rx, ry, qx, y1);
  if (s1 === 0) return -1;
  if (s1 > 0) return 0; // (X, y1) below the crossing
  const s0 = orient2d(lx, ly, rx, ry, qx, y0);
  if (s0 === 0) return -1;
  return s0 > 0 ? 1 : 0;
}

/**
 * Exact point-in-polygon through the grid block at `grids[block]` (grid size `g`, which callers keep next
 * to the block's offset so that the lookup reads the point's cell record first) of the polygon whose bbox is
 * `row[b .. b + 4)` and whose positions start at `coords[2·p0]`; the point is read from {@link lookupPoint}. The point must lie in the bbox (the caller's box filter guarantees it). Returns 1 inside or on the boundary, 0 outside, −1 when the grid cannot
 * decide (q on an edge; the caller then scans all edges).
 */
export function gridLocate(
  coords: Float64Array,
  grids: Uint16Array,
  block: number,
  g: number,
  row: Float64Array,
  b: number,
  p0: number,
): number {
  const pt = lookupPoint;
  const x = pt[P_X] as number;
  const y = pt[P_Y] as number;
  const minX = row[b] as number;
  const minY = row[b + 1] as number;
  const cw = ((row[b + 2] as number) - minX) / g;
  const ch = ((row[b + 3] as number) - minY) / g;
  const i = clampCell(Math.floor((x - minX) / cw), g);
  const j = clampCell(Math.floor((y - minY) / ch), g);
  const cell = block + HEADER + CELL_WORDS * (j * g + i);
  const w = grids[cell] as number;
  let count = w & 1;
  const n = w >> 1;
  if (n === 0) return count;
  const m = cellMargin(cw, ch);
  pt[P_QX] = cellRight(minX, cw, i, m);
  pt[P_CY] = cellBottom(minY, ch, j, m);
  if (n <= INLINE_EDGES) {
    for (let k = 1; k <= n; k++) {
      const r = edgeCrossings(coords, (p0 + (grids[cell + k] as number)) << 1);
      if (r < 0) return r === ON_EDGE ? 1 : -1;
      count += r;
    }
  } else {
    const from = block + (grids[cell + 1] as number);
    for (let e = from, end = from + n; e < end; e++) {
      const r = edgeCrossings(coords, (p0 + (grids[e] as number)) << 1);
      if (r < 0) return r === ON_EDGE ? 1 : -1;
      count += r;
    }
  }
  return count & 1;
}

/** {@link edgeCrossings}: the point lies on the edge. */
const ON_EDGE = -1;
/** {@link edgeCrossings}: q = (corner X, y) lies on the edge; the grid cannot decide. */
const UNDECIDED = -2;

/**
 * Crossings of the edge starting at `coords[at]` with the path p → q → C of {@link gridLocate} (p, q's X
 * and C's Y in {@link lookupPoint}): the horizontal part [p, q) plus the vertical part strictly between C
 * and q. Returns 0, 1 or 2, or ON_EDGE / UNDECIDED.
 */
function edgeCrossings(coords: Float64Array, at: number): number {
  const pt = lookupPoint;
  const x = pt[P_X] as number;
  const y = pt[P_Y] as number;
  const qx = pt[P_QX] as number;
  const ax = coords[at] as number;
  const ay = coords[at + 1] as number;
  const bx = coords[at + 2] as number;
  const by = coords[at + 3] as number;
  let count = 0;
  // Horizontal part [p, q): crossings right of p and strictly left of q.
  if (ay > y !== by > y || ay === y) {
    const step = edgeStep(ax, ay, bx, by, x, y);
    if (step < 0) return ON_EDGE;
    if (step === 1) {
      const left = crossesLeftOf(ax, ay, bx, by, qx, y);
      if (left < 0) return UNDECIDED;
      count = left;
    }
  }
  // Vertical part C → q on x = X, strictly between the corner's height and y. An edge entirely below the
  // corner or entirely above q cannot cross it (ties go to the exact test).
  if (ax > qx !== bx > qx) {
    const cy = pt[P_CY] as number;
    if ((ay >= cy || by >= cy) && (ay <= y || by <= y)) {
      const v = crossesBetween(ax, ay, bx, by, qx, cy, y);
      if (v < 0) return UNDECIDED;
      count += v;
    }
  }
  return count;
}
