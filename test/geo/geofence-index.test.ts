import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GeofenceIndex } from '../../src/geo/geofence-index.ts';
import { pointInCircle } from '../../src/geo/point-in-circle.ts';
import { pointInPolygon } from '../../src/geo/point-in-polygon.ts';
import type { FenceGeometry, Position } from '../../src/geo/types.ts';
import { validateGeometry } from '../../src/geo/validate-geometry.ts';
import { lcg, starPolygon } from './fixtures.ts';

function contains(g: FenceGeometry, x: number, y: number): boolean {
  return g.type === 'Circle' ? pointInCircle(x, y, g) : pointInPolygon(x, y, g);
}

/** Brute force over a Map of live fences (reference semantics). */
function brute(fences: Map<string, FenceGeometry>, x: number, y: number): string[] {
  const out: string[] = [];
  for (const [id, g] of fences) if (contains(g, x, y)) out.push(id);
  return out.sort();
}

function sorted(ids: string[]): string[] {
  return [...ids].sort();
}

/**
 * Dataset-like fences (stars with 4–499 vertices, some with holes, circles 30–600 m) plus awkward ones:
 * circles across the antimeridian and around both poles, tiny and huge polygons (several grid levels).
 */
function makeFence(rand: () => number, i: number): FenceGeometry {
  const kind = i % 50;
  if (kind === 0)
    return {
      type: 'Circle',
      coordinates: [rand() < 0.5 ? 179.995 : -179.995, rand() * 2 - 1],
      radius: 1000 + rand() * 5000,
    };
  if (kind === 1)
    return {
      type: 'Circle',
      coordinates: [rand() * 360 - 180, rand() < 0.5 ? 89.9 : -89.9],
      radius: 20_000 + rand() * 80_000,
    };
  if (kind === 2) return starPolygon(rand, 13 + rand() * 0.2, 52 + rand() * 0.2, 20_000, 40); // huge
  if (kind === 3) return starPolygon(rand, 13 + rand() * 0.2, 52 + rand() * 0.2, 3, 6); // tiny
  const cx = 13 + rand() * 0.2;
  const cy = 52 + rand() * 0.2;
  if (rand() < 0.3) return { type: 'Circle', coordinates: [cx, cy], radius: 30 + rand() * 570 };
  const vertices = rand() < 0.8 ? 4 + Math.floor(rand() * 60) : 64 + Math.floor(rand() * 436);
  return starPolygon(rand, cx, cy, 30 + rand() * 570, vertices, vertices <= 300 && rand() < 0.15);
}

function validated(g: FenceGeometry): FenceGeometry {
  const v = validateGeometry(g);
  if (!v.ok) throw new Error(`fixture invalid: ${JSON.stringify(v)}`);
  return v.geometry;
}

/** Query points: uniform over the cluster, fence vertices (boundary), circle rims, antimeridian, poles. */
function queryPoints(rand: () => number, fences: Map<string, FenceGeometry>, n: number): Position[] {
  const pts: Position[] = [];
  const all = [...fences.values()];
  for (let i = 0; i < n; i++) {
    const k = i % 10;
    const g = all[Math.floor(rand() * all.length)] as FenceGeometry;
    if (k < 5) pts.push([13 + rand() * 0.2, 52 + rand() * 0.2]);
    else if (k === 5 && g.type === 'Polygon') {
      const ring = g.coordinates[Math.floor(rand() * g.coordinates.length)] as Position[];
      pts.push(ring[Math.floor(rand() * (ring.length - 1))] as Position);
    } else if (k === 6 && g.type === 'Circle') {
      const d = (g.radius / 6_371_008.8) * (180 / Math.PI);
      pts.push([g.coordinates[0], Math.min(90, g.coordinates[1] + d)]);
    } else if (k === 7) pts.push([rand() < 0.5 ? 180 : -180, rand() * 2 - 1]);
    else if (k === 8) pts.push([rand() * 360 - 180, rand() < 0.5 ? 90 - rand() * 0.2 : -90 + rand() * 0.2]);
    else pts.push([179.9 + rand() * 0.1 - (rand() < 0.5 ? 359.9 : 0), rand() * 2 - 1]);
  }
  return pts;
}

function assertSameAsBrute(
  index: GeofenceIndex,
  fences: Map<string, FenceGeometry>,
  points: Position[],
): number {
  let hits = 0;
  for (const [x, y] of points) {
    const expected = brute(fences, x, y);
    assert.deepEqual(sorted(index.query(x, y)), expected, `at ${x},${y}`);
    hits += expected.length;
  }
  return hits;
}

describe('GeofenceIndex', () => {
  const rand = lcg(51);
  const fences = new Map<string, FenceGeometry>();
  for (let i = 0; i < 2000; i++) fences.set(`f${i}`, validated(makeFence(rand, i)));

  test('bulk build: query equals brute force on 5 000 points (incl. boundaries, antimeridian, poles)', () => {
    const index = GeofenceIndex.build([...fences].map(([id, geometry]) => ({ id, geometry })));
    assert.equal(index.size, 2000);
    const hits = assertSameAsBrute(index, fences, queryPoints(rand, fences, 5000));
    assert.ok(hits > 1000, `only ${hits} hits: the test points should hit fences often`);
  });

  test('upserts, replacements and removes through the overlay and automatic compactions', () => {
    const live = new Map(fences);
    const index = GeofenceIndex.build(
      [...live].map(([id, geometry]) => ({ id, geometry })),
      { compactMin: 100, compactRatio: 0.05 },
    );
    let next = 2000;
    for (let round = 0; round < 6; round++) {
      for (let k = 0; k < 150; k++) {
        const op = rand();
        const ids = [...live.keys()];
        if (op < 0.4) {
          const id = `f${next++}`;
          const g = validated(makeFence(rand, next));
          live.set(id, g);
          index.upsert(id, g);
        } else if (op < 0.7) {
          const id = ids[Math.floor(rand() * ids.length)] as string;
          const g = validated(makeFence(rand, Math.floor(rand() * 1000)));
          live.set(id, g);
          index.upsert(id, g);
        } else {
          const id = ids[Math.floor(rand() * ids.length)] as string;
          assert.equal(index.remove(id), true);
          live.delete(id);
        }
      }
      assert.equal(index.size, live.size);
      assertSameAsBrute(index, live, queryPoints(rand, live, 800));
    }
    assert.ok(index.stats.compactions >= 2, JSON.stringify(index.stats));
    index.compact();
    assert.deepEqual(
      { overlay: index.stats.overlayFences, tombstones: index.stats.tombstones, size: index.size },
      { overlay: 0, tombstones: 0, size: live.size },
    );
    assertSameAsBrute(index, live, queryPoints(rand, live, 1000));
  });

  test('an empty index, then upserts only (overlay without a static part), then compaction', () => {
    const index = new GeofenceIndex({ autoCompact: false });
    assert.deepEqual(index.query(13.1, 52.1), []);
    const live = new Map<string, FenceGeometry>();
    for (let i = 0; i < 300; i++) {
      const g = validated(makeFence(rand, i));
      live.set(`n${i}`, g);
      index.upsert(`n${i}`, g);
    }
    assertSameAsBrute(index, live, queryPoints(rand, live, 1000));
    assert.equal(index.stats.staticFences, 0);
    index.compact();
    assert.equal(index.stats.staticFences, 300);
    assertSameAsBrute(index, live, queryPoints(rand, live, 1000));
    for (const id of [...live.keys()]) index.remove(id);
    assert.equal(index.size, 0);
    assert.deepEqual(index.query(13.1, 52.1), []);
    index.compact();
    assert.equal(index.size, 0);
  });

  test('has / size / remove semantics; duplicate ids in build: the last one wins', () => {
    const a: FenceGeometry = { type: 'Circle', coordinates: [10, 10], radius: 1000 };
    const b: FenceGeometry = { type: 'Circle', coordinates: [20, 20], radius: 1000 };
    const index = GeofenceIndex.build([
      { id: 'x', geometry: a },
      { id: 'x', geometry: b },
    ]);
    assert.equal(index.size, 1);
    assert.deepEqual(index.query(10, 10), []);
    assert.deepEqual(index.query(20, 20), ['x']);
    assert.equal(index.has('x'), true);
    assert.equal(index.remove('x'), true);
    assert.equal(index.remove('x'), false);
    assert.equal(index.has('x'), false);
    assert.equal(index.size, 0);
    index.upsert('x', a);
    index.upsert('x', a);
    assert.equal(index.size, 1);
    assert.deepEqual(index.query(10, 10), ['x']);
  });

  test('boundary is inside: polygon vertices and edges, circle rim', () => {
    const square: FenceGeometry = {
      type: 'Polygon',
      coordinates: [
        [
          [1, 1],
          [3, 1],
          [3, 3],
          [1, 3],
          [1, 1],
        ],
      ],
    };
    const index = GeofenceIndex.build([{ id: 'sq', geometry: square }]);
    for (const p of [
      [1, 1],
      [2, 1],
      [3, 2.5],
      [1, 3],
      [2, 2],
    ] as Position[]) {
      assert.deepEqual(index.query(p[0], p[1]), ['sq'], `${p}`);
    }
    for (const p of [
      [0.999999, 2],
      [2, 3.000001],
    ] as Position[]) {
      assert.deepEqual(index.query(p[0], p[1]), [], `${p}`);
    }
  });

  test('out-of-range and non-finite query coordinates return []', () => {
    const index = GeofenceIndex.build([
      { id: 'c', geometry: { type: 'Circle', coordinates: [179.99, 0], radius: 5000 } },
    ]);
    assert.deepEqual(index.query(-179.99, 0), ['c']); // across the antimeridian
    for (const [x, y] of [
      [Number.NaN, 0],
      [0, Number.NaN],
      [180.0001, 0],
      [-181, 0],
      [0, 90.5],
      [Number.POSITIVE_INFINITY, 0],
    ] as Position[]) {
      assert.deepEqual(index.query(x, y), []);
    }
  });

  test('approxHeapBytes grows with the data', () => {
    const small = GeofenceIndex.build([...fences].slice(0, 100).map(([id, geometry]) => ({ id, geometry })));
    const big = GeofenceIndex.build([...fences].map(([id, geometry]) => ({ id, geometry })));
    assert.ok(big.approxHeapBytes() > small.approxHeapBytes());
    assert.ok(small.approxHeapBytes() > 0);
  });
});

describe('GeofenceIndex: lookup paths', () => {
  const rand = lcg(52);
  const fences = new Map<string, FenceGeometry>();
  for (let i = 0; i < 1500; i++) fences.set(`g${i}`, validated(makeFence(rand, i)));
  const entries = () => [...fences].map(([id, geometry]) => ({ id, geometry }));

  test('queryInto equals query and reuses the caller’s array (growing and shrinking it)', () => {
    const index = GeofenceIndex.build(entries(), { autoCompact: false });
    for (let i = 0; i < 40; i++) index.upsert(`o${i}`, validated(makeFence(rand, i + 7))); // overlay hits too
    const out: string[] = ['stale', 'stale', 'stale', 'stale', 'stale'];
    let nonEmpty = 0;
    for (const [x, y] of queryPoints(rand, fences, 3000)) {
      const n = index.queryInto(x, y, out);
      assert.equal(n, out.length);
      assert.deepEqual(sorted(out), sorted(index.query(x, y)), `at ${x},${y}`);
      if (n > 0) nonEmpty++;
    }
    assert.ok(nonEmpty > 300);
    assert.equal(index.queryInto(Number.NaN, 0, out), 0);
    assert.deepEqual(out, []);
  });

  test('a streamed build (generator) equals the array build; repeated ids: the last one wins', () => {
    const list = entries();
    const replaced = validated(makeFence(rand, 3));
    function* stream(): Generator<{ id: string; geometry: FenceGeometry }> {
      yield { id: 'g7', geometry: replaced }; // replaced below by the original g7
      yield* list;
      yield { id: 'g11', geometry: replaced }; // replaces g11
    }
    const expected = new Map(fences);
    expected.set('g11', replaced);
    const streamed = GeofenceIndex.build(stream());
    assert.equal(streamed.size, fences.size);
    assertSameAsBrute(streamed, expected, queryPoints(rand, expected, 2000));
    const fromArray = GeofenceIndex.build([
      { id: 'g7', geometry: replaced },
      ...list,
      { id: 'g11', geometry: replaced },
    ]);
    assert.equal(fromArray.size, fences.size);
    assertSameAsBrute(fromArray, expected, queryPoints(rand, expected, 2000));
  });

  test('boxes and points exactly on grid-cell lines (the per-cell quantized pre-filter is conservative)', () => {
    // Squares whose sides lie on multiples of 2^-7° and 2^-8° (cell lines of the levels used here),
    // probed at those lines, their ulp neighbours and the corners.
    const squares = new Map<string, FenceGeometry>();
    const lines: number[] = [];
    for (let k = 0; k < 40; k++) {
      const step = k % 2 === 0 ? 2 ** -7 : 2 ** -8;
      const x0 = 13 + Math.floor(rand() * 64) * step;
      const y0 = 52 + Math.floor(rand() * 64) * step;
      const w = (1 + Math.floor(rand() * 4)) * step;
      squares.set(`s${k}`, {
        type: 'Polygon',
        coordinates: [
          [
            [x0, y0],
            [x0 + w, y0],
            [x0 + w, y0 + w],
            [x0, y0 + w],
            [x0, y0],
          ],
        ],
      });
      lines.push(x0, x0 + w, y0, y0 + w);
    }
    const index = GeofenceIndex.build([...squares].map(([id, geometry]) => ({ id, geometry })));
    const pts: Position[] = [];
    const xs = lines.filter((v) => v < 40);
    const ys = lines.filter((v) => v > 40);
    for (let i = 0; i < 3000; i++) {
      const x = xs[Math.floor(rand() * xs.length)] as number;
      const y = ys[Math.floor(rand() * ys.length)] as number;
      const dx = [0, 2 ** -40, -(2 ** -40)][i % 3] as number;
      pts.push([x + dx, y], [x, y - dx]);
    }
    assertSameAsBrute(index, squares, pts);
  });
});
