import { orient2d } from 'robust-predicates';
import type { Position } from './types.ts';

/**
 * Exact point-in-ring tests by ray casting (crossing number, half-open rule: an edge counts when exactly
 * one endpoint lies strictly above the horizontal line through the point), see E. Haines, "Point in
 * Polygon Strategies", Graphics Gems IV, 1994. Which side of an edge the point lies on is decided by
 * the exact sign of `orient2d`; all other decisions are comparisons of input coordinates, so the
 * result is exact for every finite double input, including points exactly on an edge or vertex.
 *
 * Sign convention of robust-predicates: `orient2d(a, b, c) < 0` ⇔ `c` lies left of the directed line
 * a→b in a y-up (lng/lat) frame.
 */

/** Point is outside / on the boundary / strictly inside. */
export const OUTSIDE = -1;
export const BOUNDARY = 0;
export const INSIDE = 1;
export type PointLocation = -1 | 0 | 1;

/**
 * Crossings of the ray from (x, y) towards +x with ring `ring` (closed, `ring[0]` equals the last
 * position), or -1 when the point lies on the ring.
 */
export function ringCrossings(x: number, y: number, ring: readonly Position[]): number {
  let crossings = 0;
  const n = ring.length;
  if (n === 0) return 0;
  const first = ring[0] as Position;
  let ax = first[0];
  let ay = first[1];
  for (let i = 1; i < n; i++) {
    const p = ring[i] as Position;
    const bx = p[0];
    const by = p[1];
    if (ay > y !== by > y) {
      if (ax > x && bx > x) crossings++;
      else if (ax >= x || bx >= x) {
        const o = orient2d(ax, ay, bx, by, x, y);
        if (o === 0) return -1;
        if (o < 0 === by > ay) crossings++;
      }
    } else if (ay === y) {
      if (ax === x) return -1;
      if (by === y && ax < x !== bx < x) return -1;
    }
    ax = bx;
    ay = by;
  }
  return crossings;
}

/** Exact location of (x, y) relative to one closed ring. */
export function locatePointInRing(x: number, y: number, ring: readonly Position[]): PointLocation {
  const c = ringCrossings(x, y, ring);
  if (c < 0) return BOUNDARY;
  return (c & 1) === 1 ? INSIDE : OUTSIDE;
}
