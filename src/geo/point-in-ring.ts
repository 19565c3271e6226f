import { edgeStep } from './edge-step.ts';
import type { Position } from './types.ts';

/**
 * Exact point-in-ring tests on GeoJSON rings by ray casting (see edge-step.ts): exact for every finite
 * double input, including points exactly on an edge or vertex.
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
    if (ay > y !== by > y || ay === y) {
      const step = edgeStep(ax, ay, bx, by, x, y);
      if (step < 0) return -1;
      crossings += step;
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
