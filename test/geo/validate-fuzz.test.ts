import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { pointInPolygon } from '../../src/geo/point-in-polygon.ts';
import type { GeometryValidation } from '../../src/geo/types.ts';
import { validateGeometry } from '../../src/geo/validate-geometry.ts';

const SCHEMA_TYPES = new Set([
  'missing',
  'float_parsing',
  'list_type',
  'too_long',
  'too_short',
  'literal_error',
  'value_error',
  'dict_type',
]);
const REASONS = new Set([
  'unsupported_type',
  'unclosed_ring',
  'too_few_positions',
  'coordinate_out_of_range',
  'self_intersection',
  'ring_intersection',
  'disconnected_interior',
  'hole_outside_shell',
  'overlapping_holes',
  'invalid_radius',
]);

/** The result is exactly one of the three documented shapes. */
function assertShape(r: GeometryValidation): void {
  if (r.ok) {
    assert.deepEqual(Object.keys(r).sort(), ['bbox', 'geometry', 'ok', 'vertexCount']);
    assert.ok(r.geometry.type === 'Polygon' || r.geometry.type === 'Circle');
    assert.equal(r.bbox.length, 4);
    assert.ok(r.bbox.every(Number.isFinite));
    assert.ok(Number.isInteger(r.vertexCount) && r.vertexCount >= 1 && r.vertexCount <= 500);
    return;
  }
  if (r.kind === 'schema') {
    assert.deepEqual(Object.keys(r).sort(), ['errors', 'kind', 'ok']);
    assert.ok(r.errors.length >= 1 && r.errors.length <= 20);
    for (const e of r.errors) {
      assert.ok(SCHEMA_TYPES.has(e.type), e.type);
      assert.ok(Array.isArray(e.loc) && e.loc.every((p) => typeof p === 'string' || typeof p === 'number'));
      assert.equal(typeof e.msg, 'string');
    }
    return;
  }
  assert.equal(r.kind, 'geometry');
  assert.ok(REASONS.has(r.reason), r.reason);
  assert.equal(typeof r.message, 'string');
  if (r.location !== undefined) {
    assert.equal(r.location.length, 2);
    assert.ok(r.location.every(Number.isFinite));
  }
  for (const k of Object.keys(r)) assert.ok(['ok', 'kind', 'reason', 'message', 'location'].includes(k), k);
}

const num = fc.oneof(
  fc.double(),
  fc.double({ min: -200, max: 200, noNaN: true }),
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 180, -180, 90, -90),
);
const junk = fc.oneof(fc.string(), fc.constant(null), fc.boolean(), fc.object(), fc.constant(undefined));
const position = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(num, num) },
  fc.tuple(num, num, num),
  fc.array(fc.oneof(num, junk), { maxLength: 5 }),
  junk,
);
const ring = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.array(position, { maxLength: 12 }).map((r) => (r.length > 0 ? [...r, r[0]] : r)),
  },
  fc.array(position, { maxLength: 12 }),
  junk,
);
const geometryLike = fc.record(
  {
    type: fc.oneof(fc.constantFrom('Polygon', 'Circle', 'Point', 'MultiPolygon', 'polygon', ''), junk, num),
    coordinates: fc.oneof(fc.array(ring, { maxLength: 4 }), position, junk),
    radius: fc.oneof(num, junk),
  },
  { requiredKeys: [] },
);
/** Small-integer polygons: many valid ones and every kind of degenerate topology. */
const gridPoint = fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 }));
const gridPolygon = fc
  .array(fc.array(gridPoint, { minLength: 3, maxLength: 8 }), { minLength: 1, maxLength: 3 })
  .map((rings) => ({ type: 'Polygon', coordinates: rings.map((r) => [...r, r[0]]) }));

describe('validateGeometry never throws and always returns one of the three shapes', () => {
  test('arbitrary values', () => {
    fc.assert(
      fc.property(
        fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true }),
        (v) => {
          assertShape(validateGeometry(v));
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => assertShape(validateGeometry(v))),
      { numRuns: 3000 },
    );
  });

  test('geometry-shaped garbage (NaN, Infinity, junk in every position)', () => {
    fc.assert(
      fc.property(geometryLike, (v) => assertShape(validateGeometry(v))),
      { numRuns: 5000 },
    );
  });

  test('small-integer polygons (degenerate topologies); valid ones really are valid', () => {
    fc.assert(
      fc.property(gridPolygon, (g) => {
        const r = validateGeometry(g);
        assertShape(r);
        if (r.ok && r.geometry.type === 'Polygon') {
          // every vertex of a valid polygon is on its boundary, hence inside
          for (const ringPositions of r.geometry.coordinates) {
            for (const [x, y] of ringPositions) assert.ok(pointInPolygon(x, y, r.geometry));
          }
        }
      }),
      { numRuns: 5000 },
    );
  });

  test('huge and deeply nested arrays', () => {
    const deep: unknown[] = [];
    let cur = deep;
    for (let i = 0; i < 10_000; i++) {
      const next: unknown[] = [];
      cur.push(next);
      cur = next;
    }
    for (const v of [
      { type: 'Polygon', coordinates: deep },
      { type: 'Polygon', coordinates: [deep] },
      { type: 'Polygon', coordinates: [new Array(100_000).fill([1, 2])] },
      { type: 'Polygon', coordinates: new Array(100_000).fill([]) },
      { type: 'Circle', coordinates: deep, radius: 5 },
      // sparse arrays
      { type: 'Polygon', coordinates: [new Array(5)] },
      // biome-ignore lint/suspicious/noSparseArray: a hole in the array is the point of this case
      { type: 'Polygon', coordinates: [[[0, 0], , [1, 1], [0, 0]]] },
    ]) {
      assertShape(validateGeometry(v));
    }
  });

  test('objects with accessors, proxies and odd prototypes', () => {
    const throwing = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        has() {
          throw new Error('trap');
        },
        getOwnPropertyDescriptor() {
          throw new Error('trap');
        },
      },
    );
    const arrayProxy = new Proxy([[0, 0]], {
      get(target, key) {
        if (key === 'length') throw new Error('trap');
        return Reflect.get(target, key);
      },
    });
    for (const v of [
      throwing,
      { type: 'Polygon', coordinates: [arrayProxy] },
      Object.create({ type: 'Polygon', coordinates: [] }),
      Object.assign(Object.create(null), { type: 'Circle', coordinates: [1, 2], radius: 3 }),
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
        __proto__: { radius: 1 },
      },
    ]) {
      assertShape(validateGeometry(v));
    }
  });
});
