import { DEG_TO_RAD } from './constants.ts';

/**
 * Distance from a point P to a polygon's boundary, on the sphere, edges being straight lines in lng/lat (the
 * engine's polygon semantics). Angles in radians; callers multiply by the Earth radius. The derivation and the
 * error bound are in docs/geometry.md ("Distance to a fence").
 *
 * Frame: equirectangular centred on P, x = Δλ · cos φ0, y = Δφ (radians), with Δλ unwrapped relative to P. It
 * is affine in lng/lat, so every edge stays a straight segment and its nearest point Q* to P in the frame is
 * exact planar arithmetic. The frame's distances are only first-order right (meridians converge), so the
 * value of an edge is not the frame distance |Q*| but the great-circle distance from P to Q*, to 1e-10
 * relative: a haversine whose sines and cosines are short Taylor polynomials while Q* is near P, the exact
 * haversine otherwise. Q* is off the true nearest point of the edge by a first-order amount, but the distance
 * is stationary there, so the value is off by a second-order amount only, and never below the true distance.
 *
 * Antimeridian: a boundary point's Δλ must lie in [−180°, 180°]. Polygons never wrap, so the polygon is scanned
 * once per shift s ∈ {0, +360°, −360°} whose Δλ range meets [−180°, 180°] (one shift unless the polygon or the
 * point is within 180° of longitude of the antimeridian on both sides); a boundary point seen through a wrong
 * shift only gets a larger value.
 */

/**
 * The point of the next distance computations (set by {@link setDistancePoint}): lng°, lat°, cos φ0, tan φ0,
 * φ0 (rad), and the longitude of P minus the shift being scanned. A scratch array rather than arguments: V8
 * boxes the doubles passed to calls it does not inline.
 */
export const distancePoint = new Float64Array(6);
const P_LNG = 0;
const P_LAT = 1;
const P_COS = 2;
const P_TAN = 3;
const P_PHI = 4;
const P_LNG_SHIFTED = 5;

export function setDistancePoint(lng: number, lat: number): void {
  const phi = lat * DEG_TO_RAD;
  const cos = Math.cos(phi);
  distancePoint[P_LNG] = lng;
  distancePoint[P_LAT] = lat;
  distancePoint[P_COS] = cos;
  distancePoint[P_TAN] = Math.sin(phi) / cos;
  distancePoint[P_PHI] = phi;
}

/**
 * Where the Taylor haversine is used: |Δφ| ≤ 0.01 rad (64 km), |tan φ0 · Δφ| ≤ 0.01 (so that cos φ/cos φ0 is
 * close to 1) and |Δλ| ≤ 0.05 rad. Its truncation error there is < 1e-10 relative.
 */
const TAYLOR_DPHI = 0.01;
const TAYLOR_TAN_DPHI = 0.01;
const TAYLOR_DLAMBDA = 0.05;

/**
 * Edge rejection (docs/geometry.md, "Distance to a fence"), each with a slack orders of magnitude above
 * rounding, so that rejecting never changes the minimum:
 *  - in y: an edge value is ≥ |Δφ| (1 − 5e-6) at every point, so an edge whose endpoints both lie beyond
 *    GATE_Y × best on the same side cannot beat `best`;
 *  - in x: while |Δλ| ≤ GATE_X_DLAMBDA, an edge value is ≥ 0.958 |x|: GATE_X × best, same side;
 *  - both, for an edge inside the Taylor region: there q ≥ 0.9896 (x² + y²), so an edge whose box lies
 *    farther than best / √GATE_BOX cannot beat it.
 */
const GATE_Y = 1.001;
const GATE_X = 1.06;
const GATE_X_DLAMBDA = 0.5;
const GATE_BOX = 0.989;

/** Great-circle angle from P to the point (Δλ, Δφ) = (a, b) radians from it: the exact haversine. */
function haversineRad(a: number, b: number): number {
  const sb = Math.sin(b / 2);
  const sa = Math.sin(a / 2);
  const cosLat = Math.max(0, Math.cos((distancePoint[P_PHI] as number) + b));
  const h = Math.min(1, sb * sb + (distancePoint[P_COS] as number) * cosLat * sa * sa);
  return 2 * Math.atan2(Math.sqrt(h), Math.sqrt(1 - h));
}

/**
 * The value of the edge from position c[i], c[i + 1] to c[i + 2], c[i + 3]: the great-circle angle from P to the
 * edge's point Q* nearest to P in the frame (longitudes relative to `distancePoint[P_LNG_SHIFTED]`).
 */
function edgeValue(c: Float64Array, i: number): number {
  const pt = distancePoint;
  const lng0 = pt[P_LNG_SHIFTED] as number;
  const lat0 = pt[P_LAT] as number;
  const cos0 = pt[P_COS] as number;
  const aa = ((c[i] as number) - lng0) * DEG_TO_RAD;
  const ya = ((c[i + 1] as number) - lat0) * DEG_TO_RAD;
  const ab = ((c[i + 2] as number) - lng0) * DEG_TO_RAD;
  const yb = ((c[i + 3] as number) - lat0) * DEG_TO_RAD;
  // Nearest point Q* of the segment in the frame.
  const xa = aa * cos0;
  const dx = ab * cos0 - xa;
  const dy = yb - ya;
  const len2 = dx * dx + dy * dy;
  let t = len2 > 0 ? -(xa * dx + ya * dy) / len2 : 0;
  if (t < 0) t = 0;
  else if (t > 1) t = 1;
  const a = aa + t * (ab - aa);
  const b = ya + t * dy;
  const tan0 = pt[P_TAN] as number;
  if (Math.abs(b) > TAYLOR_DPHI || Math.abs(tan0 * b) > TAYLOR_TAN_DPHI || Math.abs(a) > TAYLOR_DLAMBDA) {
    return haversineRad(a, b);
  }
  // 4·hav θ = 4·hav Δφ + cos φ0 · cos φ · 4·hav Δλ with cos φ = cos φ0 · (cos Δφ − tan φ0 · sin Δφ);
  // 4·hav z = z² (1 − z²/12 + z⁴/360), θ = 2·asin √hav θ = √q (1 + q/24 + 3q²/640) for q = 4·hav θ.
  const b2 = b * b;
  const a2 = a * a;
  const x = a * cos0;
  const u = 1 - 0.5 * b2 + b2 * b2 * (1 / 24) - tan0 * b * (1 - b2 * (1 / 6));
  const q =
    b2 * (1 - b2 * (1 / 12) + b2 * b2 * (1 / 360)) + x * x * u * (1 - a2 * (1 / 12) + a2 * a2 * (1 / 360));
  return Math.sqrt(q) * (1 + q * (1 / 24) + q * q * (3 / 640));
}

/**
 * The angle (radians) from the point of {@link setDistancePoint} to the boundary of the polygon whose positions
 * start at `c[2·p0]`, ring ends at `ringEnds[ringsAt ..]` (relative to p0), `rings` rings, box [w, s, e, n] at
 * `box[b ..]`: the least edge value over all edges of all rings (a hole's too); containment is the caller's
 * business.
 *
 * Early stop: as soon as an edge is found whose value × `radius` is ≤ `stop`, that value is returned (pass
 * stop < 0 for the minimum). So the result × radius compares with `stop` as the minimum would, exactly.
 */
export function polygonBoundaryRad(
  c: Float64Array,
  ringEnds: Uint16Array,
  p0: number,
  ringsAt: number,
  rings: number,
  box: Float64Array,
  b: number,
  stop: number,
  radius: number,
): number {
  const pt = distancePoint;
  const lng0 = pt[P_LNG] as number;
  const lat0 = pt[P_LAT] as number;
  const west = box[b] as number;
  const east = box[b + 2] as number;
  const dLatMax = Math.max(Math.abs((box[b + 1] as number) - lat0), Math.abs((box[b + 3] as number) - lat0));
  const latInTaylor =
    dLatMax * DEG_TO_RAD <= TAYLOR_DPHI &&
    Math.abs(pt[P_TAN] as number) * dLatMax * DEG_TO_RAD <= TAYLOR_TAN_DPHI;
  let best = Number.POSITIVE_INFINITY;
  for (let s = 0; s < 3; s++) {
    const shift = s === 0 ? 0 : s === 1 ? 360 : -360;
    const lo = west - lng0 + shift;
    const hi = east - lng0 + shift;
    if (hi < -180 || lo > 180) continue;
    pt[P_LNG_SHIFTED] = lng0 - shift;
    const dLngMax = Math.max(Math.abs(lo), Math.abs(hi)) * DEG_TO_RAD;
    // Which rejections hold for every edge of the polygon (see the GATE_ constants).
    const gates = (dLngMax <= GATE_X_DLAMBDA ? 1 : 0) | (latInTaylor && dLngMax <= TAYLOR_DLAMBDA ? 2 : 0);
    best = scanEdges(c, ringEnds, p0, ringsAt, rings, gates, best, stop, radius);
    if (best * radius <= stop) return best;
  }
  return best;
}

/**
 * {@link polygonBoundaryRad} for the shift in `distancePoint`, starting from `best`; `gates`: 1 = the x
 * rejection holds, 2 = the box rejection holds (the whole polygon lies in the Taylor region). The edge at the
 * vertex nearest in the frame goes first, so that the rejections are tight from the start.
 */
function scanEdges(
  c: Float64Array,
  ringEnds: Uint16Array,
  p0: number,
  ringsAt: number,
  rings: number,
  gates: number,
  best: number,
  stop: number,
  radius: number,
): number {
  const pt = distancePoint;
  const lng0 = pt[P_LNG_SHIFTED] as number;
  const lat0 = pt[P_LAT] as number;
  const cos0 = pt[P_COS] as number;
  const first = p0 << 1;
  const last = (p0 + (ringEnds[ringsAt + rings - 1] as number)) << 1;
  // The nearest vertex (strictly nearest first occurrence, so never a ring's closing position).
  let nearest = first;
  let nearest2 = Number.POSITIVE_INFINITY;
  for (let i = first; i < last; i += 2) {
    const dx = ((c[i] as number) - lng0) * cos0;
    const dy = (c[i + 1] as number) - lat0;
    const d2 = dx * dx + dy * dy;
    if (d2 < nearest2) {
      nearest2 = d2;
      nearest = i;
    }
  }
  const seed = edgeValue(c, nearest);
  if (seed < best) best = seed;
  if (best * radius <= stop) return best;
  const xGate = (gates & 1) !== 0;
  const boxGate = (gates & 2) !== 0;
  let gateY = GATE_Y * best;
  let gateX = GATE_X * best;
  let gateBox = best * best;
  let begin = first;
  for (let k = 0; k < rings; k++) {
    const end = (p0 + (ringEnds[ringsAt + k] as number)) << 1;
    let xa = ((c[begin] as number) - lng0) * DEG_TO_RAD * cos0;
    let ya = ((c[begin + 1] as number) - lat0) * DEG_TO_RAD;
    for (let i = begin; i + 2 < end; i += 2) {
      const xb = ((c[i + 2] as number) - lng0) * DEG_TO_RAD * cos0;
      const yb = ((c[i + 3] as number) - lat0) * DEG_TO_RAD;
      const ya0 = ya;
      const xa0 = xa;
      ya = yb;
      xa = xb;
      if ((ya0 > gateY && yb > gateY) || (ya0 < -gateY && yb < -gateY)) continue;
      if (xGate && ((xa0 > gateX && xb > gateX) || (xa0 < -gateX && xb < -gateX))) continue;
      if (boxGate) {
        const bx = xa0 > 0 === xb > 0 ? Math.min(Math.abs(xa0), Math.abs(xb)) : 0;
        const by = ya0 > 0 === yb > 0 ? Math.min(Math.abs(ya0), Math.abs(yb)) : 0;
        if (GATE_BOX * (bx * bx + by * by) > gateBox) continue;
      }
      const v = edgeValue(c, i);
      if (v < best) {
        best = v;
        if (best * radius <= stop) return best;
        gateY = GATE_Y * best;
        gateX = GATE_X * best;
        gateBox = best * best;
      }
    }
    begin = end;
  }
  return best;
}

/**
 * A lower bound (radians, with a relative margin of ≥ 5e-6 below every edge value) of
 * {@link polygonBoundaryRad} from the polygon's box [w, s, e, n] at `box[b ..]` alone: 0 when the point is in
 * the box or near it in longitude. Uses the point of {@link setDistancePoint}.
 */
export function boxLowerBoundRad(box: Float64Array, b: number): number {
  const pt = distancePoint;
  const lng0 = pt[P_LNG] as number;
  const lat0 = pt[P_LAT] as number;
  const west = box[b] as number;
  const south = box[b + 1] as number;
  const east = box[b + 2] as number;
  const north = box[b + 3] as number;
  // Every boundary point is at least |Δφ| away (both value branches are ≥ |Δφ| · (1 − 5e-6)).
  const dLat = lat0 > north ? lat0 - north : lat0 < south ? south - lat0 : 0;
  const byLat = dLat * DEG_TO_RAD * (1 - 1e-5);
  // In longitude: the nearest scanned shift of [west, east]; only while all of it lies within ±90° of P, where
  // the distance to a point Δλ away is ≥ asin(cos φ0 · sin |Δλ|) ≥ cos φ0 · |Δλ| (1 − Δλ²/6) (and the Taylor
  // value ≥ 0.994 |x|).
  let dLng = Number.POSITIVE_INFINITY;
  for (let s = 0; s < 3; s++) {
    const shift = s === 0 ? 0 : s === 1 ? 360 : -360;
    const lo = west - lng0 + shift;
    const hi = east - lng0 + shift;
    if (hi < -180 || lo > 180) continue;
    if (lo < -90 || hi > 90) return byLat;
    const d = lo > 0 ? lo : hi < 0 ? -hi : 0;
    if (d < dLng) dLng = d;
  }
  const a = dLng * DEG_TO_RAD;
  const byLng = 0.95 * (pt[P_COS] as number) * a * (1 - (a * a) / 6);
  return Math.max(byLng, byLat);
}
