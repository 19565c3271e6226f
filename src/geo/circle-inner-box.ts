import { EARTH_RADIUS_M } from './constants.ts';
import { toRadians } from './haversine.ts';

/**
 * Relative margin of a circle's inner box: points in it are at most (1 − 1e-6) · radius from the centre,
 * far beyond the ~1e-15 relative rounding of the haversine expression, so the exact test would say inside.
 */
const INNER_MARGIN = 1e-6;
/** Circles smaller than this (metres) get no inner box (keeps the error analysis trivially safe). */
const INNER_MIN_RADIUS_M = 1;

/**
 * Half-height and half-width (degrees) of a box around a circle's centre whose points all lie within
 * (1 − INNER_MARGIN) · radius of it; [−1, −1] (never passes) for radii < INNER_MIN_RADIUS_M.
 *
 * With θ = (1 − INNER_MARGIN) · r / R and hav(t) = sin²(t/2), the haversine formula gives
 * hav(d/R) = hav(Δφ) + cos φ0 · cos φ · hav(Δλ). Take hav(A) = hav(θ)/2 for |Δφ| ≤ A and
 * cos φ0 · cmax · hav(B) = hav(θ)/2 for |Δλ| ≤ B, where cmax bounds cos φ over φ0 ± A (plus 1e-15, the
 * absolute error of Math.cos near the poles; cos φ0 is the stored value the expression uses). Then the
 * true distance is ≤ θ · R, and the floating-point expression (relative error ~1e-15 for these inputs:
 * differences of doubles are correctly rounded, sin/cos/atan2/sqrt are accurate to an ulp or two) stays
 * below r. A and B are shrunk by 1e-9 to absorb the rounding of this computation itself. The box ignores
 * longitude wrap (|x − lng| beyond it falls through to the exact test).
 */
export function circleInnerBox(lat: number, radius: number, cosLat: number): [number, number] {
  if (!(radius >= INNER_MIN_RADIUS_M)) return [-1, -1];
  const theta = ((1 - INNER_MARGIN) * radius) / EARTH_RADIUS_M;
  const hTheta = Math.sin(theta / 2) ** 2;
  const aRad = 2 * Math.asin(Math.sqrt(hTheta / 2));
  const phi = toRadians(lat);
  const lo = phi - aRad;
  const hi = phi + aRad;
  const nearest = lo <= 0 && hi >= 0 ? 0 : Math.min(Math.abs(lo), Math.abs(hi));
  const cmax = Math.min(1, Math.cos(nearest) * (1 + 1e-12) + 1e-15);
  const k = Math.abs(cosLat) * cmax;
  const toDeg = (180 / Math.PI) * (1 - 1e-9);
  const halfLat = aRad * toDeg;
  if (k * 1 <= hTheta / 2) return [halfLat, 360]; // any longitude difference (hav ≤ 1)
  const s = Math.sqrt(hTheta / (2 * k));
  const halfLng = s >= 1 ? 360 : 2 * Math.asin(s) * toDeg;
  return [halfLat, halfLng];
}
