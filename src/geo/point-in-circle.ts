import { haversineDistance } from './haversine.ts';
import type { CircleGeometry } from './types.ts';

/** Whether (lng, lat) is within the circle: great-circle distance to the centre ≤ radius (boundary inside). */
export function pointInCircle(lng: number, lat: number, circle: CircleGeometry): boolean {
  const [clng, clat] = circle.coordinates;
  return haversineDistance(clng, clat, lng, lat) <= circle.radius;
}
