/**
 * GeofenceIndex.distanceM / withinM: the same values as distanceToFenceM on the fence's geometry, wherever the
 * fence lives (static part with or without its cell grid, overlay, frozen overlay of a running compaction);
 * 0 exactly where `query` says the fence contains the point; withinM(m) ⇔ distanceM ≤ m, exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { distanceToFenceM } from '../../src/geo/distance-to-fence.ts';
import { GeofenceIndex } from '../../src/geo/geofence-index.ts';
import type { FenceGeometry, Position } from '../../src/geo/types.ts';
import { validateGeometry } from '../../src/geo/validate-geometry.ts';
import { boundaryDistanceM } from './distance-reference.ts';
import { lcg, nextDown, nextUp, starPolygon } from './fixtures.ts';

function validated(g: FenceGeometry): FenceGeometry {
  const v = validateGeometry(g);
  if (!v.ok) throw new Error(`fixture invalid: ${JSON.stringify(v)}`);
  return v.geometry;
}

/** Fences in a 0.05° square around (cx, cy): circles, small and large stars (grids from 16 edges), holes. */
function fences(
  rand: () => number,
  n: number,
  prefix: string,
  cx = 13.4,
  cy = 52.5,
): Map<string, FenceGeometry> {
  const out = new Map<string, FenceGeometry>();
  for (let i = 0; i < n; i++) {
    const x = cx + rand() * 0.05;
    const y = cy + rand() * 0.03;
    const id = `${prefix}${i}`;
    if (rand() < 0.3) {
      out.set(id, validated({ type: 'Circle', coordinates: [x, y], radius: 20 + rand() * 500 }));
      continue;
    }
    const vertices = 3 + Math.floor(rand() * (rand() < 0.7 ? 14 : 200));
    out.set(
      id,
      validated(starPolygon(rand, x, y, 40 + rand() * 600, vertices, vertices >= 8 && rand() < 0.3)),
    );
  }
  return out;
}

/** Probe points around the fences, plus vertices and edge midpoints (on the boundary or next to it). */
function probes(rand: () => number, all: Map<string, FenceGeometry>, n: number): Position[] {
  const geometries = [...all.values()];
  const out: Position[] = [];
  for (let i = 0; i < n; i++) {
    const g = geometries[Math.floor(rand() * geometries.length)] as FenceGeometry;
    if (i % 4 === 0 && g.type === 'Polygon') {
      const ring = g.coordinates[Math.floor(rand() * g.coordinates.length)] as Position[];
      const k = Math.floor(rand() * (ring.length - 1));
      const a = ring[k] as Position;
      const b = ring[k + 1] as Position;
      out.push(i % 8 === 0 ? a : [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2]);
    } else {
      const [x, y] = g.type === 'Circle' ? g.coordinates : ((g.coordinates[0] as Position[])[0] as Position);
      out.push([x + (rand() - 0.5) * 0.03, y + (rand() - 0.5) * 0.02]);
    }
  }
  return out;
}

/** Every check of this file, for every (fence, point) pair. */
function checkAll(
  index: GeofenceIndex,
  live: Map<string, FenceGeometry>,
  points: Position[],
  label: string,
): void {
  for (const p of points) {
    const contained = new Set(index.query(p[0], p[1]));
    for (const [id, g] of live) {
      const d = index.distanceM(id, p[0], p[1]);
      assert.equal(d, distanceToFenceM(g, p[0], p[1]), `${label}: ${id} at ${p}`);
      const dist = d as number;
      if (contained.has(id)) assert.equal(dist, 0, `${label}: ${id} contains ${p}`);
      else if (dist === 0) {
        // Only on the boundary (within rounding): the reference agrees.
        assert.ok(
          g.type === 'Polygon' && boundaryDistanceM(p, g.coordinates) < 1e-6,
          `${label}: ${id} at ${p}`,
        );
      }
      for (const m of [0, dist, nextUp(dist), dist > 0 ? nextDown(dist) : 0, 1, 100, 1000]) {
        assert.equal(index.withinM(id, p[0], p[1], m), dist <= m, `${label}: ${id} at ${p} within ${m}`);
      }
    }
  }
}

describe('GeofenceIndex.distanceM and withinM', () => {
  test('static part: equal to distanceToFenceM, 0 exactly where query contains, withinM ⇔ distance ≤ m', () => {
    const rand = lcg(101);
    const live = fences(rand, 120, 'f');
    const index = GeofenceIndex.build([...live].map(([id, geometry]) => ({ id, geometry })));
    const points = probes(rand, live, 60);
    // Before any lookup built the polygons' grids (containment by scanning), then after.
    checkAll(index, live, points.slice(0, 20), 'no grids');
    for (const p of points) index.query(p[0], p[1]);
    checkAll(index, live, points, 'grids');
  });

  test('overlay, replaced and removed fences, and a running compaction (frozen overlay)', () => {
    const rand = lcg(202);
    const live = fences(rand, 80, 's');
    const index = GeofenceIndex.build(
      [...live].map(([id, geometry]) => ({ id, geometry })),
      {
        autoCompact: false,
        compactMin: 10,
        compactRatio: 0,
      },
    );
    // New fences go to the overlay; replacing a static fence tombstones its slot.
    for (const [id, g] of fences(rand, 20, 'o')) {
      index.upsert(id, g);
      live.set(id, g);
    }
    const replaced = fences(rand, 10, 's');
    for (const [id, g] of replaced) {
      index.upsert(id, g);
      live.set(id, g);
    }
    for (const id of ['s20', 's21', 'o3']) {
      assert.equal(index.remove(id), true);
      live.delete(id);
      assert.equal(index.distanceM(id, 13.41, 52.51), null);
      assert.equal(index.withinM(id, 13.41, 52.51, 1e9), false);
    }
    const points = probes(rand, live, 25);
    checkAll(index, live, points, 'overlay');
    // Start a compaction: the overlay is frozen and a new one takes updates; check at several stages.
    let stage = 0;
    while (index.compactStep()) {
      if (stage === 0) {
        for (const [id, g] of fences(rand, 5, 'n')) {
          index.upsert(id, g);
          live.set(id, g);
        }
        index.upsert('o1', live.get('s1') as FenceGeometry);
        live.set('o1', live.get('s1') as FenceGeometry);
      }
      if (stage % 7 === 0) checkAll(index, live, points.slice(0, 6), `compaction step ${stage}`);
      stage++;
    }
    assert.ok(stage > 1);
    checkAll(index, live, points, 'after compaction');
  });

  test('unknown ids, invalid coordinates and metres', () => {
    const index = GeofenceIndex.build([
      { id: 'c', geometry: { type: 'Circle', coordinates: [13.4, 52.5], radius: 100 } },
      { id: 'p', geometry: validated(starPolygon(lcg(1), 13.41, 52.5, 300, 20)) },
    ]);
    assert.equal(index.distanceM('nope', 13.4, 52.5), null);
    assert.equal(index.withinM('nope', 13.4, 52.5, 1e9), false);
    // Both fences contain their centre.
    for (const [id, cx] of [
      ['c', 13.4],
      ['p', 13.41],
    ] as const) {
      for (const [x, y] of [
        [Number.NaN, 52.5],
        [13.4, Number.NaN],
        [200, 52.5],
        [13.4, 91],
      ] as Position[]) {
        assert.ok(Number.isNaN(index.distanceM(id, x, y) as number));
        assert.equal(index.withinM(id, x, y, 1e9), false);
      }
      assert.equal(index.withinM(id, cx, 52.5, Number.NaN), false);
      assert.equal(index.withinM(id, cx, 52.5, -1), false);
      assert.equal(index.withinM(id, cx, 52.5, 0), true);
      assert.equal(index.distanceM(id, cx, 52.5), 0);
    }
    // The circle: 0 inside, the rim distance outside.
    assert.equal(index.distanceM('c', 13.4, 52.5), 0);
    assert.ok(
      Math.abs((index.distanceM('c', 13.4, 52.51) as number) - (0.01 * (Math.PI / 180) * 6_371_008.8 - 100)) <
        1e-6,
    );
  });

  test('withinM(m) ⇔ distanceM ≤ m for random fences, points and buffers, far ones included', () => {
    const rand = lcg(303);
    const live = fences(rand, 60, 'r');
    // A few fences by the antimeridian and near the north pole.
    live.set('am', validated(starPolygon(rand, 179.995, -20, 500, 30)));
    live.set('pole', validated(starPolygon(rand, 40, 89.99, 800, 12)));
    live.set('amc', validated({ type: 'Circle', coordinates: [-179.999, 10], radius: 300 }));
    const ids = [...live.keys()];
    const index = GeofenceIndex.build([...live].map(([id, geometry]) => ({ id, geometry })));
    const centre = (g: FenceGeometry): Position =>
      g.type === 'Circle' ? g.coordinates : ((g.coordinates[0] as Position[])[0] as Position);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: ids.length - 1 }),
        fc.integer({ min: -(2 ** 20), max: 2 ** 20 }),
        fc.integer({ min: -(2 ** 20), max: 2 ** 20 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 2 ** 20 }),
        (k, dx, dy, scale, mk) => {
          const id = ids[k] as string;
          const [x0, y0] = centre(live.get(id) as FenceGeometry);
          // Offsets from ~1 m to ~100 km; longitudes wrapped.
          const reach = 10 ** (scale - 4) / 2 ** 20;
          let x = x0 + dx * reach * 3;
          x = ((((x + 180) % 360) + 360) % 360) - 180;
          const y = Math.max(-90, Math.min(90, y0 + dy * reach));
          const d = index.distanceM(id, x, y) as number;
          assert.equal(d, distanceToFenceM(live.get(id) as FenceGeometry, x, y));
          const m = (mk / 2 ** 20) * 1000;
          for (const metres of [m, d, nextUp(d), d > 0 ? nextDown(d) : 0]) {
            assert.equal(index.withinM(id, x, y, metres), d <= metres, `${id} ${x},${y} ${metres} vs ${d}`);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
