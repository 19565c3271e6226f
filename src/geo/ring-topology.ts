import { orient2d } from 'robust-predicates';
import { BOUNDARY, INSIDE, locatePointInRing, OUTSIDE } from './point-in-ring.ts';
import { intersectSegments, SegmentRelation } from './segment-intersection.ts';
import type { GeometryErrorReason, Position } from './types.ts';

/**
 * Topological validity of a polygon's rings (OGC Simple Features §6.1.11.1, as implemented by JTS
 * `IsValidOp`), decided exactly.
 *
 * Input rings are closed, free of consecutive duplicates, ≥ 3 distinct vertices each, coordinates in range.
 * One pass of sort-and-sweep ("sweep and prune") over all edges — sorted by their min coordinate along
 * the sweep axis; each edge is compared with the following edges whose range starts before it ends,
 * after a rejection on the other axis — finds every pair of edges that meet, classified exactly by
 * {@link intersectSegments} (with an inline `orient2d` pre-check, which V8 inlines). The worst case (every
 * edge overlapping every other on both axes) is O(n²), 125 000 pair tests at the 500-vertex cap;
 * bench/geo.ts measures typical and worst cases.
 *
 * Rules (docs/geometry.md):
 *  - within a ring, non-adjacent edges must not meet at all (crossing, touching at a vertex, overlap)
 *    and adjacent edges must not fold back onto each other (spike / zero-width part) → `self_intersection`;
 *  - edges of different rings must not cross or overlap → `ring_intersection`;
 *  - rings may touch each other at isolated points, but the interior must stay connected: the graph
 *    whose nodes are rings and touch points, with an edge for "ring passes through point", must be a
 *    forest (JTS `PolygonTopologyAnalyzer`'s touch-cycle test) → otherwise `disconnected_interior`;
 *  - every hole lies inside the shell → `hole_outside_shell`; no hole lies inside another hole →
 *    `overlapping_holes`.
 */

export interface TopologyError {
  reason: GeometryErrorReason;
  message: string;
  location: Position;
}

function ringName(r: number): string {
  return r === 0 ? 'the exterior ring' : `hole ${r}`;
}

/** Whether collinear points a, s, c have a and c on the same side of s (so edges a–s and s–c overlap). */
function foldsBack(ax: number, ay: number, sx: number, sy: number, cx: number, cy: number): boolean {
  if (orient2d(ax, ay, sx, sy, cx, cy) !== 0) return false;
  if (ax !== sx) return ax < sx === cx < sx;
  return ay < sy === cy < sy;
}

class UnionFind {
  readonly parent: number[] = [];
  add(): number {
    this.parent.push(this.parent.length);
    return this.parent.length - 1;
  }
  find(i: number): number {
    let root = i;
    while (this.parent[root] !== root) root = this.parent[root] as number;
    while (this.parent[i] !== root) {
      const next = this.parent[i] as number;
      this.parent[i] = root;
      i = next;
    }
    return root;
  }
  /** Join the sets of a and b; returns false when they were already joined (the edge closes a cycle). */
  union(a: number, b: number): boolean {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return false;
    this.parent[ra] = rb;
    return true;
  }
}

/** Ring-touch graph for the connected-interior rule. */
class TouchGraph {
  readonly #uf = new UnionFind();
  readonly #points = new Map<string, number>();
  readonly #incidences = new Set<string>();
  constructor(ringCount: number) {
    for (let i = 0; i < ringCount; i++) this.#uf.add();
  }
  /** Record that `ring` passes through (x, y); returns false when this closes a cycle. */
  addIncidence(ring: number, x: number, y: number): boolean {
    const key = `${x},${y}`;
    let node = this.#points.get(key);
    if (node === undefined) {
      node = this.#uf.add();
      this.#points.set(key, node);
    }
    const incidence = `${ring}|${node}`;
    if (this.#incidences.has(incidence)) return true;
    this.#incidences.add(incidence);
    return this.#uf.union(ring, node);
  }
}

/**
 * Per-edge scratch arrays, reused across calls (validation is synchronous and not re-entrant) so that a
 * validation allocates no typed arrays; grown on demand.
 */
class EdgeScratch {
  capacity = 0;
  x0 = new Float64Array(0);
  y0 = new Float64Array(0);
  x1 = new Float64Array(0);
  y1 = new Float64Array(0);
  minX = new Float64Array(0);
  minY = new Float64Array(0);
  maxX = new Float64Array(0);
  maxY = new Float64Array(0);
  ringOf = new Int32Array(0);
  prev = new Int32Array(0);
  next = new Int32Array(0);
  order = new Int32Array(0);
  ensure(n: number): void {
    if (n <= this.capacity) return;
    const c = Math.max(n, 2 * this.capacity, 64);
    this.capacity = c;
    this.x0 = new Float64Array(c);
    this.y0 = new Float64Array(c);
    this.x1 = new Float64Array(c);
    this.y1 = new Float64Array(c);
    this.minX = new Float64Array(c);
    this.minY = new Float64Array(c);
    this.maxX = new Float64Array(c);
    this.maxY = new Float64Array(c);
    this.ringOf = new Int32Array(c);
    this.prev = new Int32Array(c);
    this.next = new Int32Array(c);
    this.order = new Int32Array(c);
  }
}
const scratch = new EdgeScratch();

/** Sort `order[0..n)` by `key[order[i]]` ascending (in-place quicksort + insertion sort; no comparator calls). */
function sortByKey(order: Int32Array, key: Float64Array, lo: number, hi: number): void {
  while (hi - lo > 16) {
    const mid = (lo + hi) >> 1;
    const pivot = key[order[mid] as number] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((key[order[i] as number] as number) < pivot) i++;
      while ((key[order[j] as number] as number) > pivot) j--;
      if (i <= j) {
        const t = order[i] as number;
        order[i] = order[j] as number;
        order[j] = t;
        i++;
        j--;
      }
    }
    // Recurse into the smaller part, loop on the larger (bounded stack depth).
    if (j - lo < hi - i) {
      sortByKey(order, key, lo, j);
      lo = i;
    } else {
      sortByKey(order, key, i, hi);
      hi = j;
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    const v = order[i] as number;
    const k = key[v] as number;
    let j = i - 1;
    while (j >= lo && (key[order[j] as number] as number) > k) {
      order[j + 1] = order[j] as number;
      j--;
    }
    order[j + 1] = v;
  }
}

/** Find the first topology error of the rings, or `null` when the polygon is valid. */
export function checkPolygonTopology(rings: readonly Position[][]): TopologyError | null {
  let edgeCount = 0;
  for (const ring of rings) edgeCount += ring.length - 1;
  scratch.ensure(edgeCount);
  const { x0, y0, x1, y1, minX, minY, maxX, maxY, ringOf, prev, next, order } = scratch;
  let e = 0;
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r] as Position[];
    const firstEdge = e;
    const m = ring.length - 1;
    for (let i = 0; i < m; i++, e++) {
      const a = ring[i] as Position;
      const b = ring[i + 1] as Position;
      const ax = a[0];
      const ay = a[1];
      const bx = b[0];
      const by = b[1];
      x0[e] = ax;
      y0[e] = ay;
      x1[e] = bx;
      y1[e] = by;
      minX[e] = Math.min(ax, bx);
      maxX[e] = Math.max(ax, bx);
      minY[e] = Math.min(ay, by);
      maxY[e] = Math.max(ay, by);
      ringOf[e] = r;
      prev[e] = i === 0 ? firstEdge + m - 1 : e - 1;
      next[e] = i === m - 1 ? firstEdge : e + 1;
      order[e] = e;
    }
  }
  // Sweep along the axis where edges are short relative to the polygon's extent (fewer pairs in the
  // window); for a horizontal comb that is y. Swapping the roles of the arrays is all it takes.
  let spanX = 0;
  let spanY = 0;
  let loX = Number.POSITIVE_INFINITY;
  let hiX = Number.NEGATIVE_INFINITY;
  let loY = Number.POSITIVE_INFINITY;
  let hiY = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < edgeCount; i++) {
    const a = minX[i] as number;
    const b = maxX[i] as number;
    const c = minY[i] as number;
    const d = maxY[i] as number;
    spanX += b - a;
    spanY += d - c;
    if (a < loX) loX = a;
    if (b > hiX) hiX = b;
    if (c < loY) loY = c;
    if (d > hiY) hiY = d;
  }
  const alongX = spanX * (hiY - loY) <= spanY * (hiX - loX);
  const sweepLo = alongX ? minX : minY;
  const sweepHi = alongX ? maxX : maxY;
  const crossLo = alongX ? minY : minX;
  const crossHi = alongX ? maxY : maxX;
  sortByKey(order, sweepLo, 0, edgeCount - 1);

  let ringError: TopologyError | null = null;
  const touches: Array<[number, number, number, number]> = [];

  for (let oi = 0; oi < edgeCount; oi++) {
    const a = order[oi] as number;
    const aHi = sweepHi[a] as number;
    const aCrossLo = crossLo[a] as number;
    const aCrossHi = crossHi[a] as number;
    const ra = ringOf[a] as number;
    for (let oj = oi + 1; oj < edgeCount; oj++) {
      const b = order[oj] as number;
      if ((sweepLo[b] as number) > aHi) break;
      if ((crossLo[b] as number) > aCrossHi || (crossHi[b] as number) < aCrossLo) continue;
      const rb = ringOf[b] as number;
      if (ra === rb && (next[a] === b || prev[a] === b)) {
        // Adjacent edges share one vertex s; they are invalid only if they fold back onto each other.
        const p = next[a] === b ? a : b; // p ends at s, q starts at s
        const q = p === a ? b : a;
        const sx = x1[p] as number;
        const sy = y1[p] as number;
        if (foldsBack(x0[p] as number, y0[p] as number, sx, sy, x1[q] as number, y1[q] as number)) {
          return {
            reason: 'self_intersection',
            message: `${ringName(ra)} folds back on itself at a spike (collinear overlapping edges)`,
            location: [sx, sy],
          };
        }
        // In a triangle every pair of edges is adjacent; nothing else to check for this pair.
        continue;
      }
      // Cheap exact pre-check inline (orient2d's fast path inlines; the full classifier does not).
      const ax0 = x0[a] as number;
      const ay0 = y0[a] as number;
      const ax1 = x1[a] as number;
      const ay1 = y1[a] as number;
      const d1 = orient2d(ax0, ay0, ax1, ay1, x0[b] as number, y0[b] as number);
      const d2 = orient2d(ax0, ay0, ax1, ay1, x1[b] as number, y1[b] as number);
      if ((d1 > 0 && d2 > 0) || (d1 < 0 && d2 < 0)) continue;
      const bx0 = x0[b] as number;
      const by0 = y0[b] as number;
      const bx1 = x1[b] as number;
      const by1 = y1[b] as number;
      const d3 = orient2d(bx0, by0, bx1, by1, ax0, ay0);
      const d4 = orient2d(bx0, by0, bx1, by1, ax1, ay1);
      if ((d3 > 0 && d4 > 0) || (d3 < 0 && d4 < 0)) continue;
      const hit = intersectSegments(
        x0[a] as number,
        y0[a] as number,
        x1[a] as number,
        y1[a] as number,
        x0[b] as number,
        y0[b] as number,
        x1[b] as number,
        y1[b] as number,
      );
      if (hit === null) continue;
      if (ra === rb) {
        const how =
          hit.relation === SegmentRelation.Cross
            ? 'crosses itself'
            : hit.relation === SegmentRelation.Overlap
              ? 'has collinear overlapping edges'
              : 'touches itself';
        return { reason: 'self_intersection', message: `${ringName(ra)} ${how}`, location: [hit.x, hit.y] };
      }
      if (hit.relation === SegmentRelation.Touch) touches.push([ra, rb, hit.x, hit.y]);
      else if (ringError === null) {
        const lo = Math.min(ra, rb);
        const hi = Math.max(ra, rb);
        const how = hit.relation === SegmentRelation.Cross ? 'cross' : 'share a collinear piece of edge';
        ringError = {
          reason: 'ring_intersection',
          message: `${ringName(lo)} and ${ringName(hi)} ${how}`,
          location: [hit.x, hit.y],
        };
      }
    }
  }
  if (ringError !== null) return ringError;

  if (touches.length > 0) {
    const graph = new TouchGraph(rings.length);
    for (const [ra, rb, x, y] of touches) {
      if (!graph.addIncidence(ra, x, y) || !graph.addIncidence(rb, x, y)) {
        return {
          reason: 'disconnected_interior',
          message: `rings touch at more than one point (around ${ringName(Math.min(ra, rb))} and ${ringName(Math.max(ra, rb))}), which disconnects the interior`,
          location: [x, y],
        };
      }
    }
  }
  return checkHoleContainment(rings);
}

/** A vertex of `ring` not on the boundary of `other` and its location relative to `other`. */
function probe(
  ring: readonly Position[],
  other: readonly Position[],
): { at: Position; where: number } | null {
  for (let i = 0; i + 1 < ring.length; i++) {
    const p = ring[i] as Position;
    const where = locatePointInRing(p[0], p[1], other);
    if (where !== BOUNDARY) return { at: p, where };
  }
  return null;
}

interface Box {
  w: number;
  s: number;
  e: number;
  n: number;
}

function boxOf(ring: readonly Position[]): Box {
  let w = Number.POSITIVE_INFINITY;
  let s = Number.POSITIVE_INFINITY;
  let e = Number.NEGATIVE_INFINITY;
  let n = Number.NEGATIVE_INFINITY;
  for (const p of ring) {
    w = Math.min(w, p[0]);
    e = Math.max(e, p[0]);
    s = Math.min(s, p[1]);
    n = Math.max(n, p[1]);
  }
  return { w, s, e, n };
}

/**
 * With no crossings and at most one touch point per pair of rings (both established above), a ring lies
 * entirely on one side of another, so one vertex off the other's boundary decides containment
 * (Jordan curve theorem); at least two of a hole's ≥ 3 distinct vertices are off any other ring.
 */
function checkHoleContainment(rings: readonly Position[][]): TopologyError | null {
  const shell = rings[0];
  if (shell === undefined || rings.length === 1) return null;
  for (let h = 1; h < rings.length; h++) {
    const hit = probe(rings[h] as Position[], shell);
    if (hit !== null && hit.where === OUTSIDE) {
      return {
        reason: 'hole_outside_shell',
        message: `hole ${h} is not inside the exterior ring`,
        location: hit.at,
      };
    }
  }
  if (rings.length < 3) return null;
  const boxes = rings.map(boxOf);
  for (let i = 1; i < rings.length; i++) {
    const bi = boxes[i] as Box;
    for (let j = 1; j < rings.length; j++) {
      if (i === j) continue;
      const bj = boxes[j] as Box;
      if (bi.w < bj.w || bi.e > bj.e || bi.s < bj.s || bi.n > bj.n) continue;
      const hit = probe(rings[i] as Position[], rings[j] as Position[]);
      if (hit !== null && hit.where === INSIDE) {
        return { reason: 'overlapping_holes', message: `hole ${i} lies inside hole ${j}`, location: hit.at };
      }
    }
  }
  return null;
}
