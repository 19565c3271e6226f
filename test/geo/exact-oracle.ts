/**
 * Exact rational-arithmetic oracle for the geometry tests: every finite double is an integer multiple of
 * 2^−1074, so scaling by 2^1074 turns coordinates into BigInts and orientation determinants become exact.
 * Deliberately slow and simple: it is the reference the fast predicates are checked against.
 */
import type { Position } from '../../src/geo/types.ts';

const view = new DataView(new ArrayBuffer(8));

/** x · 2^1074 as an exact BigInt. */
export function scaled(x: number): bigint {
  if (!Number.isFinite(x)) throw new RangeError('finite numbers only');
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const sign = hi >>> 31 === 1 ? -1n : 1n;
  const exponent = (hi >>> 20) & 0x7ff;
  const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  const value = exponent === 0 ? fraction : ((1n << 52n) | fraction) << BigInt(exponent - 1);
  return sign * value;
}

/** Exact sign of the orientation of c relative to a→b: 1 left (counter-clockwise, y up), −1 right, 0 collinear. */
export function orientExact(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): number {
  const [AX, AY, BX, BY, CX, CY] = [scaled(ax), scaled(ay), scaled(bx), scaled(by), scaled(cx), scaled(cy)];
  const det = (BX - AX) * (CY - AY) - (BY - AY) * (CX - AX);
  return det > 0n ? 1 : det < 0n ? -1 : 0;
}

function onSegment(a: Position, b: Position, p: Position): boolean {
  return (
    orientExact(a[0], a[1], b[0], b[1], p[0], p[1]) === 0 &&
    Math.min(a[0], b[0]) <= p[0] &&
    p[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= p[1] &&
    p[1] <= Math.max(a[1], b[1])
  );
}

/** Exact point-in-polygon (even–odd over all rings), boundary counts as inside. */
export function pointInPolygonExact(x: number, y: number, rings: readonly Position[][]): boolean {
  let inside = false;
  const p: Position = [x, y];
  for (const ring of rings) {
    for (let i = 0; i + 1 < ring.length; i++) {
      const a = ring[i] as Position;
      const b = ring[i + 1] as Position;
      if (onSegment(a, b, p)) return true;
      if (a[1] > y !== b[1] > y) {
        // Crossing strictly right of p ⇔ p left of the upward-directed edge.
        const [lo, hi] = a[1] < b[1] ? [a, b] : [b, a];
        if (orientExact(lo[0], lo[1], hi[0], hi[1], x, y) > 0) inside = !inside;
      }
    }
  }
  return inside;
}

/** Whether closed segments a–b and c–d share at least one point (exact). */
export function segmentsMeetExact(a: Position, b: Position, c: Position, d: Position): boolean {
  const d1 = orientExact(a[0], a[1], b[0], b[1], c[0], c[1]);
  const d2 = orientExact(a[0], a[1], b[0], b[1], d[0], d[1]);
  const d3 = orientExact(c[0], c[1], d[0], d[1], a[0], a[1]);
  const d4 = orientExact(c[0], c[1], d[0], d[1], b[0], b[1]);
  if (d1 * d2 < 0 && d3 * d4 < 0) return true;
  return onSegment(a, b, c) || onSegment(a, b, d) || onSegment(c, d, a) || onSegment(c, d, b);
}

/**
 * Exact simplicity of a closed ring without repeated consecutive positions: non-adjacent edges must not
 * meet; adjacent edges must meet only at their shared vertex (no spike). O(n²), for tests.
 */
export function ringIsSimpleExact(ring: readonly Position[]): boolean {
  const m = ring.length - 1;
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      const a = ring[i] as Position;
      const b = ring[i + 1] as Position;
      const c = ring[j] as Position;
      const d = ring[j + 1] as Position;
      const adjacent = j === i + 1 || (i === 0 && j === m - 1);
      if (!adjacent) {
        if (segmentsMeetExact(a, b, c, d)) return false;
        continue;
      }
      // Shared vertex s; the other ends must not lie on the other edge (that would be an overlap).
      const [p, s, q] = j === i + 1 ? [a, b, d] : [c, a, b];
      if (orientExact(p[0], p[1], s[0], s[1], q[0], q[1]) === 0) {
        const sameSide = p[0] !== s[0] ? p[0] < s[0] === q[0] < s[0] : p[1] < s[1] === q[1] < s[1];
        if (sameSide) return false;
      }
    }
  }
  return true;
}
