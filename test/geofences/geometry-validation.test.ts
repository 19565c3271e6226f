/**
 * Geometry validation through HTTP (contract §3): structure → 422 with `loc` under
 * `body.geometry`, geometric validity → 400 INVALID_GEOMETRY with a reason (and a location where
 * there is one), in that order; random JSON as a geometry never produces a 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import { circle, type GeofenceOut, type Position, polygon, rect } from './helpers.ts';

describe('geofence geometry validation over HTTP', () => {
  let t: TestApp;
  let token: string;

  before(async () => {
    t = await startIdentityApp();
    token = (await signUp(t, 'geometry')).tokens.access_token;
  });
  after(async () => t?.close());

  const post = (geometry: unknown) => call(t, '/geofences', { token, body: { name: 'g', geometry } });

  /** A closed ring of `vertices` distinct vertices on a circle (vertices + 1 positions). */
  function regularRing(vertices: number): Position[] {
    const ring: Position[] = [];
    for (let k = 0; k < vertices; k++) {
      const a = (2 * Math.PI * k) / vertices;
      ring.push([10 + Math.cos(a), 50 + Math.sin(a)]);
    }
    ring.push(ring[0] as Position);
    return ring;
  }

  test('500 vertices are accepted; 501 → 422 too_long at body.geometry.coordinates', async () => {
    expectStatus(await post(polygon(regularRing(500))), 201, '500 vertices');
    const detail = expectError(await post(polygon(regularRing(501))), 422, 'VALIDATION_ERROR')
      .detail as Array<{
      type: string;
      loc: Array<string | number>;
    }>;
    assert.equal(detail.length, 1, JSON.stringify(detail));
    assert.equal(detail[0]?.type, 'too_long');
    assert.deepEqual(detail[0]?.loc.slice(0, 3), ['body', 'geometry', 'coordinates']);
    // Counted over all rings: 400 + 101 is over the limit too.
    const shell = regularRing(400).map(([x, y]) => [x * 1, y] as Position);
    const hole: Position[] = regularRing(101).map(([x, y]) => [10 + (x - 10) * 0.5, 50 + (y - 50) * 0.5]);
    const split = expectError(await post(polygon(shell, hole)), 422, 'VALIDATION_ERROR').detail as Array<{
      loc: unknown[];
    }>;
    assert.deepEqual(split[0]?.loc.slice(0, 3), ['body', 'geometry', 'coordinates']);
  });

  test('structural problems → 422, loc under body.geometry', async () => {
    const cases: Array<[string, unknown, string, Array<string | number>]> = [
      ['no coordinates', { type: 'Polygon' }, 'missing', ['body', 'geometry', 'coordinates']],
      ['no type', { coordinates: [] }, 'missing', ['body', 'geometry', 'type']],
      [
        'coordinates not a list',
        { type: 'Polygon', coordinates: 5 },
        'list_type',
        ['body', 'geometry', 'coordinates'],
      ],
      [
        'a coordinate as text',
        polygon([
          [0, 0],
          [1, '0'],
          [1, 1],
          [0, 0],
        ] as never),
        'float_parsing',
        ['body', 'geometry', 'coordinates', 0, 1, 1],
      ],
      [
        'a position with one number',
        polygon([[0, 0], [1], [1, 1], [0, 0]] as never),
        'too_short',
        ['body', 'geometry', 'coordinates', 0, 1],
      ],
      [
        'circle without radius',
        { type: 'Circle', coordinates: [0, 0] },
        'missing',
        ['body', 'geometry', 'radius'],
      ],
      [
        'radius as text',
        { type: 'Circle', coordinates: [0, 0], radius: '5' },
        'float_parsing',
        ['body', 'geometry', 'radius'],
      ],
    ];
    for (const [what, geometry, type, loc] of cases) {
      const detail = expectError(await post(geometry), 422, 'VALIDATION_ERROR', what).detail as Array<{
        type: string;
        loc: unknown;
      }>;
      assert.ok(
        detail.some((d) => d.type === type && JSON.stringify(d.loc) === JSON.stringify(loc)),
        `${what}: ${JSON.stringify(detail)}`,
      );
    }
  });

  test('every geometric reason → 400 INVALID_GEOMETRY with details.reason (and location)', async () => {
    const cases: Array<[string, unknown, string, Position | undefined]> = [
      ['Point', { type: 'Point', coordinates: [0, 0] }, 'unsupported_type', undefined],
      [
        'LineString',
        {
          type: 'LineString',
          coordinates: [
            [0, 0],
            [1, 1],
          ],
        },
        'unsupported_type',
        undefined,
      ],
      ['MultiPolygon', { type: 'MultiPolygon', coordinates: [] }, 'unsupported_type', undefined],
      [
        'unclosed',
        polygon([
          [0, 0],
          [1, 0],
          [1, 1],
          [0, 1],
        ]),
        'unclosed_ring',
        [0, 0],
      ],
      [
        'three positions',
        polygon([
          [0, 0],
          [1, 0],
          [0, 0],
        ]),
        'too_few_positions',
        [0, 0],
      ],
      [
        'longitude 181',
        polygon([
          [0, 0],
          [181, 0],
          [1, 1],
          [0, 0],
        ]),
        'coordinate_out_of_range',
        [181, 0],
      ],
      [
        'latitude -91',
        polygon([
          [0, 0],
          [1, -91],
          [1, 1],
          [0, 0],
        ]),
        'coordinate_out_of_range',
        [1, -91],
      ],
      ['circle centre out of range', circle(0, 95, 10), 'coordinate_out_of_range', [0, 95]],
      [
        'bow-tie',
        polygon([
          [0, 0],
          [2, 2],
          [2, 0],
          [0, 2],
          [0, 0],
        ]),
        'self_intersection',
        [1, 1],
      ],
      [
        'hole outside the shell',
        polygon(rect(0, 0, 1, 1), rect(2, 2, 3, 3)),
        'hole_outside_shell',
        undefined,
      ],
      [
        'hole crossing the shell',
        polygon(rect(0, 0, 2, 2), rect(1, 1, 3, 3)),
        'ring_intersection',
        undefined,
      ],
      [
        'hole inside a hole',
        polygon(rect(0, 0, 10, 10), rect(1, 1, 8, 8), rect(2, 2, 3, 3)),
        'overlapping_holes',
        undefined,
      ],
      [
        'hole touching the shell twice',
        polygon(rect(0, 0, 4, 4), [
          [0, 2],
          [2, 1],
          [4, 2],
          [2, 3],
          [0, 2],
        ]),
        'disconnected_interior',
        undefined,
      ],
      ['radius 0', circle(0, 0, 0), 'invalid_radius', [0, 0]],
      ['radius 0.5', circle(0, 0, 0.5), 'invalid_radius', [0, 0]],
      ['radius -1', circle(0, 0, -1), 'invalid_radius', [0, 0]],
      ['radius 100 001', circle(0, 0, 100_001), 'invalid_radius', [0, 0]],
    ];
    for (const [what, geometry, reason, location] of cases) {
      const body = expectError(await post(geometry), 400, 'INVALID_GEOMETRY', what);
      assert.equal(typeof body.detail, 'string', what);
      assert.equal(body.details?.reason, reason, `${what}: ${JSON.stringify(body)}`);
      if (location) assert.deepEqual(body.details?.location, location, `${what}: location`);
    }
  });

  test('radius bounds 1 and 100 000 are accepted', async () => {
    for (const radius of [1, 100_000]) {
      const g = expectStatus<GeofenceOut>(await post(circle(0, 0, radius)), 201, `radius ${radius}`);
      assert.equal(g.geometry.type === 'Circle' && g.geometry.radius, radius);
    }
  });

  test('structure is checked before geometry: a broken Point is 400, a broken Polygon 422', async () => {
    // An unsupported type is reported without looking at its coordinates (docs/geometry.md).
    const point = expectError(await post({ type: 'Point', coordinates: 'x' }), 400, 'INVALID_GEOMETRY');
    assert.equal(point.details?.reason, 'unsupported_type');
    // A polygon that is both structurally broken and self-intersecting reports the structure.
    expectError(
      await post(
        polygon([
          [0, 0],
          [2, 2],
          [2, 0],
          [0, 2],
          [0, 'x'],
        ] as never),
      ),
      422,
      'VALIDATION_ERROR',
    );
  });

  test('random JSON as geometry: always 201, 400 or 422 — never 500', async () => {
    const num = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.double({ min: -200, max: 200, noNaN: true }),
      fc.integer({ min: -3, max: 3 }),
    );
    const position = fc.oneof({ weight: 6, arbitrary: fc.tuple(num, num) }, fc.array(num, { maxLength: 4 }));
    // Mostly closed rings, so that many inputs get past the structure into the geometric checks.
    const ring = fc
      .tuple(fc.array(position, { maxLength: 8 }), fc.boolean())
      .map(([r, close]) => (close && r.length > 0 ? [...r, r[0]] : r));
    const lng = fc.double({ min: -190, max: 190, noNaN: true });
    const lat = fc.double({ min: -95, max: 95, noNaN: true });
    // Near-valid shapes, so the property also walks the geometric checks and the 201 path.
    const nearValid = fc.oneof(
      fc.record({
        type: fc.constant('Circle'),
        coordinates: fc.tuple(lng, lat),
        radius: fc.double({ min: -10, max: 150_000, noNaN: true }),
      }),
      fc.tuple(fc.tuple(lng, lat), fc.tuple(lng, lat), fc.tuple(lng, lat), fc.tuple(lng, lat)).map((p) => ({
        type: 'Polygon',
        coordinates: [[...p, p[0]]],
      })),
    );
    const geometryLike = fc.oneof(
      nearValid,
      fc.jsonValue(),
      fc.record(
        {
          type: fc.oneof(fc.constantFrom('Polygon', 'Circle', 'Point', 'polygon', ''), fc.jsonValue()),
          coordinates: fc.oneof(fc.array(ring, { maxLength: 3 }), position, fc.jsonValue()),
          radius: fc.oneof(num, fc.jsonValue()),
        },
        { requiredKeys: [] },
      ),
    );
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(geometryLike, async (geometry) => {
        const res = await post(geometry);
        seen.add(res.statusCode);
        return [201, 400, 422].includes(res.statusCode);
      }),
      { numRuns: 250, seed: 20260310 },
    );
    assert.ok(seen.has(201) && seen.has(400) && seen.has(422), `statuses seen: ${[...seen]}`);
  });
});
