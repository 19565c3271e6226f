import { ringCrossings } from './point-in-ring.ts';
import type { PolygonGeometry } from './types.ts';

/**
 * Whether the point (lng, lat) lies in the polygon, planar in lng/lat. Exact: a point on any ring's
 * boundary (shell or hole, edge or vertex) is inside; holes exclude their interior. Uses the even–odd
 * rule over all rings, which equals "in shell and not in any hole" for valid polygons (holes inside
 * the shell and interior-disjoint), so ring orientation does not matter.
 */
export function pointInPolygon(lng: number, lat: number, polygon: PolygonGeometry): boolean {
  let crossings = 0;
  for (const ring of polygon.coordinates) {
    const c = ringCrossings(lng, lat, ring);
    if (c < 0) return true;
    crossings += c;
  }
  return (crossings & 1) === 1;
}
