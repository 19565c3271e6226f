/**
 * distanceToFenceM against an independent brute-force reference (distance-reference.ts: unit vectors, dense
 * sampling + golden section along every edge), closed-form cases worked out by hand, and Turf's
 * pointToPolygonDistance where Turf's great-circle edges are within millimetres of our straight lng/lat edges.
 * The error bound checked is the one documented in docs/geometry.md ("Distance to a fence"): the value is never
 * below the true distance (beyond 2e-9 relative + 1 µm of rounding) and above it by at most
 * 0.125 · tan²φ · (d/R)² · d while tan φ · d/R ≤ 0.1.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pointToPolygonDistance } from '@turf/point-to-polygon-distance';
import fc from 'fast-check';
import { EARTH_RADIUS_M } from '../../src/geo/constants.ts';
import { distanceToFenceM } from '../../src/geo/distance-to-fence.ts';
import { haversineDistance } from '../../src/geo/haversine.ts';
import { pointInCircle } from '../../src/geo/point-in-circle.ts';
import { pointInPolygon } from '../../src/geo/point-in-polygon.ts';
import type { CircleGeometry, PolygonGeometry, Position } from '../../src/geo/types.ts';
import { validateGeometry } from '../../src/geo/validate-geometry.ts';
import { boundaryDistanceM, vectorDistanceM } from './distance-reference.ts';
import { lcg, nextDown, nextUp, starPolygon } from './fixtures.ts';

const R = EARTH_RADIUS_M;
const RAD = Math.PI / 180;

function poly(...rings: Position[][]): PolygonGeometry {
  const v = validateGeometry({ type: 'Polygon', coordinates: rings });
  assert.ok(v.ok, JSON.stringify(v));
  return v.geometry as PolygonGeometry;
}

function box(w: number, s: number, e: number, n: number): Position[] {
  return [
    [w, s],
    [e, s],
    [e, n],
    [w, n],
    [w, s],
  ];
}

/** The documented bound on `got − ref` for a point at latitude `lat`, `ref` metres from the boundary. */
function upperBound(lat: number, ref: number): number {
  const t = Math.tan(Math.abs(lat) * RAD);
  return 0.13 * t * t * (ref / R) ** 2 * ref + 2e-9 * ref + 1e-6;
}

function assertWithinBound(got: number, ref: number, lat: number, what: string): void {
  const err = got - ref;
  assert.ok(err >= -(2e-9 * ref + 1e-6), `${what}: ${got} is below the reference ${ref}`);
  assert.ok(err <= upperBound(lat, ref), `${what}: ${got} vs reference ${ref} (error ${err})`);
}

/** A point `metres` from (lng, lat) at bearing `angle` (local flat approximation; longitude wrapped). */
function offset(lng: number, lat: number, metres: number, angle: number): Position {
  const y = Math.max(-90, Math.min(90, lat + (metres * Math.sin(angle)) / (R * RAD)));
  let x = lng + (metres * Math.cos(angle)) / (R * RAD * Math.cos(lat * RAD));
  x = ((((x + 180) % 360) + 360) % 360) - 180;
  return [x, y];
}

describe('distanceToFenceM: closed-form cases', () => {
  test('due north and due south of an edge along a parallel: the meridian arc', () => {
    for (const lat of [-60, -10, 0, 37.5, 52.5, 75]) {
      const g = poly(box(13.4, lat, 13.42, lat + 0.01));
      for (const d of [1e-6, 0.0001, 0.001, 0.005]) {
        // Due north of the northern edge, due south of the southern one: the nearest point is straight across.
        const north = distanceToFenceM(g, 13.41, lat + 0.01 + d);
        const south = distanceToFenceM(g, 13.41, lat - d);
        const arc = d * RAD * R;
        assert.ok(Math.abs(north - arc) <= 1e-9 * arc + 1e-9, `${lat} ${d}: ${north} vs ${arc}`);
        assert.ok(Math.abs(south - arc) <= 1e-9 * arc + 1e-9, `${lat} ${d}: ${south} vs ${arc}`);
      }
    }
  });

  test('due east of an edge along a meridian: the distance to that meridian’s great circle', () => {
    // The nearest point of a meridian lies slightly poleward of the point; its distance is asin(cos φ sin Δλ).
    for (const lat of [-70, -45, 0, 30, 52.5, 60, 80]) {
      const g = poly(box(10, lat - 0.05, 10.01, lat + 0.05));
      for (const metres of [0.5, 10, 100, 1000]) {
        const dLng = metres / (R * RAD * Math.cos(lat * RAD));
        const got = distanceToFenceM(g, 10.01 + dLng, lat);
        const exact = Math.asin(Math.cos(lat * RAD) * Math.sin(dLng * RAD)) * R;
        assertWithinBound(got, exact, lat, `${lat}° ${metres} m`);
      }
    }
  });

  test('nearest to a vertex: the great-circle distance to that vertex', () => {
    const g = poly(box(13.4, 52.5, 13.42, 52.51));
    for (const metres of [0.01, 3, 250, 1000]) {
      // North-east of the north-east corner, diagonally away from both edges.
      const p = offset(13.42, 52.51, metres, Math.PI / 4);
      const got = distanceToFenceM(g, p[0], p[1]);
      const exact = vectorDistanceM(p, [13.42, 52.51]);
      assert.ok(Math.abs(got - exact) <= 2e-9 * exact + 1e-9, `${metres}: ${got} vs ${exact}`);
      assert.ok(Math.abs(got - haversineDistance(13.42, 52.51, p[0], p[1])) <= 2e-9 * exact + 1e-9);
    }
  });

  test('a point in a hole is outside: its distance is to the hole’s boundary', () => {
    const g = poly(box(13.4, 52.5, 13.44, 52.54), box(13.41, 52.51, 13.43, 52.53));
    // 0.002° south of the hole's northern edge, in the middle: nearest is straight north.
    assert.equal(pointInPolygon(13.42, 52.528, g), false);
    const got = distanceToFenceM(g, 13.42, 52.528);
    const arc = 0.002 * RAD * R;
    assert.ok(Math.abs(got - arc) <= 1e-9 * arc, `${got} vs ${arc}`);
    // Between the hole and the shell the point is inside: 0.
    assert.equal(distanceToFenceM(g, 13.405, 52.52), 0);
    // On the hole's boundary: inside, 0.
    assert.equal(distanceToFenceM(g, 13.42, 52.53), 0);
    assert.equal(distanceToFenceM(g, 13.41, 52.51), 0);
  });

  test('across the antimeridian: longitudes are unwrapped relative to the point', () => {
    // A fence whose east edge lies on 180°; a point just west of −180° (i.e. east of the edge).
    const east = poly(box(179.99, -0.01, 180, 0.01));
    for (const d of [0.00001, 0.001, 0.005]) {
      const got = distanceToFenceM(east, -180 + d, 0.002);
      const exact = Math.asin(Math.cos(0.002 * RAD) * Math.sin(d * RAD)) * R;
      assertWithinBound(got, exact, 0.002, `east ${d}`);
      // The same with the fence on the other side of the line.
      const west = poly(box(-180, -0.01, -179.99, 0.01));
      assertWithinBound(distanceToFenceM(west, 180 - d, 0.002), exact, 0.002, `west ${d}`);
    }
    // −180° and 180° are the same meridian: a point on −180° is outside the planar polygon whose edge lies on
    // 180° (polygons never wrap), yet 0 m from that edge.
    assert.equal(pointInPolygon(-180, 0, east), false);
    assert.equal(distanceToFenceM(east, -180, 0), 0);
    const nearVertex = poly([
      [179.999, 10],
      [179.999, 10.01],
      [179.98, 10.005],
      [179.999, 10],
    ]);
    const p: Position = [-179.999, 10.005];
    assertWithinBound(
      distanceToFenceM(nearVertex, p[0], p[1]),
      boundaryDistanceM(p, nearVertex.coordinates),
      10,
      'v',
    );
    // A fence spanning most longitudes: both unwrappings are scanned.
    const wide = poly(box(-179, 5, 179, 5.001));
    const q: Position = [179.5, 5.0005];
    assertWithinBound(distanceToFenceM(wide, q[0], q[1]), boundaryDistanceM(q, wide.coordinates), 5, 'wide');
    const q2: Position = [-179.5, 5.0005];
    assertWithinBound(
      distanceToFenceM(wide, q2[0], q2[1]),
      boundaryDistanceM(q2, wide.coordinates),
      5,
      'wide',
    );
  });

  test('near and at a pole', () => {
    // An edge along the parallel 89.98°; the point due north of it, and across the pole from it.
    const g = poly([
      [-10, 89.98],
      [10, 89.98],
      [0, 89.97],
      [-10, 89.98],
    ]);
    const north = distanceToFenceM(g, 0, 89.99);
    assert.ok(Math.abs(north - 0.01 * RAD * R) <= 1e-6, `${north}`);
    for (const p of [
      [180, 89.995],
      [170, 89.999],
      [0, 90],
      [123, 90],
      [0, 89.9999],
    ] as Position[]) {
      const ref = boundaryDistanceM(p, g.coordinates);
      const got = distanceToFenceM(g, p[0], p[1]);
      // Within a few fence sizes of the pole only the weaker guarantee holds (docs/geometry.md).
      assert.ok(got >= ref * (1 - 2e-9) - 1e-6, `${p}: ${got} below ${ref}`);
      assert.ok(got <= 1.05 * ref, `${p}: ${got} vs ${ref}`);
    }
    // At the pole itself every point of the parallel 89.98° is 0.02° away.
    assert.ok(Math.abs(distanceToFenceM(g, 45, 90) - 0.02 * RAD * R) <= 1e-6);
    // South pole, a point inside.
    const south = poly(box(-20, -90, 20, -89.9));
    assert.equal(distanceToFenceM(south, 0, -89.95), 0);
    assert.equal(distanceToFenceM(south, 0, -90), 0);
  });

  test('circles at several latitudes: haversine distance to the centre minus the radius, exactly', () => {
    const rand = lcg(3);
    for (const lat of [-89.9, -60, -20, 0, 35, 52.5, 70, 89.5]) {
      for (const radius of [1, 50, 1000, 100_000]) {
        const c: CircleGeometry = { type: 'Circle', coordinates: [rand() * 360 - 180, lat], radius };
        for (let i = 0; i < 50; i++) {
          const p = offset(c.coordinates[0], lat, rand() * (radius + 2000), rand() * 2 * Math.PI);
          const got = distanceToFenceM(c, p[0], p[1]);
          const d = haversineDistance(c.coordinates[0], c.coordinates[1], p[0], p[1]);
          assert.equal(got, d <= radius ? 0 : d - radius);
          assert.equal(got === 0, pointInCircle(p[0], p[1], c));
          const ref = Math.max(0, vectorDistanceM(c.coordinates, p) - radius);
          assert.ok(Math.abs(got - ref) <= 1e-9 * (radius + ref) + 1e-6, `${got} vs ${ref}`);
        }
      }
    }
    // Across the antimeridian.
    const c: CircleGeometry = { type: 'Circle', coordinates: [179.999, 0], radius: 100 };
    const got = distanceToFenceM(c, -179.999, 0);
    assert.ok(Math.abs(got - (0.002 * RAD * R - 100)) <= 1e-6, `${got}`);
  });

  test('the rim and the boundary are inside (0); one ulp outside is not', () => {
    const g = poly(box(13.4, 52.5, 13.42, 52.51));
    assert.equal(distanceToFenceM(g, 13.41, 52.51), 0);
    assert.equal(distanceToFenceM(g, 13.42, 52.51), 0);
    const out = distanceToFenceM(g, 13.41, nextUp(52.51));
    assert.ok(out > 0 && out < 1e-6, `${out}`);
    assert.ok(distanceToFenceM(g, nextDown(13.4), 52.505) > 0);
  });

  test('NaN for non-finite or out-of-range coordinates', () => {
    const g = poly(box(13.4, 52.5, 13.42, 52.51));
    const c: CircleGeometry = { type: 'Circle', coordinates: [0, 0], radius: 10 };
    for (const [x, y] of [
      [Number.NaN, 0],
      [0, Number.POSITIVE_INFINITY],
      [181, 0],
      [0, -90.5],
    ] as Position[]) {
      assert.ok(Number.isNaN(distanceToFenceM(g, x, y)));
      assert.ok(Number.isNaN(distanceToFenceM(c, x, y)));
    }
  });
});

/** A uniform double in [min, max] (fc.double is uniform over bit patterns: most values would be tiny). */
function uniform(min: number, max: number) {
  return fc.integer({ min: 0, max: 2 ** 30 }).map((k) => min + ((max - min) * k) / 2 ** 30);
}

/** A random valid star polygon (optionally with a hole) around (lng, lat). */
const starArb = fc
  .record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    lng: uniform(-179, 179),
    lat: uniform(-80, 80),
    radius: uniform(20, 3000),
    vertices: fc.integer({ min: 3, max: 80 }),
    hole: fc.boolean(),
  })
  .map(({ seed, lng, lat, radius, vertices, hole }) => ({
    lng,
    lat,
    radius,
    geometry: starPolygon(lcg(seed), lng, lat, radius, vertices, hole && vertices >= 6),
  }));

/** Probe points: a fraction of the reach from the centre and a bearing. */
function pointsArb() {
  return fc.array(
    fc.record({
      along: uniform(0, 1),
      angle: uniform(0, 2 * Math.PI),
    }),
    { minLength: 1, maxLength: 12 },
  );
}

describe('distanceToFenceM: error bound, property-tested', () => {
  test('random star polygons (holes included), random points within 1 km: within the documented bound', () => {
    fc.assert(
      fc.property(starArb, pointsArb(), (star, probes) => {
        const v = validateGeometry(star.geometry);
        fc.pre(v.ok);
        const g = (v as { geometry: PolygonGeometry }).geometry;
        for (const { along, angle } of probes) {
          const p = offset(star.lng, star.lat, along * (star.radius + 1000), angle);
          const got = distanceToFenceM(g, p[0], p[1]);
          if (pointInPolygon(p[0], p[1], g)) {
            assert.equal(got, 0);
            continue;
          }
          const ref = boundaryDistanceM(p, g.coordinates);
          assert.ok(got > 0 || ref < 1e-6, `outside but 0 at ${p}`);
          assertWithinBound(got, ref, p[1], `${JSON.stringify(p)}`);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('high latitudes (80°–89.9°), points up to 5 km away: within the bound while tan φ · d/R ≤ 0.1', () => {
    const polar = fc.record({
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      lng: uniform(-100, 100),
      lat: uniform(80, 89.9),
      sign: fc.constantFrom(1, -1),
      radius: uniform(20, 3000),
      vertices: fc.integer({ min: 3, max: 30 }),
    });
    let bounded = 0;
    let weak = 0;
    fc.assert(
      fc.property(polar, pointsArb(), ({ seed, lng, lat, sign, radius, vertices }, probes) => {
        const v = validateGeometry(starPolygon(lcg(seed), lng, sign * lat, radius, vertices));
        fc.pre(v.ok);
        const g = (v as { geometry: PolygonGeometry }).geometry;
        for (const { along, angle } of probes) {
          const p = offset(lng, sign * lat, along * (radius + 5000), angle);
          if (pointInPolygon(p[0], p[1], g)) continue;
          const ref = boundaryDistanceM(p, g.coordinates);
          const got = distanceToFenceM(g, p[0], p[1]);
          if (Math.tan(Math.abs(p[1]) * RAD) * (ref / R) > 0.1) {
            // Within a few distances of the pole only the weaker guarantee holds: never below the true distance.
            assert.ok(got >= ref * (1 - 2e-9) - 1e-6, `${p}: ${got} below ${ref}`);
            weak++;
            continue;
          }
          bounded++;
          assertWithinBound(got, ref, p[1], JSON.stringify(p));
        }
      }),
      { numRuns: 150 },
    );
    assert.ok(bounded > 300 && weak > 10, `${bounded} ${weak}`);
  });

  test('inside → 0 and outside → > 0, on vertices, edge midpoints and their ulp neighbours', () => {
    const rand = lcg(17);
    for (let i = 0; i < 60; i++) {
      const g = starPolygon(
        rand,
        13 + rand(),
        52 + rand(),
        50 + rand() * 500,
        5 + Math.floor(rand() * 40),
        i % 2 === 0,
      );
      for (const ring of g.coordinates) {
        for (let k = 0; k + 1 < ring.length; k++) {
          const a = ring[k] as Position;
          const b = ring[k + 1] as Position;
          const m: Position = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
          for (const p of [
            a,
            m,
            [nextUp(m[0]), m[1]],
            [m[0], nextDown(m[1])],
            [nextDown(a[0]), a[1]],
          ] as Position[]) {
            const got = distanceToFenceM(g, p[0], p[1]);
            if (pointInPolygon(p[0], p[1], g)) assert.equal(got, 0);
            else assert.ok(got > 0 || boundaryDistanceM(p, g.coordinates) < 1e-6, `${p}`);
            assert.ok(got < 1e-6, `${p} is on or next to the boundary: ${got}`);
          }
        }
      }
    }
  });
});

describe('distanceToFenceM vs Turf pointToPolygonDistance', () => {
  test('GEO-100K-like stars: equal within the gap between great-circle and straight lng/lat edges', () => {
    // Turf's edges are great-circle arcs; ours are straight in lng/lat. An edge of length L at latitude φ
    // separates them by at most ~L² |tan φ| / (8R) (an east-west edge), a few millimetres here; Turf's own
    // rounding (cross products of unit vectors) adds up to ~20 µm.
    const rand = lcg(29);
    let compared = 0;
    for (let i = 0; i < 150; i++) {
      const lat = -70 + rand() * 140;
      const lng = -170 + rand() * 340;
      const radius = 30 + rand() * 570;
      const g = starPolygon(rand, lng, lat, radius, 4 + Math.floor(rand() * 60), i % 3 === 0);
      let longest = 0;
      for (const ring of g.coordinates) {
        for (let k = 0; k + 1 < ring.length; k++) {
          longest = Math.max(longest, vectorDistanceM(ring[k] as Position, ring[k + 1] as Position));
        }
      }
      const gap = (longest * longest * (Math.abs(Math.tan(lat * RAD)) + 0.01)) / (8 * R);
      for (let k = 0; k < 20; k++) {
        const p = offset(lng, lat, rand() * (radius + 1500), rand() * 2 * Math.PI);
        const ours = distanceToFenceM(g, p[0], p[1]);
        const turf = Math.max(0, pointToPolygonDistance(p, g, { units: 'meters' }));
        assert.ok(Math.abs(ours - turf) <= 1.2 * gap + 1e-4, `${p}: ${ours} vs ${turf}`);
        compared++;
      }
    }
    assert.equal(compared, 3000);
  });
});
