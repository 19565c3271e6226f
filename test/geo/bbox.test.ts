import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bboxWraps, circleBbox, geometryBbox, splitBbox } from '../../src/geo/bbox.ts';
import { EARTH_RADIUS_M } from '../../src/geo/constants.ts';
import { haversineDistance } from '../../src/geo/haversine.ts';
import { lcg } from './fixtures.ts';

/** Whether a box (possibly wrapping) contains a point. */
function boxContains(b: [number, number, number, number], x: number, y: number): boolean {
  if (y < b[1] || y > b[3]) return false;
  return b[0] <= b[2] ? x >= b[0] && x <= b[2] : x >= b[0] || x <= b[2];
}

describe('geometryBbox', () => {
  test('polygon: min/max of the exterior ring, never wrapping', () => {
    assert.deepEqual(
      geometryBbox({
        type: 'Polygon',
        coordinates: [
          [
            [170, -10],
            [179, 5],
            [-179, 20],
            [170, -10],
          ],
        ],
      }),
      [-179, -10, 179, 20],
    );
  });

  test('small circle: latitude ±r/R, longitude widened by 1/cos(lat)', () => {
    const [w, s, e, n] = circleBbox(13.4, 52.5, 1000);
    const dLat = (1000 / EARTH_RADIUS_M) * (180 / Math.PI);
    assert.ok(Math.abs(n - 52.5 - dLat) < 1e-12 && Math.abs(52.5 - s - dLat) < 1e-12);
    const dLng = (e - w) / 2;
    assert.ok(
      dLng > dLat / Math.cos((52.5 * Math.PI) / 180) &&
        dLng < (dLat / Math.cos((52.5 * Math.PI) / 180)) * 1.001,
    );
  });

  test('circle containing the north pole: full longitude range, north = 90', () => {
    const b = circleBbox(10, 89.5, 100_000);
    assert.deepEqual([b[0], b[2], b[3]], [-180, 180, 90]);
    assert.ok(Math.abs(b[1] - (89.5 - (100_000 / EARTH_RADIUS_M) * (180 / Math.PI))) < 1e-9);
    const [w, , e, n] = circleBbox(-120, 89.99, 5000);
    assert.deepEqual([w, e, n], [-180, 180, 90]);
  });

  test('circle containing the south pole: full longitude range, south = −90', () => {
    const [w, s, e] = circleBbox(0, -89.7, 50_000);
    assert.deepEqual([w, s, e], [-180, -90, 180]);
  });

  test('circle across the antimeridian: west > east (RFC 7946 §5.2), split in two for the index', () => {
    const b = circleBbox(179.99, 0, 5000);
    assert.ok(bboxWraps(b));
    assert.ok(b[0] > 179.9 && b[2] < -179.9);
    const [east, west] = splitBbox(b);
    assert.deepEqual(east, [b[0], b[1], 180, b[3]]);
    assert.deepEqual(west, [-180, b[1], b[2], b[3]]);
    assert.equal(splitBbox([1, 2, 3, 4]).length, 1);
  });

  test('every point within the radius lies in the box (random circles, incl. poles and antimeridian)', () => {
    const r = lcg(41);
    for (let i = 0; i < 2000; i++) {
      const lng = i % 4 === 0 ? 179 + r() * 2 - (r() < 0.5 ? 360 : 0) : r() * 360 - 180;
      const lat = i % 5 === 0 ? (r() < 0.5 ? 89 : -89) + r() - 0.5 : r() * 170 - 85;
      const c = { lng: Math.max(-180, Math.min(180, lng)), lat };
      const radius = 1 + r() * 99_999;
      const box = circleBbox(c.lng, c.lat, radius);
      const deg = (radius / EARTH_RADIUS_M) * (180 / Math.PI);
      for (let k = 0; k < 20; k++) {
        const y = Math.max(-90, Math.min(90, c.lat + (r() * 2 - 1) * deg * 1.2));
        let x = c.lng + (r() * 2 - 1) * deg * 60;
        if (x > 180) x -= 360;
        if (x < -180) x += 360;
        if (haversineDistance(c.lng, c.lat, x, y) <= radius)
          assert.ok(boxContains(box, x, y), `${JSON.stringify({ c, radius, x, y, box })}`);
      }
    }
  });
});
