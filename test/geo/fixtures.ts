/** Shared geometry generators for the geo tests (deterministic, seedable). */
import type { Position } from '../../src/geo/types.ts';

export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const M_PER_DEG = 111_320;

/** Star-shaped simple ring as in /work/shared/bench/dataset.mjs (stratified angles, radius 0.3..1 × r). */
export function starRing(
  rand: () => number,
  cx: number,
  cy: number,
  radiusM: number,
  vertices: number,
  scale = 1,
): Position[] {
  const kx = M_PER_DEG * Math.cos((cy * Math.PI) / 180);
  const ring: Position[] = [];
  for (let k = 0; k < vertices; k++) {
    const a = ((k + 0.8 * rand()) * 2 * Math.PI) / vertices;
    const rr = radiusM * scale * (0.3 + 0.7 * rand());
    ring.push([cx + (rr * Math.cos(a)) / kx, cy + (rr * Math.sin(a)) / M_PER_DEG]);
  }
  ring.push(ring[0] as Position);
  return ring;
}

/** A star polygon, optionally with a star hole well inside it (hole radius ≤ 0.25 of the shell's minimum). */
export function starPolygon(
  rand: () => number,
  cx: number,
  cy: number,
  radiusM: number,
  vertices: number,
  withHole = false,
): { type: 'Polygon'; coordinates: Position[][] } {
  const shell = starRing(rand, cx, cy, radiusM, vertices);
  if (!withHole) return { type: 'Polygon', coordinates: [shell] };
  const hole = starRing(rand, cx, cy, radiusM * 0.25, Math.max(3, Math.floor(vertices / 2)), 1).reverse();
  return { type: 'Polygon', coordinates: [shell, hole] };
}

/** A closed ring of `n` random vertices in [x0, x0 + w] × [y0, y0 + h] (usually self-intersecting). */
export function randomRing(rand: () => number, n: number, x0 = 13, y0 = 52, w = 0.01, h = 0.01): Position[] {
  const ring: Position[] = [];
  for (let i = 0; i < n; i++) ring.push([x0 + rand() * w, y0 + rand() * h]);
  ring.push(ring[0] as Position);
  return ring;
}

/** A closed ring of `n` random vertices on the integer grid [0, size]² (many degenerate configurations). */
export function integerRing(rand: () => number, n: number, size: number): Position[] {
  const ring: Position[] = [];
  while (ring.length < n) {
    const p: Position = [Math.floor(rand() * (size + 1)), Math.floor(rand() * (size + 1))];
    const last = ring[ring.length - 1];
    if (last !== undefined && last[0] === p[0] && last[1] === p[1]) continue;
    ring.push(p);
  }
  if (
    (ring[0] as Position)[0] === (ring[n - 1] as Position)[0] &&
    (ring[0] as Position)[1] === (ring[n - 1] as Position)[1]
  ) {
    ring.pop();
  }
  ring.push(ring[0] as Position);
  return ring;
}

/** Next representable double above / below x. */
export function nextUp(x: number): number {
  const v = new DataView(new ArrayBuffer(8));
  if (x === 0) return Number.MIN_VALUE;
  v.setFloat64(0, x);
  const bits = v.getBigUint64(0);
  v.setBigUint64(0, x > 0 ? bits + 1n : bits - 1n);
  return v.getFloat64(0);
}

export function nextDown(x: number): number {
  return -nextUp(-x);
}
