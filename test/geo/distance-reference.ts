/**
 * Independent reference for the distance from a point to a fence boundary, by brute force: the great-circle
 * angle between unit vectors (atan2 of |p × q| and p · q, not the haversine formula the engine uses), minimised
 * along each edge — a straight line in lng/lat — by dense sampling and golden-section refinement. Slow and
 * simple; accurate to far below a micrometre for distances up to hundreds of kilometres.
 */
import { EARTH_RADIUS_M } from '../../src/geo/constants.ts';
import type { Position } from '../../src/geo/types.ts';

const RAD = Math.PI / 180;

function unit(lng: number, lat: number): [number, number, number] {
  const phi = lat * RAD;
  const lam = lng * RAD;
  return [Math.cos(phi) * Math.cos(lam), Math.cos(phi) * Math.sin(lam), Math.sin(phi)];
}

/** Great-circle distance in metres between two [lng, lat] points, from unit vectors. */
export function vectorDistanceM(a: Position, b: Position): number {
  const p = unit(a[0], a[1]);
  const q = unit(b[0], b[1]);
  const cx = p[1] * q[2] - p[2] * q[1];
  const cy = p[2] * q[0] - p[0] * q[2];
  const cz = p[0] * q[1] - p[1] * q[0];
  const dot = p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
  return Math.atan2(Math.hypot(cx, cy, cz), dot) * EARTH_RADIUS_M;
}

/** Metres from `p` to the edge a→b (straight in lng/lat, as stored: no unwrapping). */
export function edgeDistanceM(p: Position, a: Position, b: Position): number {
  const at = (t: number): number => vectorDistanceM(p, [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]);
  const samples = 512;
  let best = Number.POSITIVE_INFINITY;
  let bestT = 0;
  for (let i = 0; i <= samples; i++) {
    const d = at(i / samples);
    if (d < best) {
      best = d;
      bestT = i / samples;
    }
  }
  // Golden-section search in the bracket around the best sample.
  let lo = Math.max(0, bestT - 1 / samples);
  let hi = Math.min(1, bestT + 1 / samples);
  const g = (Math.sqrt(5) - 1) / 2;
  let x1 = hi - g * (hi - lo);
  let x2 = lo + g * (hi - lo);
  let f1 = at(x1);
  let f2 = at(x2);
  for (let i = 0; i < 80; i++) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - g * (hi - lo);
      f1 = at(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + g * (hi - lo);
      f2 = at(x2);
    }
  }
  return Math.min(best, f1, f2);
}

/** Metres from `p` to the nearest point of any ring of a polygon (its boundary; containment not considered). */
export function boundaryDistanceM(p: Position, rings: readonly Position[][]): number {
  let best = Number.POSITIVE_INFINITY;
  for (const ring of rings) {
    for (let i = 0; i + 1 < ring.length; i++) {
      best = Math.min(best, edgeDistanceM(p, ring[i] as Position, ring[i + 1] as Position));
    }
  }
  return best;
}
