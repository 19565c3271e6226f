/**
 * Devices walking across geofence edges, the workload that makes an exit buffer (contract §4.5) do
 * its work: device d belongs to geofence d of the INGEST-10K set and, step after step, reports a
 * point inside it, then one just outside (half the buffer beyond the boundary: an exit that the
 * buffer holds back), then one well outside (three buffers beyond the fence's farthest boundary
 * point: the exit happens). Without a buffer that cycle makes an enter and an exit at the near
 * step; with one, the same enter and exit, the exit one step later. Both runs produce as many
 * events (but for geofences overlapping the walked one), so comparing them measures the rule's
 * evaluation (a distance to the geometry at every outside step) and not fewer database writes.
 *
 * The points lie on a ray from the fence's centre: through a polygon vertex (the INGEST-10K polygons
 * are star-shaped around their centre, so the ray leaves the polygon once, at that vertex) or at an
 * angle of a circle. The centres of polygons are not in the data set's output, so `fenceCentres`
 * replays its generator (checked against `fences()`, so a changed generator fails loudly).
 */
// @ts-expect-error: the shared workload generator is plain JavaScript without types.
import { fences, REGION, rng } from '../../../shared/bench/dataset.mjs';
import type { FenceGeometry } from '../../src/geo/index.ts';
import { distanceToFenceM } from '../../src/geo/index.ts';

/** The data set's metres per degree of latitude (its polygons are laid out with it). */
const M_PER_DEG = 111_320;

export type WalkPhase = 'inside' | 'near' | 'far';
export const WALK_PHASES: readonly WalkPhase[] = ['inside', 'near', 'far'];

export interface WalkFence {
  geometry: FenceGeometry;
  centre: [number, number];
  /** Metres from the centre to the farthest boundary point. */
  reach: number;
}

/** The first `n` fences of `fences(n, seed)` with their centres. */
export function walkFences(n: number, seed: number): WalkFence[] {
  const rows = (fences as (n: number, seed: number) => Array<{ geometry: FenceGeometry }>)(n, seed);
  const centres = fenceCentres(n, seed);
  return rows.map((row, i) => {
    const centre = centres[i] as { centre: [number, number]; firstVertex: [number, number] | null };
    const g = row.geometry;
    const first = g.type === 'Circle' ? g.coordinates : (g.coordinates[0]?.[0] as [number, number]);
    const expected = centre.firstVertex ?? centre.centre;
    if (first[0] !== expected[0] || first[1] !== expected[1]) {
      throw new Error(`edge walk: fence ${i} differs from the data set's generator; update fenceCentres`);
    }
    return { geometry: g, centre: centre.centre, reach: reachOf(g, centre.centre) };
  });
}

function reachOf(g: FenceGeometry, [cx, cy]: [number, number]): number {
  if (g.type === 'Circle') return g.radius;
  const kx = M_PER_DEG * Math.cos((cy * Math.PI) / 180);
  let reach = 0;
  for (const [x, y] of g.coordinates[0] as Array<[number, number]>) {
    reach = Math.max(reach, Math.hypot((x - cx) * kx, (y - cy) * M_PER_DEG));
  }
  return reach;
}

/** Replays dataset.mjs `fences()`: each fence's centre and, for a polygon, its first vertex. */
function fenceCentres(
  n: number,
  seed: number,
): Array<{ centre: [number, number]; firstVertex: [number, number] | null }> {
  const r = (rng as (seed: number) => () => number)(seed);
  const region = REGION as { lng0: number; lat0: number; spanLng: number; spanLat: number };
  const out: Array<{ centre: [number, number]; firstVertex: [number, number] | null }> = [];
  for (let i = 0; i < n; i++) {
    const cx = region.lng0 + r() * region.spanLng;
    const cy = region.lat0 + r() * region.spanLat;
    const radius = 30 + r() * 570;
    const kx = M_PER_DEG * Math.cos((cy * Math.PI) / 180);
    if (r() < 0.3) {
      out.push({ centre: [cx, cy], firstVertex: null });
      continue;
    }
    const v = r() < 0.8 ? 4 + Math.floor(r() * 60) : 64 + Math.floor(r() * 436);
    const angles = Array.from({ length: v }, (_, k) => ((k + 0.8 * r()) * 2 * Math.PI) / v);
    const radii = angles.map(() => radius * (0.3 + 0.7 * r()));
    const a0 = angles[0] as number;
    const r0 = radii[0] as number;
    out.push({
      centre: [cx, cy],
      firstVertex: [cx + (r0 * Math.cos(a0)) / kx, cy + (r0 * Math.sin(a0)) / M_PER_DEG],
    });
  }
  return out;
}

export function phaseOf(step: number): WalkPhase {
  return WALK_PHASES[step % WALK_PHASES.length] as WalkPhase;
}

/** Where device `d` (walking fence `fence`) reports at `step`, with a buffer of `bufferM` metres. */
export function walkPoint(fence: WalkFence, d: number, step: number, bufferM: number): [number, number] {
  const [cx, cy] = fence.centre;
  const kx = M_PER_DEG * Math.cos((cy * Math.PI) / 180);
  const g = fence.geometry;
  // Unit direction (in metres) and the distance from the centre to the boundary along it.
  let ux: number;
  let uy: number;
  let edge: number;
  // The farthest boundary point from the centre: three buffers beyond it is beyond the buffer everywhere.
  let reach: number;
  if (g.type === 'Circle') {
    // Each step around the circle at a new angle (the golden angle apart).
    const angle = d * 0.61803 + Math.floor(step / WALK_PHASES.length) * 2.39996;
    ux = Math.cos(angle);
    uy = Math.sin(angle);
    edge = g.radius;
    reach = edge;
  } else {
    const ring = g.coordinates[0] as Array<[number, number]>;
    const vertices = ring.length - 1;
    const [vx, vy] = ring[(d + Math.floor(step / WALK_PHASES.length) * 7) % vertices] as [number, number];
    const mx = (vx - cx) * kx;
    const my = (vy - cy) * M_PER_DEG;
    edge = Math.hypot(mx, my);
    ux = mx / edge;
    uy = my / edge;
    reach = fence.reach;
  }
  const phase = phaseOf(step);
  const along = phase === 'inside' ? edge / 2 : phase === 'near' ? edge + bufferM / 2 : reach + 3 * bufferM;
  return [cx + (ux * along) / kx, cy + (uy * along) / M_PER_DEG];
}

export interface WalkCheck {
  /** Points checked (one cycle of every device). */
  points: number;
  /** Of the near points, those within the buffer and outside the geofence (the buffer holds them). */
  nearHeld: number;
  near: number;
  /** Of the far points, those beyond the buffer (the exit happens). */
  farBeyond: number;
  far: number;
  /** Of the inside points, those inside. */
  insideInside: number;
  inside: number;
}

/**
 * How many of one cycle's points land where the walk means them to, by the service's own distance
 * to the geometry: the figure that shows the bench exercises the buffer.
 */
export function checkWalk(walkers: readonly WalkFence[], bufferM: number): WalkCheck {
  const c: WalkCheck = { points: 0, nearHeld: 0, near: 0, farBeyond: 0, far: 0, insideInside: 0, inside: 0 };
  walkers.forEach((fence, d) => {
    for (let step = 0; step < WALK_PHASES.length; step++) {
      const [lng, lat] = walkPoint(fence, d, step, bufferM);
      const m = distanceToFenceM(fence.geometry, lng, lat);
      c.points++;
      const phase = phaseOf(step);
      if (phase === 'inside') {
        c.inside++;
        if (m === 0) c.insideInside++;
      } else if (phase === 'near') {
        c.near++;
        if (m > 0 && m <= bufferM) c.nearHeld++;
      } else {
        c.far++;
        if (m > bufferM) c.farBeyond++;
      }
    }
  });
  return c;
}
