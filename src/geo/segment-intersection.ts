import { orient2d } from 'robust-predicates';

/**
 * Exact classification of how two closed segments meet.
 *
 * Every decision is taken from the signs of Shewchuk's adaptive-precision `orient2d` (J. R. Shewchuk,
 * "Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric Predicates", 1997) and from
 * comparisons of input coordinates, which are exact in IEEE-754. No floating-point cross product is
 * used for a decision, so integer-like and near-degenerate inputs are classified correctly.
 * Signs are compared directly (never multiplied: the product of two tiny determinants can underflow to 0).
 */

/** How two segments meet. */
export const SegmentRelation = {
  /** No common point. */
  None: 0,
  /** They cross at a single point interior to both. */
  Cross: 1,
  /** They share exactly one point, which is an endpoint of at least one of them. */
  Touch: 2,
  /** They are collinear and share a piece of positive length. */
  Overlap: 3,
} as const;
export type SegmentRelation = (typeof SegmentRelation)[keyof typeof SegmentRelation];

/** Result of {@link intersectSegments}; `x`/`y` is the meeting point (approximate only for `Cross`). */
export interface SegmentIntersection {
  relation: SegmentRelation;
  x: number;
  y: number;
}

/** Whether `c`, known to be collinear with segment a–b, lies on the closed segment (exact comparisons). */
export function collinearOnSegment(
  ax: number,
  ay: number,
  bx: number,
  by: number,
  cx: number,
  cy: number,
): boolean {
  return (
    (ax <= bx ? ax <= cx && cx <= bx : bx <= cx && cx <= ax) &&
    (ay <= by ? ay <= cy && cy <= by : by <= cy && cy <= ay)
  );
}

function sameStrictSign(p: number, q: number): boolean {
  return (p > 0 && q > 0) || (p < 0 && q < 0);
}

/**
 * Classify how segment a–b meets segment c–d. Both segments must be non-degenerate (a ≠ b, c ≠ d),
 * which the validator guarantees by removing repeated consecutive positions first.
 * Returns `null` when they do not meet (the common case, allocation-free).
 */
export function intersectSegments(
  ax: number,
  ay: number,
  bx: number,
  by: number,
  cx: number,
  cy: number,
  dx: number,
  dy: number,
): SegmentIntersection | null {
  const d1 = orient2d(ax, ay, bx, by, cx, cy);
  const d2 = orient2d(ax, ay, bx, by, dx, dy);
  if (sameStrictSign(d1, d2)) return null;
  const d3 = orient2d(cx, cy, dx, dy, ax, ay);
  const d4 = orient2d(cx, cy, dx, dy, bx, by);
  if (sameStrictSign(d3, d4)) return null;

  if (d1 === 0 && d2 === 0) {
    // Collinear: compare the projections on an axis along which a–b is not constant.
    const useX = ax !== bx;
    const a = useX ? ax : ay;
    const b = useX ? bx : by;
    const c = useX ? cx : cy;
    const d = useX ? dx : dy;
    const lo = Math.max(Math.min(a, b), Math.min(c, d));
    const hi = Math.min(Math.max(a, b), Math.max(c, d));
    if (lo > hi) return null;
    // The shared piece starts at whichever endpoint projects to `lo`.
    let px: number;
    let py: number;
    if (a === lo) [px, py] = [ax, ay];
    else if (b === lo) [px, py] = [bx, by];
    else if (c === lo) [px, py] = [cx, cy];
    else [px, py] = [dx, dy];
    return { relation: lo === hi ? SegmentRelation.Touch : SegmentRelation.Overlap, x: px, y: py };
  }

  if (d1 === 0 || d2 === 0 || d3 === 0 || d4 === 0) {
    // One endpoint lies on the other segment's line; the sign tests above leave it on the segment
    // or outside it, which the exact bounding comparison decides.
    if (d1 === 0 && collinearOnSegment(ax, ay, bx, by, cx, cy))
      return { relation: SegmentRelation.Touch, x: cx, y: cy };
    if (d2 === 0 && collinearOnSegment(ax, ay, bx, by, dx, dy))
      return { relation: SegmentRelation.Touch, x: dx, y: dy };
    if (d3 === 0 && collinearOnSegment(cx, cy, dx, dy, ax, ay))
      return { relation: SegmentRelation.Touch, x: ax, y: ay };
    if (d4 === 0 && collinearOnSegment(cx, cy, dx, dy, bx, by))
      return { relation: SegmentRelation.Touch, x: bx, y: by };
    return null;
  }

  // Proper crossing. The point itself is only reported (error `location`), so floating point is fine here.
  const t = d3 / (d3 - d4);
  return { relation: SegmentRelation.Cross, x: ax + t * (bx - ax), y: ay + t * (by - ay) };
}
