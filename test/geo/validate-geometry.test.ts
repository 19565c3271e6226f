import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { GeometryValidation, Position } from '../../src/geo/types.ts';
import { validateGeometry } from '../../src/geo/validate-geometry.ts';
import { orientExact } from './exact-oracle.ts';
import { lcg, nextDown, nextUp, starRing } from './fixtures.ts';

const square: Position[] = [
  [0, 0],
  [10, 0],
  [10, 10],
  [0, 10],
  [0, 0],
];

function poly(...rings: Position[][]): { type: 'Polygon'; coordinates: Position[][] } {
  return { type: 'Polygon', coordinates: rings };
}

function expectSchema(result: GeometryValidation, type: string, loc: Array<string | number>): void {
  assert.equal(result.ok, false, JSON.stringify(result));
  if (result.ok || result.kind !== 'schema')
    throw new Error(`expected a schema error, got ${JSON.stringify(result)}`);
  assert.ok(
    result.errors.some((e) => e.type === type && JSON.stringify(e.loc) === JSON.stringify(loc)),
    `expected ${type} at ${JSON.stringify(loc)}, got ${JSON.stringify(result.errors)}`,
  );
}

function expectReason(result: GeometryValidation, reason: string, location?: Position): void {
  if (result.ok || result.kind !== 'geometry')
    throw new Error(`expected ${reason}, got ${JSON.stringify(result)}`);
  assert.equal(result.reason, reason, result.message);
  assert.ok(result.message.length > 0);
  if (location !== undefined) assert.deepEqual(result.location, location);
}

function expectOk(result: GeometryValidation): Extract<GeometryValidation, { ok: true }> {
  if (!result.ok) throw new Error(`expected valid, got ${JSON.stringify(result)}`);
  return result;
}

/** A ring with exactly `vertices` vertices (vertices + 1 positions). */
function ringWithVertices(vertices: number): Position[] {
  return starRing(lcg(vertices), 13.4, 52.5, 500, vertices);
}

describe('validateGeometry: schema errors (422)', () => {
  const cases: Array<[string, unknown, string, Array<string | number>]> = [
    ['null', null, 'dict_type', []],
    ['a string', 'Polygon', 'dict_type', []],
    ['an array', [1, 2], 'dict_type', []],
    ['missing type', { coordinates: [square] }, 'missing', ['type']],
    ['missing type and coordinates', {}, 'missing', ['coordinates']],
    ['type not a string', { type: 7, coordinates: [square] }, 'literal_error', ['type']],
    ['missing coordinates', { type: 'Polygon' }, 'missing', ['coordinates']],
    ['coordinates not an array', { type: 'Polygon', coordinates: 'x' }, 'list_type', ['coordinates']],
    ['no rings', { type: 'Polygon', coordinates: [] }, 'too_short', ['coordinates']],
    ['ring not an array', { type: 'Polygon', coordinates: [{}] }, 'list_type', ['coordinates', 0]],
    [
      'position not an array',
      poly([[0, 0], [1, 0], 5 as unknown as Position, [0, 0]]),
      'list_type',
      ['coordinates', 0, 2],
    ],
    [
      'position of 1 number',
      poly([[0, 0], [1, 0], [1] as unknown as Position, [0, 0]]),
      'too_short',
      ['coordinates', 0, 2],
    ],
    [
      'position of 4 numbers',
      poly([[0, 0], [1, 0], [1, 1, 1, 1] as unknown as Position, [0, 0]]),
      'too_long',
      ['coordinates', 0, 2],
    ],
    [
      'string number',
      poly([[0, 0], [1, '0'] as unknown as Position, [1, 1], [0, 0]]),
      'float_parsing',
      ['coordinates', 0, 1, 1],
    ],
    [
      'NaN',
      poly([
        [0, 0],
        [Number.NaN, 0],
        [1, 1],
        [0, 0],
      ]),
      'float_parsing',
      ['coordinates', 0, 1, 0],
    ],
    [
      'Infinity',
      poly([
        [0, 0],
        [1, Number.POSITIVE_INFINITY],
        [1, 1],
        [0, 0],
      ]),
      'float_parsing',
      ['coordinates', 0, 1, 1],
    ],
    [
      'null number',
      poly([[0, 0], [1, null] as unknown as Position, [1, 1], [0, 0]]),
      'float_parsing',
      ['coordinates', 0, 1, 1],
    ],
    [
      'altitude not a number',
      poly([[0, 0], [1, 0, 'x'] as unknown as Position, [1, 1], [0, 0]]),
      'float_parsing',
      ['coordinates', 0, 1, 2],
    ],
    ['circle without radius', { type: 'Circle', coordinates: [13, 52] }, 'missing', ['radius']],
    [
      'circle radius a string',
      { type: 'Circle', coordinates: [13, 52], radius: '100' },
      'float_parsing',
      ['radius'],
    ],
    [
      'circle radius NaN',
      { type: 'Circle', coordinates: [13, 52], radius: Number.NaN },
      'float_parsing',
      ['radius'],
    ],
    [
      'circle centre not an array',
      { type: 'Circle', coordinates: 13, radius: 10 },
      'list_type',
      ['coordinates'],
    ],
    [
      'circle centre too short',
      { type: 'Circle', coordinates: [13], radius: 10 },
      'too_short',
      ['coordinates'],
    ],
    ['circle without coordinates', { type: 'Circle', radius: 10 }, 'missing', ['coordinates']],
  ];
  for (const [name, input, type, loc] of cases) {
    test(`${name} → ${type} at ${JSON.stringify(loc)}`, () =>
      expectSchema(validateGeometry(input), type, loc));
  }

  test('several errors are reported together, each with its own loc', () => {
    const r = validateGeometry(poly([[0, 'a'] as unknown as Position, [Number.NaN, 1], [1, 1], [0, 0]]));
    if (r.ok || r.kind !== 'schema') throw new Error('expected schema errors');
    assert.deepEqual(
      r.errors.map((e) => e.loc),
      [
        ['coordinates', 0, 0, 1],
        ['coordinates', 0, 1, 0],
      ],
    );
  });

  test('the number of reported errors is capped (garbage input gives a bounded response)', () => {
    const ring = Array.from({ length: 400 }, () => ['x', 'y']);
    const r = validateGeometry({ type: 'Polygon', coordinates: [ring] });
    if (r.ok || r.kind !== 'schema') throw new Error('expected schema errors');
    assert.equal(r.errors.length, 20);
  });

  test('exactly 500 vertices (501 positions) is accepted', () => {
    const r = expectOk(validateGeometry(poly(ringWithVertices(500))));
    assert.equal(r.vertexCount, 500);
  });

  test('501 vertices → too_long at coordinates', () => {
    expectSchema(validateGeometry(poly(ringWithVertices(501))), 'too_long', ['coordinates']);
  });

  test('vertices are counted over all rings, each closing position once', () => {
    const shell = ringWithVertices(400);
    const rand = lcg(99);
    const hole100 = starRing(rand, 13.4, 52.5, 50, 100);
    const hole101 = starRing(rand, 13.4, 52.5, 50, 101);
    assert.equal(expectOk(validateGeometry(poly(shell, hole100))).vertexCount, 500);
    expectSchema(validateGeometry(poly(shell, hole101)), 'too_long', ['coordinates']);
  });

  test('the vertex limit is checked on the raw input, before repeated positions are removed', () => {
    const ring = ringWithVertices(499);
    ring.splice(1, 0, ring[1] as Position, ring[1] as Position); // 501 vertices, 2 of them repeats
    expectSchema(validateGeometry(poly(ring)), 'too_long', ['coordinates']);
  });

  test('more than 500 rings → too_long (bounds the work on degenerate input)', () => {
    expectSchema(
      validateGeometry({ type: 'Polygon', coordinates: Array.from({ length: 501 }, () => []) }),
      'too_long',
      ['coordinates'],
    );
  });

  test('a huge array is rejected by the vertex count without inspecting its positions', () => {
    const ring = new Array(1_000_000).fill('junk');
    const t = performance.now();
    expectSchema(validateGeometry({ type: 'Polygon', coordinates: [ring] }), 'too_long', ['coordinates']);
    assert.ok(performance.now() - t < 100);
  });

  test('a throwing getter becomes a value_error instead of an exception', () => {
    const evil = {
      type: 'Polygon',
      get coordinates(): never {
        throw new Error('boom');
      },
    };
    const r = validateGeometry(evil);
    if (r.ok || r.kind !== 'schema') throw new Error('expected schema error');
    assert.equal(r.errors[0]?.type, 'value_error');
  });
});

describe('validateGeometry: geometric errors (400 INVALID_GEOMETRY)', () => {
  for (const type of [
    'Point',
    'LineString',
    'MultiPolygon',
    'MultiLineString',
    'GeometryCollection',
    'polygon',
    'circle',
  ]) {
    test(`type ${type} → unsupported_type`, () =>
      expectReason(validateGeometry({ type, coordinates: [[[0, 0]]] }), 'unsupported_type'));
  }
  test('an unsupported type is rejected without looking at its coordinates', () =>
    expectReason(validateGeometry({ type: 'GeometryCollection', geometries: [] }), 'unsupported_type'));

  test('unclosed ring → unclosed_ring at the first position', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [1, 0],
          [1, 1],
          [0, 1],
        ]),
      ),
      'unclosed_ring',
      [0, 0],
    ));

  test('a ring closed only in altitude-free 2-D is closed (altitude is ignored)', () =>
    void expectOk(
      validateGeometry(
        poly([[0, 0, 5] as unknown as Position, [1, 0], [1, 1], [0, 0, 7] as unknown as Position]),
      ),
    ));

  test('3 positions → too_few_positions', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [1, 0],
          [0, 0],
        ]),
      ),
      'too_few_positions',
    ));
  test('empty ring → too_few_positions', () => expectReason(validateGeometry(poly([])), 'too_few_positions'));
  test('4 positions that are 2 distinct vertices after removing repeats → too_few_positions', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [1, 0],
          [1, 0],
          [0, 0],
        ]),
      ),
      'too_few_positions',
    ));
  test('unclosed is reported before too few positions', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [1, 0],
        ]),
      ),
      'unclosed_ring',
    ));

  const ranges: Array<[string, Position]> = [
    ['lng > 180', [180.000001, 1]],
    ['lng < −180', [-181, 1]],
    ['lat > 90', [1, 90.5]],
    ['lat < −90', [1, -91]],
  ];
  for (const [name, bad] of ranges) {
    test(`${name} → coordinate_out_of_range at the position`, () =>
      expectReason(validateGeometry(poly([[0, 0], bad, [0, 1], [0, 0]])), 'coordinate_out_of_range', bad));
  }
  test('the domain bounds themselves are accepted', () =>
    void expectOk(
      validateGeometry(
        poly([
          [-180, -90],
          [180, -90],
          [180, 90],
          [-180, 90],
          [-180, -90],
        ]),
      ),
    ));

  test('radius 0 → invalid_radius', () =>
    expectReason(validateGeometry({ type: 'Circle', coordinates: [13, 52], radius: 0 }), 'invalid_radius'));
  test('negative radius → invalid_radius', () =>
    expectReason(validateGeometry({ type: 'Circle', coordinates: [13, 52], radius: -5 }), 'invalid_radius'));
  test('radius > 100 000 → invalid_radius', () =>
    expectReason(
      validateGeometry({ type: 'Circle', coordinates: [13, 52], radius: 100_000.001 }),
      'invalid_radius',
    ));
  test('radius below 1 m → invalid_radius (contract: 1..100 000)', () => {
    expectReason(validateGeometry({ type: 'Circle', coordinates: [13, 52], radius: 0.5 }), 'invalid_radius');
    expectReason(
      validateGeometry({ type: 'Circle', coordinates: [13, 52], radius: 0.999 }),
      'invalid_radius',
    );
  });
  test('radius 1 and 100 000 are accepted (1 ≤ r ≤ 100 000)', () => {
    expectOk(validateGeometry({ type: 'Circle', coordinates: [13, 52], radius: 1 }));
    expectOk(validateGeometry({ type: 'Circle', coordinates: [13, 52], radius: 100_000 }));
  });
  test('circle centre out of range → coordinate_out_of_range (before the radius)', () =>
    expectReason(
      validateGeometry({ type: 'Circle', coordinates: [200, 52], radius: 0 }),
      'coordinate_out_of_range',
      [200, 52],
    ));
  test('circle with altitude is accepted and normalised', () => {
    const r = expectOk(validateGeometry({ type: 'Circle', coordinates: [13, 52, 100], radius: 10 }));
    assert.deepEqual(r.geometry, { type: 'Circle', coordinates: [13, 52], radius: 10 });
    assert.equal(r.vertexCount, 1);
  });
});

describe('validateGeometry: self-intersection and ring topology (decided edge cases)', () => {
  test('bow-tie → self_intersection at the crossing point', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [2, 2],
          [2, 0],
          [0, 2],
          [0, 0],
        ]),
      ),
      'self_intersection',
      [1, 1],
    ));

  test('ring touching itself at a vertex (figure eight) → self_intersection at that vertex', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [2, 0],
          [1, 1],
          [2, 2],
          [0, 2],
          [1, 1],
          [0, 0],
        ]),
      ),
      'self_intersection',
      [1, 1],
    ));

  test('vertex lying on a non-adjacent edge → self_intersection at the vertex', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [4, 0],
          [4, 4],
          [2, 0],
          [0, 4],
          [0, 0],
        ]),
      ),
      'self_intersection',
      [2, 0],
    ));

  test('collinear overlapping non-adjacent edges → self_intersection', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [4, 0],
          [4, 2],
          [3, 0],
          [1, 0],
          [0, 2],
          [0, 0],
        ]),
      ),
      'self_intersection',
    ));

  test('spike (an edge folding back onto the previous one) → self_intersection at a vertex of the spike', () => {
    const r = validateGeometry(
      poly([
        [0, 0],
        [4, 0],
        [4, 4],
        [4, 6],
        [4, 5],
        [0, 4],
        [0, 0],
      ]),
    );
    expectReason(r, 'self_intersection');
    assert.ok(
      !r.ok && r.kind === 'geometry' && [4, 5, 6].includes(r.location?.[1] ?? -1) && r.location?.[0] === 4,
    );
  });

  test('a pure spike (tip folds back exactly onto its own edge) → self_intersection at the tip', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [4, 0],
          [4, 4],
          [6, 4],
          [5, 4],
          [0, 4],
          [0, 0],
        ]),
      ),
      'self_intersection',
    ));

  test('zero-area ring (all vertices collinear) → self_intersection', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [1, 1],
          [2, 2],
          [0, 0],
        ]),
      ),
      'self_intersection',
    ));

  test('repeated consecutive positions are allowed and removed', () => {
    const r = expectOk(
      validateGeometry(
        poly([
          [0, 0],
          [0, 0],
          [10, 0],
          [10, 10],
          [10, 10],
          [10, 10],
          [0, 10],
          [0, 0],
          [0, 0],
        ]),
      ),
    );
    assert.deepEqual(r.geometry, poly(square));
    assert.equal(r.vertexCount, 4);
  });

  test('a repeated non-consecutive position is a self-touch → self_intersection', () =>
    expectReason(
      validateGeometry(
        poly([
          [0, 0],
          [4, 0],
          [2, 2],
          [4, 4],
          [0, 4],
          [2, 2],
          [0, 0],
        ]),
      ),
      'self_intersection',
      [2, 2],
    ));

  test('collinear consecutive vertices (no fold-back) are fine', () =>
    void expectOk(
      validateGeometry(
        poly([
          [0, 0],
          [1, 0],
          [2, 0],
          [2, 2],
          [0, 2],
          [0, 0],
        ]),
      ),
    ));

  test('both ring orientations are accepted', () => {
    expectOk(validateGeometry(poly(square)));
    expectOk(validateGeometry(poly([...square].reverse())));
  });

  test('altitude is dropped from the normalised geometry', () => {
    const r = expectOk(validateGeometry(poly(square.map(([x, y]) => [x, y, 34] as unknown as Position))));
    assert.deepEqual(r.geometry, poly(square));
  });

  test('foreign members (bbox, properties) are ignored', () =>
    void expectOk(validateGeometry({ ...poly(square), bbox: [0, 0, 10, 10], crs: 'x' })));

  const hole = (...pts: Position[]): Position[] => [...pts, pts[0] as Position];

  test('a hole strictly inside the shell is valid; the bbox is the shell’s', () => {
    const r = expectOk(validateGeometry(poly(square, hole([2, 2], [4, 2], [4, 4], [2, 4]))));
    assert.deepEqual(r.bbox, [0, 0, 10, 10]);
    assert.equal(r.vertexCount, 8);
  });

  test('hole touching the shell at a single vertex is allowed (OGC)', () =>
    void expectOk(validateGeometry(poly(square, hole([0, 0], [4, 2], [2, 4])))));

  test('hole vertex touching the interior of a shell edge at a single point is allowed', () =>
    void expectOk(validateGeometry(poly(square, hole([5, 0], [6, 2], [4, 2])))));

  test('hole touching the shell at two points → disconnected_interior', () =>
    expectReason(validateGeometry(poly(square, hole([5, 0], [10, 5], [5, 5]))), 'disconnected_interior'));

  test('hole crossing the shell → ring_intersection', () =>
    expectReason(
      validateGeometry(poly(square, hole([8, 2], [12, 2], [12, 4], [8, 4]))),
      'ring_intersection',
      [10, 2],
    ));

  test('hole sharing a piece of edge with the shell → ring_intersection', () =>
    expectReason(validateGeometry(poly(square, hole([2, 0], [4, 0], [4, 2], [2, 2]))), 'ring_intersection'));

  test('hole outside the shell → hole_outside_shell', () =>
    expectReason(
      validateGeometry(poly(square, hole([12, 2], [14, 2], [14, 4]))),
      'hole_outside_shell',
      [12, 2],
    ));

  test('hole outside the shell touching it at one point → hole_outside_shell', () =>
    expectReason(validateGeometry(poly(square, hole([10, 5], [12, 4], [12, 6]))), 'hole_outside_shell'));

  test('hole containing the shell → hole_outside_shell', () =>
    expectReason(
      validateGeometry(poly(square, hole([-1, -1], [11, -1], [11, 11], [-1, 11]))),
      'hole_outside_shell',
    ));

  test('two holes crossing each other → ring_intersection', () =>
    expectReason(
      validateGeometry(
        poly(square, hole([1, 1], [5, 1], [5, 5], [1, 5]), hole([3, 3], [7, 3], [7, 7], [3, 7])),
      ),
      'ring_intersection',
    ));

  test('a hole inside another hole → overlapping_holes', () =>
    expectReason(
      validateGeometry(
        poly(square, hole([1, 1], [8, 1], [8, 8], [1, 8]), hole([3, 3], [5, 3], [5, 5], [3, 5])),
      ),
      'overlapping_holes',
      [3, 3],
    ));

  test('two identical holes → ring_intersection', () =>
    expectReason(
      validateGeometry(poly(square, hole([1, 1], [3, 1], [3, 3]), hole([1, 1], [3, 1], [3, 3]))),
      'ring_intersection',
    ));

  test('two holes touching at one point are allowed', () =>
    void expectOk(
      validateGeometry(poly(square, hole([1, 1], [3, 1], [3, 3]), hole([3, 3], [5, 3], [5, 5]))),
    ));

  test('two holes touching each other at two points → disconnected_interior', () =>
    expectReason(
      validateGeometry(
        poly(square, hole([2, 2], [6, 2], [6, 6], [2, 6]), hole([6, 2], [8, 4], [6, 6], [7, 4])),
      ),
      'disconnected_interior',
    ));

  test('shell and two holes all meeting at one point are allowed (no cycle of touches)', () =>
    void expectOk(
      validateGeometry(poly(square, hole([0, 0], [3, 0.5], [3, 1.5]), hole([0, 0], [0.5, 3], [1.5, 3]))),
    ));

  test('chain shell–hole–hole–shell of single touches → disconnected_interior', () =>
    expectReason(
      validateGeometry(poly(square, hole([0, 5], [3, 4], [3, 6]), hole([3, 6], [10, 5], [4, 7]))),
      'disconnected_interior',
    ));

  test('a self-intersection is reported before a ring crossing found earlier', () =>
    expectReason(
      validateGeometry(
        poly(
          [
            [0, 0],
            [10, 0],
            [10, 10],
            [20, 0],
            [20, 10],
            [0, 10],
            [0, 0],
          ],
          hole([-1, 2], [2, 2], [2, 4]),
        ),
      ),
      'self_intersection',
    ));
});

describe('validateGeometry: exactness on near-degenerate input', () => {
  // Ring A(0,0) B(90,30) C(60,40) D(30,10) E(0,40): D lies exactly on edge A–B (y = x/3). Scaled by 2^−40
  // (exact), then D nudged by one ulp above / below the line: touch, clear, cross — decided exactly.
  const s = 2 ** -40;
  const ring = (dy: number): Position[] => [
    [0, 0],
    [90 * s, 30 * s],
    [60 * s, 40 * s],
    [30 * s, dy],
    [0, 40 * s],
    [0, 0],
  ];
  test('vertex exactly on a non-adjacent sloped edge → self_intersection at the vertex', () =>
    expectReason(validateGeometry(poly(ring(10 * s))), 'self_intersection', [30 * s, 10 * s]));
  test('the same vertex one ulp above the edge → valid', () =>
    void expectOk(validateGeometry(poly(ring(nextUp(10 * s))))));
  test('the same vertex one ulp below the edge → self_intersection (crossing)', () =>
    expectReason(validateGeometry(poly(ring(nextDown(10 * s)))), 'self_intersection'));

  test('a vertex at the double nearest to a line with non-representable slope matches exact arithmetic', () => {
    const rand = lcg(5);
    for (let i = 0; i < 300; i++) {
      const a: Position = [13 + rand() * 0.01, 52 + rand() * 0.01];
      const b: Position = [a[0] + 0.01 + rand() * 0.01, a[1] + rand() * 0.001];
      const t = 0.25 + rand() * 0.5;
      const c: Position = [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]; // rounded onto or next to a–b
      const top = Math.max(a[1], b[1]) + 0.01;
      // a → b → (b.x, top) → c → (a.x, top) → a: c comes back down to (or next to) the edge a–b
      const r = validateGeometry(poly([a, b, [b[0], top], c, [a[0], top], a]));
      const side = orientExact(a[0], a[1], b[0], b[1], c[0], c[1]);
      if (side > 0) expectOk(r);
      else expectReason(r, 'self_intersection');
    }
  });
});
