/**
 * Contract §4.5: with `dwell_seconds`, `exit_buffer_m` and `max_accuracy_m` all null, behaviour is
 * exactly §4.3. A property over random geofences and random tracks (out-of-order points, equal
 * timestamps, fixes with and without accuracy, poor ones included), through the HTTP API: the event
 * stream equals a reference computed from the geometry directly (planar polygons with the boundary
 * inside, haversine circles), exits before enters in geofence id order, out-of-order points giving
 * nothing. The null fields come three ways (left out, sent as null, set and then PATCHed back to
 * null), and half the workspaces also hold a geofence with rules, far from the track, so that
 * evaluation takes its rules path too.
 *
 * After every fix the device's answer (GET /devices/{id}: `last_location`, `last_seen_at`,
 * `inside_geofence_ids`) equals a model's too: the newest in-order fix (equal times: the later
 * one), when it arrived, and the geofences containing it.
 *
 * Coordinates lie on a grid of 1e-4 degrees, so points often sit exactly on polygon edges and
 * corners; a point within a millimetre of a circle is moved off the grid, where float rounding in
 * two haversine implementations could disagree.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { signUp, startIdentityApp } from '../helpers/identity.ts';
import { type Credentials, createDevice, deviceEvents, getDevice, postLocation } from './helpers.ts';
import { createRuledGeofence, patchGeofence } from './rules-helpers.ts';

const GRID = 1e-4;
const LNG0 = 10;
const LAT0 = 50;
const CELLS = 200;
const EARTH_RADIUS_M = 6_371_008.8;

const lngOf = (i: number) => LNG0 + i * GRID;
const latOf = (j: number) => LAT0 + j * GRID;

type Shape =
  | { kind: 'rect'; i0: number; j0: number; i1: number; j1: number }
  | { kind: 'holed'; i0: number; j0: number; i1: number; j1: number; margin: number }
  | { kind: 'circle'; i: number; j: number; radius: number };

type NullRules = 'omitted' | 'nulls' | 'patched';

interface FenceSpec {
  shape: Shape;
  rules: NullRules;
}

interface FixSpec {
  i: number;
  j: number;
  /** Seconds after the previous fix; negative ones make out-of-order points. */
  dt: number;
  accuracy: number | null;
}

const span = fc
  .tuple(fc.integer({ min: 0, max: CELLS }), fc.integer({ min: 0, max: CELLS }))
  .filter(([a, b]) => a !== b)
  .map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);

const shapeArb: fc.Arbitrary<Shape> = fc.oneof(
  fc.tuple(span, span).map(([[i0, i1], [j0, j1]]) => ({ kind: 'rect' as const, i0, j0, i1, j1 })),
  fc
    .tuple(span, span, fc.integer({ min: 1, max: 40 }))
    .filter(([[i0, i1], [j0, j1], m]) => i1 - i0 > 2 * m && j1 - j0 > 2 * m)
    .map(([[i0, i1], [j0, j1], margin]) => ({ kind: 'holed' as const, i0, j0, i1, j1, margin })),
  fc.record({
    kind: fc.constant('circle' as const),
    i: fc.integer({ min: 0, max: CELLS }),
    j: fc.integer({ min: 0, max: CELLS }),
    radius: fc.integer({ min: 20, max: 800 }),
  }),
);

const fenceArb: fc.Arbitrary<FenceSpec> = fc.record({
  shape: shapeArb,
  rules: fc.constantFrom<NullRules>('omitted', 'nulls', 'patched'),
});

const fixArb: fc.Arbitrary<FixSpec> = fc.record({
  i: fc.integer({ min: -10, max: CELLS + 10 }),
  j: fc.integer({ min: -10, max: CELLS + 10 }),
  dt: fc.oneof(fc.integer({ min: 0, max: 120 }), fc.integer({ min: -120, max: 0 }), fc.constant(0)),
  accuracy: fc.option(fc.oneof(fc.integer({ min: 1, max: 50 }), fc.constantFrom(100.5, 500, 9999)), {
    nil: null,
  }),
});

const caseArb = fc.record({
  fences: fc.array(fenceArb, { minLength: 1, maxLength: 4 }),
  ruledElsewhere: fc.boolean(),
  fixes: fc.array(fixArb, { minLength: 1, maxLength: 24 }),
});

function geometryOf(shape: Shape) {
  switch (shape.kind) {
    case 'rect':
      return {
        type: 'Polygon',
        coordinates: [rect(lngOf(shape.i0), latOf(shape.j0), lngOf(shape.i1), latOf(shape.j1))],
      };
    case 'holed': {
      const m = shape.margin;
      return {
        type: 'Polygon',
        coordinates: [
          rect(lngOf(shape.i0), latOf(shape.j0), lngOf(shape.i1), latOf(shape.j1)),
          rect(lngOf(shape.i0 + m), latOf(shape.j0 + m), lngOf(shape.i1 - m), latOf(shape.j1 - m)),
        ],
      };
    }
    case 'circle':
      return { type: 'Circle', coordinates: [lngOf(shape.i), latOf(shape.j)], radius: shape.radius };
  }
}

function haversineM(lng1: number, lat1: number, lng2: number, lat2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLng = (lng2 - lng1) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Planar containment, boundary inside (contract §3); a hole's boundary belongs to the polygon. */
function contains(shape: Shape, lng: number, lat: number): boolean {
  const inRect = (i0: number, j0: number, i1: number, j1: number) =>
    lngOf(i0) <= lng && lng <= lngOf(i1) && latOf(j0) <= lat && lat <= latOf(j1);
  const strictlyIn = (i0: number, j0: number, i1: number, j1: number) =>
    lngOf(i0) < lng && lng < lngOf(i1) && latOf(j0) < lat && lat < latOf(j1);
  switch (shape.kind) {
    case 'rect':
      return inRect(shape.i0, shape.j0, shape.i1, shape.j1);
    case 'holed': {
      const m = shape.margin;
      return (
        inRect(shape.i0, shape.j0, shape.i1, shape.j1) &&
        !strictlyIn(shape.i0 + m, shape.j0 + m, shape.i1 - m, shape.j1 - m)
      );
    }
    case 'circle':
      return haversineM(lngOf(shape.i), latOf(shape.j), lng, lat) <= shape.radius;
  }
}

/** The point of a fix: on the grid, unless that is within a millimetre of a circle. */
function pointOf(fix: FixSpec, shapes: readonly Shape[]): [number, number] {
  const lng = lngOf(fix.i);
  let lat = latOf(fix.j);
  const nearCircle = () =>
    shapes.some(
      (s) => s.kind === 'circle' && Math.abs(haversineM(lngOf(s.i), latOf(s.j), lng, lat) - s.radius) < 0.001,
    );
  while (nearCircle()) lat += GRID / 3;
  return [lng, lat];
}

/** §4.3 from the geometry: `<type>:<fence index>@<fix index>` per event, in order. */
function referenceEvents(
  ids: readonly string[],
  shapes: readonly Shape[],
  points: ReadonlyArray<{ lng: number; lat: number; at: number }>,
): { events: string[]; inside: string[] } {
  const label = new Map(ids.map((id, k) => [id, k]));
  let inside: string[] = [];
  let last: number | null = null;
  const events: string[] = [];
  points.forEach((p, n) => {
    if (last !== null && p.at < last) return; // out of order: stored, not evaluated
    last = p.at;
    const now = ids.filter((_id, k) => contains(shapes[k] as Shape, p.lng, p.lat)).sort();
    for (const id of inside) if (!now.includes(id)) events.push(`exit:${label.get(id)}@${n}`);
    for (const id of now) if (!inside.includes(id)) events.push(`enter:${label.get(id)}@${n}`);
    inside = now;
  });
  return { events, inside };
}

const SOME_RULES = { dwell_seconds: 600, exit_buffer_m: 50, max_accuracy_m: 30 };

describe('null rules are §4.3 exactly (property, contract §4.5)', () => {
  let t: TestApp;

  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  async function createFence(jwt: Credentials, spec: FenceSpec, k: number): Promise<string> {
    const body: Record<string, unknown> = { name: `F${k}`, geometry: geometryOf(spec.shape) };
    if (spec.rules === 'nulls')
      Object.assign(body, { dwell_seconds: null, exit_buffer_m: null, max_accuracy_m: null });
    if (spec.rules === 'patched') Object.assign(body, SOME_RULES);
    const fence = await createRuledGeofence(t, jwt, body);
    if (spec.rules === 'patched') {
      const patched = await patchGeofence(t, jwt, fence.id, {
        dwell_seconds: null,
        exit_buffer_m: null,
        max_accuracy_m: null,
      });
      assert.deepEqual(
        [patched.dwell_seconds, patched.exit_buffer_m, patched.max_accuracy_m],
        [null, null, null],
      );
    }
    return fence.id;
  }

  test('random geofences and tracks: the events equal the plain evaluation of the geometry', async () => {
    const start = t.clock.now().getTime() - 86_400_000;
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ fences, ruledElsewhere, fixes }) => {
        const user = await signUp(t, 'property');
        const jwt = { token: user.tokens.access_token };
        const ids: string[] = [];
        for (const [k, spec] of fences.entries()) ids.push(await createFence(jwt, spec, k));
        if (ruledElsewhere) {
          // Far from the track: never entered, but it puts the workspace on the rules path.
          await createRuledGeofence(t, jwt, {
            name: 'Elsewhere',
            geometry: { type: 'Circle', coordinates: [LNG0 + 5, LAT0], radius: 100 },
            ...SOME_RULES,
          });
        }
        const shapes = fences.map((f) => f.shape);
        const device = await createDevice(t, jwt);
        let at = start;
        const points = fixes.map((fix) => {
          at += fix.dt * 1000;
          const [lng, lat] = pointOf(fix, shapes);
          return { lng, lat, at, accuracy: fix.accuracy };
        });
        const answered: string[] = [];
        // The model of the device's answer: the newest in-order fix, when it arrived, what contains it.
        let model: { last_location: unknown; last_seen_at: string | null; inside_geofence_ids: string[] } = {
          last_location: null,
          last_seen_at: null,
          inside_geofence_ids: [],
        };
        for (const [n, p] of points.entries()) {
          // Each fix arrives a moment after the previous one: last_seen_at tells them apart.
          t.clock.advance(7);
          const { events, location } = await postLocation(t, jwt, device.id, {
            coordinates: [p.lng, p.lat],
            timestamp: new Date(p.at).toISOString(),
            ...(p.accuracy === null ? {} : { accuracy: p.accuracy }),
          });
          for (const e of events) answered.push(`${e.event_type}:${ids.indexOf(e.geofence_id)}@${n}`);
          const outOfOrder = points.slice(0, n).some((q) => q.at > p.at);
          assert.equal(location.out_of_order, outOfOrder, `fix ${n} out of order`);
          if (!outOfOrder) {
            model = {
              last_location: {
                point: { type: 'Point', coordinates: [p.lng, p.lat] },
                timestamp: new Date(p.at).toISOString(),
                accuracy: p.accuracy,
              },
              last_seen_at: t.clock.now().toISOString(),
              inside_geofence_ids: referenceEvents(ids, shapes, points.slice(0, n + 1)).inside,
            };
          }
          const answer = await getDevice(t, jwt, device.id);
          assert.deepEqual(
            {
              last_location: answer.last_location,
              last_seen_at: answer.last_seen_at,
              inside_geofence_ids: answer.inside_geofence_ids,
            },
            model,
            `the device after fix ${n}`,
          );
        }
        const expected = referenceEvents(ids, shapes, points);
        assert.deepEqual(answered, expected.events, 'the POST answers');
        const stored = await deviceEvents(t, jwt, device.id);
        assert.deepEqual(
          stored.map((e) => `${e.event_type}:${ids.indexOf(e.geofence_id)}`),
          expected.events.map((e) => e.slice(0, e.indexOf('@'))),
          'GET /events',
        );
        assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, expected.inside);
      }),
      { numRuns: 25 },
    );
  });
});
