/** Mean Earth radius in metres (IUGG R1; also Turf's `earthRadius`, @turf/helpers). */
export const EARTH_RADIUS_M = 6_371_008.8;

/** Contract §3: at most 500 vertices per polygon, counted as Σ over rings of (positions − 1). */
export const MAX_VERTICES = 500;

/** Contract §3: a circle's radius r must satisfy 0 < r ≤ 100 000 m. */
export const MAX_RADIUS_M = 100_000;

/** Schema validation stops collecting after this many errors (bounded response size on garbage input). */
export const MAX_SCHEMA_ERRORS = 20;

/** Degrees → radians. */
export const DEG_TO_RAD = Math.PI / 180;
