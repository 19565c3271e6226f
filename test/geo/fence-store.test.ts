import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { circleInnerBox } from '../../src/geo/circle-inner-box.ts';
import { EARTH_RADIUS_M } from '../../src/geo/constants.ts';
import { slotContains } from '../../src/geo/fence-contains.ts';
import {
  CIRCLE_INDEX_PAD_DEG,
  REC,
  SIZED_CHUNK_BITS,
  STREAM_CHUNK_BITS,
} from '../../src/geo/fence-layout.ts';
import { buildFenceStore, FenceStoreBuilder } from '../../src/geo/fence-store-builder.ts';
import { haversineDistance } from '../../src/geo/haversine.ts';
import { pointInCircle } from '../../src/geo/point-in-circle.ts';
import { pointInPolygon } from '../../src/geo/point-in-polygon.ts';
import { GRID_MIN_EDGES } from '../../src/geo/polygon-grid.ts';
import type { CircleGeometry, PolygonGeometry, Position } from '../../src/geo/types.ts';
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
      assert.equal(store.gridState(0), -1, 'grid pending before the first lookup');
      for (const [x, y] of probesAround(poly, rand)) {
        const got = slotContains(store, 0, x, y);
        assert.equal(got, pointInPolygon(x, y, poly), `${x},${y}`);
      }
      assert.ok((store.gridState(0) as number) > 0, 'grid built on first lookup');
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
      assert.equal((copy.gridState(k) as number) > 0, s % 2 === 0);
      for (const [x, y] of pts) assert.equal(slotContains(copy, k, x, y), slotContains(store, s, x, y));
    }
  });
});

describe('FenceStore circles: the inner box never changes an answer', () => {
  /** Centres worldwide, near the poles and at the antimeridian; radii 1 m .. 100 km. */
  function circles(rand: () => number, n: number): CircleGeometry[] {
    return Array.from({ length: n }, (_, i) => {
      const lat = i % 5 === 0 ? (rand() < 0.5 ? 1 : -1) * (89 + rand()) : rand() * 178 - 89;
      const lng = i % 7 === 0 ? (rand() < 0.5 ? 179.9999 : -179.9999) : rand() * 360 - 180;
      const radius = i % 3 === 0 ? 1 + rand() * 10 : 10 ** (rand() * 5);
      return { type: 'Circle', coordinates: [lng, lat], radius };
    });
  }

  test('inner-box corners are within (1 − 1e-6) · radius; degenerate radii get no box', () => {
    const rand = lcg(65);
    for (const c of circles(rand, 3000)) {
      const [lng, lat] = c.coordinates;
      const [halfLat, halfLng] = circleInnerBox(lat, c.radius, Math.cos((lat * Math.PI) / 180));
      if (halfLat < 0) continue;
      for (const [sx, sy] of [
        [1, 1],
        [1, -1],
        [-1, 1],
        [-1, -1],
      ] as const) {
        const y = Math.max(-90, Math.min(90, lat + sy * halfLat));
        const x = lng + sx * Math.min(halfLng, 180);
        if (x < -180 || x > 180) continue;
        const d = haversineDistance(lng, lat, x, y);
        assert.ok(d <= c.radius * (1 - 1e-6), `corner at ${d} m of a ${c.radius} m circle at ${lat}`);
      }
    }
    assert.deepEqual(circleInnerBox(10, 0.5, Math.cos(0.17)), [-1, -1]);
  });

  test('slotContains equals pointInCircle (haversine ≤ r) for points inside, outside and within ulps of the rim', () => {
    const rand = lcg(66);
    const list = circles(rand, 2000);
    const store = buildFenceStore(list.map((geometry, i) => ({ id: `c${i}`, geometry })));
    let inside = 0;
    list.forEach((c, i) => {
      const [lng, lat] = c.coordinates;
      const deg = (c.radius / EARTH_RADIUS_M) * (180 / Math.PI);
      for (let k = 0; k < 40; k++) {
        const a = rand() * 2 * Math.PI;
        // Around the rim (relative distances 1 ± 1e-12 … 1 ± 1e-3) and anywhere inside the box.
        const f = k < 20 ? 1 + (rand() < 0.5 ? -1 : 1) * 10 ** -(3 + rand() * 9) : rand() * 1.5;
        const y = Math.max(-90, Math.min(90, lat + f * deg * Math.sin(a)));
        const cos = Math.max(1e-9, Math.cos((lat * Math.PI) / 180));
        let x = lng + (f * deg * Math.cos(a)) / cos;
        if (x > 180) x -= 360;
        if (x < -180) x += 360;
        if (!(x >= -180 && x <= 180)) continue;
        const expected = pointInCircle(x, y, c);
        if (expected) inside++;
        assert.equal(slotContains(store, i, x, y), expected, `circle ${i} at ${x},${y}`);
      }
    });
    assert.ok(inside > 10_000, `${inside}`);
    assert.ok(CIRCLE_INDEX_PAD_DEG > 0);
  });
});

describe('FenceStoreBuilder: coordinate chunks', () => {
  test('streamed input fills 2^20-position chunks; polygons never straddle two; answers unchanged', () => {
    const rand = lcg(67);
    const polys = Array.from({ length: 2300 }, () =>
      starPolygon(rand, 13 + rand() * 0.5, 52 + rand() * 0.5, 200, 460 + Math.floor(rand() * 40)),
    );
    const streamed = new FenceStoreBuilder();
    for (const [i, geometry] of polys.entries()) streamed.add(`p${i}`, geometry);
    const store = streamed.finish();
    assert.equal(store.chunkBits, STREAM_CHUNK_BITS);
    assert.ok(store.coords.length >= 2, `${store.coords.length} chunks`);
    const sized = buildFenceStore(polys.map((geometry, i) => ({ id: `p${i}`, geometry })));
    assert.equal(sized.chunkBits, SIZED_CHUNK_BITS);
    assert.equal(sized.coords.length, 1);
    // Polygons at the end of the first chunk and in the second, probed through both stores.
    // rec[5] of a polygon: its first position
    const firstOfSecond = polys.findIndex(
      (_, i) => (store.rec[i * REC + 5] as number) >= 2 ** STREAM_CHUNK_BITS,
    );
    assert.ok(firstOfSecond > 0);
    for (const i of [0, firstOfSecond - 1, firstOfSecond, polys.length - 1]) {
      const poly = polys[i] as PolygonGeometry;
      for (const [x, y] of probesAround(poly, rand).slice(0, 400)) {
        const expected = pointInPolygon(x, y, poly);
        assert.equal(slotContains(store, i, x, y), expected, `streamed ${i} at ${x},${y}`);
        assert.equal(slotContains(sized, i, x, y), expected, `sized ${i} at ${x},${y}`);
      }
    }
    // Copying slots out of a chunked store (compaction) keeps them intact.
    const copy = buildFenceStore([firstOfSecond, firstOfSecond - 1].map((slot) => ({ store, slot })));
    for (const [k, i] of [firstOfSecond, firstOfSecond - 1].entries()) {
      const poly = polys[i] as PolygonGeometry;
      for (const [x, y] of probesAround(poly, rand).slice(0, 200))
        assert.equal(slotContains(copy, k, x, y), pointInPolygon(x, y, poly));
    }
  });
});
