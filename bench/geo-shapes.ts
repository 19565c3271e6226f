/**
 * Deterministic benchmark polygons (GeoJSON-shaped, closed rings).
 * `starPolygon` follows /work/shared/bench/dataset.mjs (stratified angles, radius 0.3..1 × r, so the ring is
 * simple); `spikyStar` is an adversarial simple polygon whose long edges all overlap each other in both x and y
 * ranges, the worst case for sweep-and-prune validation.
 */
import type { Position } from '../src/geo/types.ts';

const M_PER_DEG = 111_320;

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

export function starPolygon(
  vertices: number,
  cx: number,
  cy: number,
  radiusM: number,
  seed: number,
): { type: 'Polygon'; coordinates: Position[][] } {
  const r = lcg(seed);
  const kx = M_PER_DEG * Math.cos((cy * Math.PI) / 180);
  const ring: Position[] = [];
  for (let k = 0; k < vertices; k++) {
    const a = ((k + 0.8 * r()) * 2 * Math.PI) / vertices;
    const rr = radiusM * (0.3 + 0.7 * r());
    ring.push([cx + (rr * Math.cos(a)) / kx, cy + (rr * Math.sin(a)) / M_PER_DEG]);
  }
  ring.push(ring[0] as Position);
  return { type: 'Polygon', coordinates: [ring] };
}

/**
 * A spiky star: radii alternate between 5 % and 100 % of `radiusM`, so every edge runs from near the centre to
 * the rim and all edge bboxes overlap around the centre, in both axes (worst case for sweep-and-prune).
 */
export function spikyStar(
  vertices: number,
  cx = 13.4,
  cy = 52.5,
  radiusM = 600,
): { type: 'Polygon'; coordinates: Position[][] } {
  const kx = M_PER_DEG * Math.cos((cy * Math.PI) / 180);
  const ring: Position[] = [];
  for (let k = 0; k < vertices; k++) {
    const a = (k * 2 * Math.PI) / vertices;
    const rr = radiusM * (k % 2 === 0 ? 1 : 0.05);
    ring.push([cx + (rr * Math.cos(a)) / kx, cy + (rr * Math.sin(a)) / M_PER_DEG]);
  }
  ring.push(ring[0] as Position);
  return { type: 'Polygon', coordinates: [ring] };
}
