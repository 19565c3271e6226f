import { orient2d } from 'robust-predicates';

/**
 * One step of exact ray casting (crossing number, half-open rule: an edge counts when exactly one
 * endpoint lies strictly above the horizontal line through the point; E. Haines, "Point in Polygon
 * Strategies", Graphics Gems IV, 1994) for edge a→b and the ray from (x, y) towards +x:
 * 1 = the ray crosses the edge, 0 = it does not, −1 = the point lies on the edge.
 * The side is decided by the exact sign of `orient2d` (robust-predicates: negative ⇔ (x, y) lies left
 * of a→b in a y-up frame); every other decision compares input coordinates, which is exact.
 */
export function edgeStep(ax: number, ay: number, bx: number, by: number, x: number, y: number): number {
  if (ay > y !== by > y) {
    if (ax > x && bx > x) return 1;
    if (ax < x && bx < x) return 0;
    const o = orient2d(ax, ay, bx, by, x, y);
    if (o === 0) return -1;
    return o < 0 === by > ay ? 1 : 0;
  }
  if (ay === y) {
    if (ax === x) return -1;
    if (by === y && ax < x !== bx < x) return -1;
  }
  return 0;
}

/**
 * For an edge a→b that straddles the horizontal line through q (half-open rule), whether it crosses
 * that line strictly left of q: 1 yes, 0 no, −1 when q lies on the edge (undecidable for the caller).
 */
export function crossesLeftOf(
  ax: number,
  ay: number,
  bx: number,
  by: number,
  qx: number,
  qy: number,
): number {
  if (ax < qx && bx < qx) return 1;
  if (ax > qx && bx > qx) return 0;
  const o = orient2d(ax, ay, bx, by, qx, qy);
  if (o === 0) return -1;
  return o > 0 === by > ay ? 1 : 0;
}
