/**
 * The exit-buffer outline of a polygon (web/src/map/polygonBuffer.ts): every point of it lies the
 * buffer's distance from the polygon's boundary, for a convex square, a concave L and a hole, and
 * at the latitude of the polygon (a degree of longitude is shorter in Oslo than at the equator).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { outwardBuffer, type Position } from '../../web/src/map/polygonBuffer.ts';

const R = 6_371_008.8;
const DEG = Math.PI / 180;

/** Metres between two positions (haversine). */
function distance([lng1, lat1]: Position, [lng2, lat2]: Position): number {
  const a =
    Math.sin(((lat2 - lat1) * DEG) / 2) ** 2 +
    Math.cos(lat1 * DEG) * Math.cos(lat2 * DEG) * Math.sin(((lng2 - lng1) * DEG) / 2) ** 2;
  return 2 * R * Math.asin(Math.sqrt(a));
}

/** Metres from a position to the nearest point of a ring (sampled finely along each edge). */
function toRing(p: Position, ring: readonly Position[]): number {
  let best = Infinity;
  for (let i = 0; i + 1 < ring.length; i++) {
    const a = ring[i] as Position;
    const b = ring[i + 1] as Position;
    for (let s = 0; s <= 400; s++) {
      const t = s / 400;
      best = Math.min(best, distance(p, [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]));
    }
  }
  return best;
}

/** Every vertex of the outline within 1.5 % of `metres` from the boundary. */
function assertAtDistance(outline: readonly Position[], rings: readonly Position[][], metres: number) {
  for (const p of outline) {
    const d = Math.min(...rings.map((ring) => toRing(p, ring)));
    assert.ok(Math.abs(d - metres) <= metres * 0.015, `${p.join(', ')} is ${d.toFixed(1)} m away`);
  }
}

describe('outwardBuffer', () => {
  test('a convex square in Oslo: one ring, rounded corners, the buffer away everywhere', () => {
    const square: Position[] = [
      [10.75, 59.91],
      [10.76, 59.91],
      [10.76, 59.915],
      [10.75, 59.915],
      [10.75, 59.91],
    ];
    const rings = outwardBuffer([square], 150);
    assert.equal(rings.length, 1);
    const [ring] = rings;
    assert.ok(ring && ring.length > 20, 'arcs at the four corners');
    assert.deepEqual(ring[0], ring[ring.length - 1], 'closed');
    assertAtDistance(ring, [square], 150);
  });

  test('a concave L drawn clockwise: mitred inner corner, still the buffer away', () => {
    const l: Position[] = [
      [13.4, 52.52],
      [13.4, 52.53],
      [13.405, 52.53],
      [13.405, 52.525],
      [13.415, 52.525],
      [13.415, 52.52],
      [13.4, 52.52],
    ];
    const [ring] = outwardBuffer([l], 80);
    assert.ok(ring);
    assertAtDistance(ring, [l], 80);
  });

  test('a hole shrinks by the buffer; a hole the buffer fills is dropped', () => {
    const shell: Position[] = [
      [0, 0],
      [0.02, 0],
      [0.02, 0.02],
      [0, 0.02],
      [0, 0],
    ];
    const hole: Position[] = [
      [0.005, 0.005],
      [0.015, 0.005],
      [0.015, 0.015],
      [0.005, 0.015],
      [0.005, 0.005],
    ];
    const rings = outwardBuffer([shell, hole], 200);
    assert.equal(rings.length, 2);
    assertAtDistance(rings[1] ?? [], [shell, hole], 200);
    assert.equal(outwardBuffer([shell, hole], 1000).length, 1, 'a 1.1 km hole is filled by 1 km');
  });

  test('no buffer, no outline', () => {
    assert.deepEqual(outwardBuffer([], 100), []);
    assert.deepEqual(
      outwardBuffer(
        [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
        0,
      ),
      [],
    );
  });
});
