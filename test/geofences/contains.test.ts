/**
 * GET /geofences/contains (contract §3): the workspace's enabled geofences containing a point,
 * answered by the in-memory index. Compared with a brute-force scan over every stored geofence,
 * and checked to reflect this node's writes immediately.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pointInCircle, pointInPolygon } from '../../src/geo/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import {
  circle,
  containing,
  containingIds,
  createGeofence,
  type GeofenceOut,
  lcg,
  type Position,
  polygon,
  rect,
  starRing,
} from './helpers.ts';

function contains(g: GeofenceOut, lng: number, lat: number): boolean {
  return g.geometry.type === 'Circle'
    ? pointInCircle(lng, lat, g.geometry)
    : pointInPolygon(lng, lat, g.geometry);
}

describe('GET /geofences/contains', () => {
  let t: TestApp;
  let token: string;
  let otherToken: string;

  before(async () => {
    // More geofences than the free plan's 50 are created here.
    t = await startIdentityApp({ env: { DEFAULT_PLAN: 'business' } });
    token = (await signUp(t, 'contains')).tokens.access_token;
    otherToken = (await signUp(t, 'contains-other')).tokens.access_token;
  });
  after(async () => t?.close());

  test('matches a brute-force scan of the stored geofences (polygons with holes, circles, disabled)', async () => {
    const rand = lcg(7);
    const fences: GeofenceOut[] = [];
    // 60 fences crowded into a 1° square so that points hit several at once.
    for (let i = 0; i < 60; i++) {
      const cx = 10 + rand();
      const cy = 45 + rand();
      const kind = i % 3;
      const geometry =
        kind === 0
          ? circle(cx, cy, 2_000 + rand() * 30_000)
          : kind === 1
            ? polygon(starRing(rand, cx, cy, 0.05 + rand() * 0.3, 5 + Math.floor(rand() * 40)))
            : polygon(
                starRing(rand, cx, cy, 0.3, 24),
                // A hole well inside the star's minimum radius (0.3 × 0.3), reversed (clockwise).
                starRing(rand, cx, cy, 0.08, 8).reverse(),
              );
      fences.push(await createGeofence(t, { token }, { name: `f${i}`, geometry, enabled: rand() > 0.2 }));
    }
    // The other workspace has a fence over the whole area: it must never appear.
    await createGeofence(
      t,
      { token: otherToken },
      { name: 'foreign', geometry: polygon(rect(9, 44, 12, 47)) },
    );

    const points: Position[] = [];
    for (let i = 0; i < 250; i++) points.push([9.9 + rand() * 1.2, 44.9 + rand() * 1.2]);
    // Boundary points: polygon vertices are inside (contract: boundary is inside).
    for (const g of fences.slice(0, 30)) {
      if (g.geometry.type === 'Polygon') points.push(g.geometry.coordinates[0]?.[1] as Position);
    }
    let hits = 0;
    for (const [lng, lat] of points) {
      const expected = fences
        .filter((g) => g.enabled && contains(g, lng, lat))
        .map((g) => g.id)
        .sort();
      assert.deepEqual(await containingIds(t, { token }, lng, lat), expected, `point ${lng},${lat}`);
      hits += expected.length;
    }
    assert.ok(hits > 100, `the points hit fences (${hits} hits)`);
  });

  test('boundary inside, hole outside, full records newest first, pagination', async () => {
    const square = await createGeofence(
      t,
      { token },
      { name: 'square', geometry: polygon(rect(-60, -30, -50, -20)) },
    );
    t.clock.advance(1000);
    const holed = await createGeofence(
      t,
      { token },
      { name: 'holed', geometry: polygon(rect(-60, -30, -50, -20), rect(-56, -26, -54, -24)) },
    );
    t.clock.advance(1000);
    const round = await createGeofence(t, { token }, { name: 'round', geometry: circle(-55, -25, 100) });

    const centre = await containing(t, { token }, -55, -25);
    assert.deepEqual(
      centre.results.map((g) => g.name),
      ['round', 'square'],
      'inside the hole: not the holed polygon',
    );
    assert.deepEqual(centre.results[1], square, 'full records');
    assert.deepEqual(centre.pagination, { total: 2, limit: 200, offset: 0, has_more: false });
    // On the outer edge, on a corner, and on the hole's edge (the hole's boundary belongs to the polygon).
    assert.deepEqual(await containingIds(t, { token }, -60, -25), [square.id, holed.id].sort());
    assert.deepEqual(await containingIds(t, { token }, -50, -20), [square.id, holed.id].sort());
    assert.deepEqual(await containingIds(t, { token }, -56, -25), [square.id, holed.id].sort());

    const pageOne = await containing(t, { token }, -58, -28, { limit: '1' });
    assert.deepEqual(
      pageOne.results.map((g) => g.name),
      ['holed'],
    );
    assert.deepEqual(pageOne.pagination, { total: 2, limit: 1, offset: 0, has_more: true });
    const pageTwo = await containing(t, { token }, -58, -28, { limit: '1', offset: '1' });
    assert.deepEqual(
      pageTwo.results.map((g) => g.name),
      ['square'],
    );
    assert.equal(round.enabled, true);
  });

  test('reflects create, update, disable, enable and delete immediately', async () => {
    const [lng, lat] = [100.5, 10.5];
    assert.deepEqual(await containingIds(t, { token }, lng, lat), []);
    const g = await createGeofence(t, { token }, { name: 'live', geometry: polygon(rect(100, 10, 101, 11)) });
    assert.deepEqual(await containingIds(t, { token }, lng, lat), [g.id], 'after create');

    const patch = (body: Record<string, unknown>) =>
      call(t, `/geofences/${g.id}`, { token, method: 'PATCH', body }).then((r) => expectStatus(r, 200));
    await patch({ geometry: polygon(rect(102, 10, 103, 11)) });
    assert.deepEqual(await containingIds(t, { token }, lng, lat), [], 'moved away');
    assert.deepEqual(await containingIds(t, { token }, 102.5, 10.5), [g.id], 'at its new place');

    await patch({ enabled: false });
    assert.deepEqual(await containingIds(t, { token }, 102.5, 10.5), [], 'disabled');
    await patch({ geometry: circle(100.5, 10.5, 1000) });
    assert.deepEqual(await containingIds(t, { token }, lng, lat), [], 'a disabled geofence stays out');
    await patch({ enabled: true });
    assert.deepEqual(await containingIds(t, { token }, lng, lat), [g.id], 're-enabled with its new geometry');
    await patch({ name: 'renamed' });
    assert.equal((await containing(t, { token }, lng, lat)).results[0]?.name, 'renamed');

    expectStatus(await call(t, `/geofences/${g.id}`, { token, method: 'DELETE' }), 204);
    assert.deepEqual(await containingIds(t, { token }, lng, lat), [], 'deleted');

    const disabledFromStart = await createGeofence(
      t,
      { token },
      { name: 'off', enabled: false, geometry: circle(lng, lat, 500) },
    );
    assert.deepEqual(await containingIds(t, { token }, lng, lat), [], 'created disabled');
    expectStatus(await call(t, `/geofences/${disabledFromStart.id}`, { token, method: 'DELETE' }), 204);
  });

  test('lng/lat are required and range-checked → 422 with loc under query', async () => {
    const cases: Array<[Record<string, string>, Array<[string, Array<string>]>]> = [
      [{ lng: '180.0001', lat: '0' }, [['less_than_equal', ['query', 'lng']]]],
      [{ lng: '-181', lat: '0' }, [['greater_than_equal', ['query', 'lng']]]],
      [{ lng: '0', lat: '90.5' }, [['less_than_equal', ['query', 'lat']]]],
      [{ lng: '0', lat: '-91' }, [['greater_than_equal', ['query', 'lat']]]],
      [{ lng: 'east', lat: '0' }, [['float_parsing', ['query', 'lng']]]],
      [{ lat: '0' }, [['missing', ['query', 'lng']]]],
      [
        {},
        [
          ['missing', ['query', 'lng']],
          ['missing', ['query', 'lat']],
        ],
      ],
    ];
    for (const [query, expected] of cases) {
      const res = await call(t, '/geofences/contains', { token, query });
      const detail = expectError(res, 422, 'VALIDATION_ERROR', JSON.stringify(query)).detail as Array<{
        type: string;
        loc: string[];
      }>;
      assert.deepEqual(
        detail.map((d) => [d.type, d.loc]),
        expected,
        JSON.stringify(query),
      );
    }
    // The bounds themselves are valid.
    for (const [lng, lat] of [
      [180, 90],
      [-180, -90],
    ] as const) {
      await containing(t, { token }, lng, lat);
    }
  });

  test('is not mistaken for a geofence id, and needs geofences:read', async () => {
    const res = await call(t, '/geofences/contains', { query: { lng: '0', lat: '0' } });
    assert.deepEqual(expectError(res, 401, undefined), { detail: 'Not authenticated' });
  });
});
