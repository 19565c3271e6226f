import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { intersectSegments, SegmentRelation } from '../../src/geo/segment-intersection.ts';
import { segmentsMeetExact } from './exact-oracle.ts';
import { lcg } from './fixtures.ts';

type Seg = [number, number, number, number];

function rel(a: Seg, b: Seg): { relation: number; x: number; y: number } | null {
  return intersectSegments(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]);
}

describe('intersectSegments', () => {
  const cases: Array<[string, Seg, Seg, number | null, [number, number]?]> = [
    ['proper crossing', [0, 0, 2, 2], [0, 2, 2, 0], SegmentRelation.Cross, [1, 1]],
    ['disjoint parallel', [0, 0, 2, 0], [0, 1, 2, 1], null],
    ['disjoint collinear', [0, 0, 1, 0], [2, 0, 3, 0], null],
    ['collinear touching at an endpoint', [0, 0, 1, 0], [1, 0, 3, 0], SegmentRelation.Touch, [1, 0]],
    ['collinear overlap', [0, 0, 2, 0], [1, 0, 3, 0], SegmentRelation.Overlap, [1, 0]],
    ['collinear containment', [0, 0, 4, 4], [1, 1, 2, 2], SegmentRelation.Overlap, [1, 1]],
    ['vertical collinear overlap', [0, 0, 0, 4], [0, 3, 0, 1], SegmentRelation.Overlap, [0, 1]],
    ['endpoint on the other’s interior (T)', [0, 0, 2, 0], [1, 0, 1, 5], SegmentRelation.Touch, [1, 0]],
    ['shared endpoint', [0, 0, 1, 1], [1, 1, 2, 0], SegmentRelation.Touch, [1, 1]],
    ['line through an endpoint, outside the segment', [0, 0, 1, 0], [2, -1, 2, 1], null],
    ['identical', [0, 0, 1, 1], [0, 0, 1, 1], SegmentRelation.Overlap, [0, 0]],
  ];
  for (const [name, a, b, expected, at] of cases) {
    test(name, () => {
      for (const [p, q] of [
        [a, b],
        [b, a],
      ] as Array<[Seg, Seg]>) {
        const r = rel(p, q);
        if (expected === null) assert.equal(r, null);
        else {
          assert.equal(r?.relation, expected);
          if (at !== undefined && p === a) assert.deepEqual([r?.x, r?.y], at);
        }
      }
    });
  }

  test('agrees with exact arithmetic on random small-integer and near-degenerate segments', () => {
    const rand = lcg(71);
    for (let i = 0; i < 20_000; i++) {
      const g = (): number => (i % 2 === 0 ? Math.floor(rand() * 5) : 0.1 + Math.floor(rand() * 5) * 0.1);
      const a: Seg = [g(), g(), g(), g()];
      const b: Seg = [g(), g(), g(), g()];
      if ((a[0] === a[2] && a[1] === a[3]) || (b[0] === b[2] && b[1] === b[3])) continue;
      const meet = segmentsMeetExact([a[0], a[1]], [a[2], a[3]], [b[0], b[1]], [b[2], b[3]]);
      assert.equal(rel(a, b) !== null, meet, JSON.stringify([a, b]));
    }
  });
});
