import { EARTH_RADIUS_M } from './constants.ts';

/**
 * Degrees → radians exactly as Turf does it (`(deg % 360) * PI / 180`, @turf/helpers
 * `degreesToRadians`), so that our distances are bit-identical to `@turf/distance` and the
 * differential tests can demand equality rather than a tolerance.
 */
export function toRadians(degrees: number): number {
  return ((degrees % 360) * Math.PI) / 180;
}

/**
 * Great-circle distance in metres between two `[lng, lat]` points by the haversine formula
 * (R. W. Sinnott, "Virtues of the Haversine", Sky & Telescope 68(2), 1984) on a sphere of the mean
 * Earth radius 6 371 008.8 m. The `atan2` form stays accurate for antipodal points, where the
 * `asin` form loses precision. Operation order mirrors `@turf/distance` 7.x.
 */
export function haversineDistance(lng1: number, lat1: number, lng2: number, lat2: number): number {
  const dLat = toRadians(lat2 - lat1);
  const dLon = toRadians(lng2 - lng1);
  const a =
    Math.sin(dLat / 2) ** 2 + Math.sin(dLon / 2) ** 2 * Math.cos(toRadians(lat1)) * Math.cos(toRadians(lat2));
  return 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a)) * EARTH_RADIUS_M;
}
