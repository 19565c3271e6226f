/**
 * The outline of a polygon grown outward by `metres`: where a device inside a geofence with an
 * exit buffer (contract §4.5) still counts as inside. Drawn as a dashed ring for orientation, not
 * used to decide anything (the server measures the distance to the boundary itself).
 *
 * Why this method: each ring is projected to local metres (equirectangular at the polygon's mean
 * latitude: over a geofence's few kilometres the scale error is far below a pixel), each edge is
 * moved `metres` to the outside, convex corners are joined by an arc (the true buffer's round
 * corner) and concave corners by the crossing of their two moved edges (the true buffer's corner
 * there, as long as both edges are longer than the offset reaches). That is the exact buffer for
 * convex shapes and for concave ones whose notches are wider than twice the buffer, which covers
 * geofences at typical sizes (a buffer of 1..1,000 m around sites of hundreds of metres). A notch
 * narrower than that would leave a small loop in the outline where the true buffer fills the notch;
 * removing it needs a polygon union (a clipping library), more than a drawing aid is worth.
 *
 * Holes are offset into the hole (away from the area); a hole narrower somewhere than twice the
 * buffer is left out whole (the buffer fills at least that part of it).
 *
 * @example outwardBuffer([[[0, 0], [0.01, 0], [0.01, 0.01], [0, 0.01], [0, 0]]], 100)
 *   // one ring ~100 m outside the square, with rounded corners
 */
export type Position = [number, number];

/** Mean Earth radius (metres), as the API uses. */
const EARTH_RADIUS = 6_371_008.8;
const DEG = Math.PI / 180;
/** Arc segments per full turn at a rounded corner: smooth at any zoom a buffer is visible. */
const ARC_STEPS = 64;

interface Point {
  x: number;
  y: number;
}

/** Twice the signed area (positive when counter-clockwise, y up). */
function signedArea2(ring: readonly Point[]): number {
  let sum = 0;
  for (let i = 0; i < ring.length; i++) {
    const a = ring[i] as Point;
    const b = ring[(i + 1) % ring.length] as Point;
    sum += a.x * b.y - b.x * a.y;
  }
  return sum;
}

/** The ring without its closing repeat and without repeated vertices (zero-length edges). */
function openRing(ring: readonly Point[]): Point[] {
  const out: Point[] = [];
  for (const p of ring) {
    const last = out[out.length - 1];
    if (!last || Math.hypot(p.x - last.x, p.y - last.y) > 1e-9) out.push(p);
  }
  const first = out[0];
  const last = out[out.length - 1];
  if (out.length > 1 && first && last && Math.hypot(first.x - last.x, first.y - last.y) <= 1e-9) out.pop();
  return out;
}

/**
 * Moves a ring `d` metres to its right-hand side. With the area kept on the left (shell
 * counter-clockwise, holes clockwise), the right-hand side is always away from the area.
 */
function offsetRight(ring: readonly Point[], d: number): { ring: Point[]; reversed: boolean } {
  const n = ring.length;
  const out: Point[] = [];
  // Where each vertex's output starts and ends: the moved copy of edge i runs from ends[i] to
  // starts[i + 1], and points backwards when the offset is larger than the room on its side.
  const starts: Point[] = [];
  const ends: Point[] = [];
  for (let i = 0; i < n; i++) {
    const from = out.length;
    const prev = ring[(i - 1 + n) % n] as Point;
    const p = ring[i] as Point;
    const next = ring[(i + 1) % n] as Point;
    const e1 = { x: p.x - prev.x, y: p.y - prev.y };
    const e2 = { x: next.x - p.x, y: next.y - p.y };
    const l1 = Math.hypot(e1.x, e1.y);
    const l2 = Math.hypot(e2.x, e2.y);
    // Right-hand normals of the edge arriving at p and of the edge leaving it.
    const n1 = { x: e1.y / l1, y: -e1.x / l1 };
    const n2 = { x: e2.y / l2, y: -e2.x / l2 };
    const cross = e1.x * e2.y - e1.y * e2.x;
    const dot = n1.x * n2.x + n1.y * n2.y;
    if (cross > 1e-12 * l1 * l2) {
      // A left turn: the outside of the corner is convex, rounded by an arc around p from n1 to n2.
      const a1 = Math.atan2(n1.y, n1.x);
      let a2 = Math.atan2(n2.y, n2.x);
      // The normals turn by the same angle as the edges (counter-clockwise for a left turn).
      while (a2 < a1) a2 += 2 * Math.PI;
      const steps = Math.max(1, Math.ceil(((a2 - a1) / (2 * Math.PI)) * ARC_STEPS));
      for (let s = 0; s <= steps; s++) {
        const a = a1 + ((a2 - a1) * s) / steps;
        out.push({ x: p.x + d * Math.cos(a), y: p.y + d * Math.sin(a) });
      }
    } else if (cross < -1e-12 * l1 * l2 && dot > -0.999) {
      // A right turn (concave on the outside): the two moved edges meet at the mitre point.
      const k = d / (1 + dot);
      out.push({ x: p.x + (n1.x + n2.x) * k, y: p.y + (n1.y + n2.y) * k });
    } else {
      // Straight on (or a spike folding back on itself): move the vertex along its normal.
      out.push({ x: p.x + n1.x * d, y: p.y + n1.y * d });
    }
    starts.push(out[from] as Point);
    ends.push(out[out.length - 1] as Point);
  }
  let reversed = false;
  for (let i = 0; i < n; i++) {
    const a = ring[i] as Point;
    const b = ring[(i + 1) % n] as Point;
    const a2 = ends[i] as Point;
    const b2 = starts[(i + 1) % n] as Point;
    if ((b.x - a.x) * (b2.x - a2.x) + (b.y - a.y) * (b2.y - a2.y) < 0) reversed = true;
  }
  return { ring: out, reversed };
}

/** The buffer's rings (the grown shell, then shrunk holes) as closed [lng, lat] rings. */
export function outwardBuffer(rings: readonly (readonly Position[])[], metres: number): Position[][] {
  const shell = rings[0];
  if (!shell || shell.length < 3 || !(metres > 0)) return [];
  // Local metres around the shell's mean position (longitudes unwrapped around its first vertex).
  const lng0 = shell[0]?.[0] ?? 0;
  const lat0 = shell.reduce((sum, p) => sum + p[1], 0) / shell.length;
  const kx = EARTH_RADIUS * DEG * Math.max(Math.cos(lat0 * DEG), 1e-6);
  const ky = EARTH_RADIUS * DEG;
  const unwrap = (lng: number): number => lng - 360 * Math.round((lng - lng0) / 360);
  const toLocal = ([lng, lat]: readonly number[]): Point => ({
    x: (unwrap(lng ?? 0) - lng0) * kx,
    y: ((lat ?? 0) - lat0) * ky,
  });
  const toLngLat = (p: Point): Position => [lng0 + p.x / kx, lat0 + p.y / ky];

  const out: Position[][] = [];
  rings.forEach((ring, index) => {
    let local = openRing(ring.map(toLocal));
    if (local.length < 3) return;
    const area = signedArea2(local);
    const isShell = index === 0;
    // Shell counter-clockwise, holes clockwise: the area on the left of every ring.
    if ((isShell && area < 0) || (!isShell && area > 0)) local = local.reverse();
    const { ring: moved, reversed } = offsetRight(local, metres);
    // An edge of a hole moved past the opposite side: the buffer fills the hole (or the part of it
    // that narrow), and the hole is left out rather than drawn inside out.
    if (!isShell && reversed) return;
    const closed = moved.map(toLngLat);
    const first = closed[0];
    if (first) closed.push([first[0], first[1]]);
    out.push(closed);
  });
  return out;
}
