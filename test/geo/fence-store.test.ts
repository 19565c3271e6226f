import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildFenceStore, slotContains } from '../../src/geo/fence-store.ts';
import { pointInPolygon } from '../../src/geo/point-in-polygon.ts';
import { GRID_MIN_EDGES } from '../../src/geo/polygon-grid.ts';
import type { PolygonGeometry, Position } from '../../src/geo/types.ts';
import { pointInPolygonExact } from './exact-oracle.ts';
import { lcg, nextDown, nextUp, starPolygon } from './fixtures.ts';

function probesAround(poly: PolygonGeometry, rand: () => number): Position[] {
  const out: Position[] = [];
  const shell = poly.coordinates[0] as Position[];
  const xs = shell.map((p) => p[0]);
  const ys = shell.map((p) => p[1]);
  const [w, e, s, n] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  for (let i = 0; i < 300; i++) out.push([w + rand() * (e - w), s + rand() * (n - s)]);
  for (const ring of poly.coordinates) {
    for (let i = 0; i + 1 < ring.length; i++) {
      const a = ring[i] as Position;
      const b = ring[i + 1] as Position;
      const m: Position = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
      // vertices, midpoints and their ulp neighbours, and points level with a vertex (ray through it)
      out.push(a, m, [nextUp(m[0]), m[1]], [m[0], nextDown(m[1])], [w + rand() * (e - w), a[1]]);
    }
  }
  out.push([w, s], [e, n], [w, n], [e, s]);
  return out;
}

describe('FenceStore polygons: cell grid (lazy) and plain scan agree with the exact oracle', () => {
  test('large star polygons with and without holes, near-boundary probes', () => {
    const rand = lcg(61);
    for (let i = 0; i < 60; i++) {
      const vertices = GRID_MIN_EDGES + Math.floor(rand() * 400);
      const poly = starPolygon(
        rand,
        13 + rand(),
        52 + rand(),
        50 + rand() * 500,
        Math.min(vertices, 330),
        i % 2 === 0,
      );
      const store = buildFenceStore([{ id: 'p', geometry: poly }]);
      assert.equal(store.gridState[0], -1, 'grid pending before the first lookup');
      for (const [x, y] of probesAround(poly, rand)) {
        const got = slotContains(store, 0, x, y);
        assert.equal(got, pointInPolygon(x, y, poly), `${x},${y}`);
      }
      assert.ok((store.gridState[0] as number) > 0, 'grid built on first lookup');
    }
  });

  test('a sample checked against BigInt arithmetic', () => {
    const rand = lcg(62);
    for (let i = 0; i < 8; i++) {
      const poly = starPolygon(rand, 13, 52, 300, 100, i % 2 === 0);
      const store = buildFenceStore([{ id: 'p', geometry: poly }]);
      const pts = probesAround(poly, rand);
      for (let k = 0; k < pts.length; k += 7) {
        const [x, y] = pts[k] as Position;
        assert.equal(slotContains(store, 0, x, y), pointInPolygonExact(x, y, poly.coordinates));
      }
    }
  });

  test('axis-aligned polygons with many collinear vertices on cell borders (integer coordinates)', () => {
    // A comb: teeth on integer coordinates, so edges and vertices fall exactly on grid-cell borders.
    const ring: Position[] = [[0, 0]];
    for (let t = 0; t < 40; t++) ring.push([2 * t + 1, 0], [2 * t + 1, 10], [2 * t + 2, 10], [2 * t + 2, 0]);
    ring.push([81, 0], [81, -5], [0, -5], [0, 0]);
    const poly: PolygonGeometry = { type: 'Polygon', coordinates: [ring] };
    const store = buildFenceStore([{ id: 'comb', geometry: poly }]);
    for (let x = -0.5; x <= 81.5; x += 0.25) {
      for (let y = -5.5; y <= 10.5; y += 0.25) {
        if (x < 0 || x > 81 || y < -5 || y > 10) continue;
        assert.equal(slotContains(store, 0, x, y), pointInPolygon(x, y, poly), `${x},${y}`);
      }
    }
  });

  test('points outside the bbox are outside (slotContains checks the box for direct callers)', () => {
    const poly = starPolygon(lcg(63), 13, 52, 300, 100);
    const store = buildFenceStore([{ id: 'p', geometry: poly }]);
    assert.equal(slotContains(store, 0, 14, 52), false);
    assert.equal(slotContains(store, 0, 13, 53), false);
  });

  test('copying slots (compaction) keeps built grids and answers', () => {
    const rand = lcg(64);
    const polys = Array.from({ length: 20 }, () => starPolygon(rand, 13 + rand(), 52 + rand(), 300, 120));
    const store = buildFenceStore(polys.map((geometry, i) => ({ id: `p${i}`, geometry })));
    const pts = polys.flatMap((p) => probesAround(p, rand).slice(0, 80));
    // build grids for the even slots only
    for (let s = 0; s < 20; s += 2) for (const [x, y] of pts) slotContains(store, s, x, y);
    const copy = buildFenceStore(Array.from({ length: 20 }, (_, k) => ({ store, slot: 19 - k })));
    for (let k = 0; k < 20; k++) {
      const s = 19 - k;
      assert.equal(copy.ids[k], `p${s}`);
      assert.equal((copy.gridState[k] as number) > 0, s % 2 === 0);
      for (const [x, y] of pts) assert.equal(slotContains(copy, k, x, y), slotContains(store, s, x, y));
    }
  });
});
