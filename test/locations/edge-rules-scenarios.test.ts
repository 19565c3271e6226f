/**
 * Contract §4.5, exit buffer and accuracy gate, through the HTTP API: the exact event sequences of
 * a device jittering across an edge (polygon, hole, circle) with and without `exit_buffer_m`, of
 * poor fixes with `max_accuracy_m`, of rules changed by PATCH; the fields' validation and their
 * place in the record; `/geofences/contains` stays plain containment whatever the rules say.
 *
 * Jitter runs along a meridian, so "15 m outside" is 15 m by any metric the service may use.
 * Geofences of one test are created in id order (ids sort by creation), which is the order the
 * events of one location come in: exits first, then enters, each by geofence id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { containing, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import { issuesOf } from '../helpers/validation-issues.ts';
import { type Credentials, createDevice, deviceEvents, getDevice } from './helpers.ts';
import {
  createRuledGeofence,
  type Fix,
  NULL_RULES,
  northOf,
  patchGeofence,
  type RuledGeofenceOut,
  trackWalker,
} from './rules-helpers.ts';

/** An hour before the test clock: 10 s per fix leaves room for a few hundred fixes. */
const START = Date.parse('2026-03-10T11:00:00.000Z');

/** Fixes at `lng`, alternately `metres` inside and outside of an east-west edge at `edgeLat`. */
function jitter(lng: number, edgeLat: number, insideIsSouth: boolean, metres: number, count: number): Fix[] {
  const sign = insideIsSouth ? -1 : 1;
  return Array.from({ length: count }, (_v, k) => ({
    lng,
    lat: northOf(edgeLat, (k % 2 === 0 ? sign : -sign) * metres),
  }));
}

/** `enter@0, exit@1, enter@2, …` for `count` fixes of a flapping device. */
function flapping(label: string, count: number, from = 0): string[] {
  return Array.from({ length: count }, (_v, k) => `${k % 2 === 0 ? 'enter' : 'exit'}:${label}@${from + k}`);
}

interface Edge {
  name: string;
  geometry: unknown;
  /** Where the jitter crosses the boundary: a longitude and the latitude of the edge there. */
  lng: number;
  edgeLat: number;
  /** Whether the inside is south of that edge. */
  insideIsSouth: boolean;
}

const EDGES: Edge[] = [
  {
    name: 'polygon edge',
    geometry: polygon(rect(13.4, 52.5, 13.42, 52.51)),
    lng: 13.41,
    edgeLat: 52.51,
    insideIsSouth: true,
  },
  {
    name: 'hole edge',
    geometry: polygon(rect(13.4, 52.5, 13.44, 52.53), rect(13.41, 52.51, 13.43, 52.52)),
    lng: 13.42,
    edgeLat: 52.51,
    insideIsSouth: true,
  },
  {
    // Due north of the centre the haversine distance is the latitude difference exactly.
    name: 'circle edge',
    geometry: { type: 'Circle', coordinates: [13.4, 52.5], radius: 200 },
    lng: 13.4,
    edgeLat: northOf(52.5, 200),
    insideIsSouth: true,
  },
];

describe('exit buffer and accuracy gate (contract §4.5)', () => {
  let t: TestApp;

  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  /** A workspace of its own: its geofences are the only ones the test's devices see. */
  async function workspace(label: string): Promise<Credentials> {
    const user = await signUp(t, label);
    return { token: user.tokens.access_token };
  }

  for (const edge of EDGES) {
    test(`${edge.name}: ±15 m jitter for 40 fixes flaps 20 times without a buffer`, async () => {
      const jwt = await workspace('flap');
      const fence = await createRuledGeofence(t, jwt, { name: 'F', geometry: edge.geometry });
      assert.deepEqual(
        {
          dwell_seconds: fence.dwell_seconds,
          exit_buffer_m: fence.exit_buffer_m,
          max_accuracy_m: fence.max_accuracy_m,
        },
        NULL_RULES,
        'rules default to null',
      );
      const device = await createDevice(t, jwt);
      const track = trackWalker(t, jwt, device.id, new Map([[fence.id, 'F']]), START);
      const events = await track.walk(jitter(edge.lng, edge.edgeLat, edge.insideIsSouth, 15, 40));
      assert.deepEqual(events, flapping('F', 40));
      assert.equal(events.filter((e) => e.startsWith('enter')).length, 20);
      assert.equal(events.filter((e) => e.startsWith('exit')).length, 20);
    });

    test(`${edge.name}: with exit_buffer_m 30 the same jitter enters once; 50 m out exits`, async () => {
      const jwt = await workspace('buffer');
      const fence = await createRuledGeofence(t, jwt, {
        name: 'F',
        geometry: edge.geometry,
        exit_buffer_m: 30,
      });
      assert.equal(fence.exit_buffer_m, 30);
      const device = await createDevice(t, jwt);
      const track = trackWalker(t, jwt, device.id, new Map([[fence.id, 'F']]), START);
      const fixes = jitter(edge.lng, edge.edgeLat, edge.insideIsSouth, 15, 40);
      assert.deepEqual(await track.walk(fixes), ['enter:F@0']);

      // Fix 39 is 15 m outside: the device is inside by the rule, not by the geometry.
      const last = fixes[39] as Fix;
      assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, [fence.id]);
      assert.deepEqual(
        (await containing(t, jwt, last.lng, last.lat)).results.map((g) => g.id),
        [],
        'contains answers plain containment',
      );

      const out = edge.insideIsSouth ? 1 : -1;
      assert.deepEqual(
        await track.walk([
          { lng: edge.lng, lat: northOf(edge.edgeLat, out * 25) }, // 25 m out: still within 30
          { lng: edge.lng, lat: northOf(edge.edgeLat, out * 50) }, // 50 m out: a real exit
          { lng: edge.lng, lat: northOf(edge.edgeLat, out * 15) }, // the buffer never widens the way in
          { lng: edge.lng, lat: northOf(edge.edgeLat, -out * 15) }, // 15 m inside: enter
          { lng: edge.lng, lat: northOf(edge.edgeLat, out * 15) }, // and the buffer holds again
        ]),
        ['exit:F@41', 'enter:F@43'],
      );
      assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, [fence.id]);

      // The stored events are those the POST answers gave, in the same order.
      const stored = await deviceEvents(t, jwt, device.id);
      assert.deepEqual(
        stored.map((e) => e.id),
        track.events.map((e) => e.id),
      );
    });
  }

  test('buffered and plain geofences on the same edge: only the plain one flaps', async () => {
    const jwt = await workspace('mixed');
    const geometry = polygon(rect(13.4, 52.5, 13.42, 52.51));
    const buffered = await createRuledGeofence(t, jwt, { name: 'B', geometry, exit_buffer_m: 30 });
    const plain = await createRuledGeofence(t, jwt, { name: 'P', geometry });
    const device = await createDevice(t, jwt);
    const labels = new Map([
      [buffered.id, 'B'],
      [plain.id, 'P'],
    ]);
    const track = trackWalker(t, jwt, device.id, labels, START);
    assert.deepEqual(await track.walk(jitter(13.41, 52.51, true, 15, 6)), [
      'enter:B@0',
      'enter:P@0',
      'exit:P@1',
      'enter:P@2',
      'exit:P@3',
      'enter:P@4',
      'exit:P@5',
    ]);
    assert.deepEqual(await track.walk([{ lng: 13.41, lat: northOf(52.51, 60) }]), ['exit:B@6']);
  });

  test('accuracy gate: a poor fix neither exits nor enters; 100 m counts at max_accuracy_m 100; no accuracy counts', async () => {
    const jwt = await workspace('gate');
    const circleAt = (radius: number) => ({ type: 'Circle', coordinates: [13.7, 52.5], radius });
    const gated = await createRuledGeofence(t, jwt, {
      name: 'G',
      geometry: circleAt(200),
      max_accuracy_m: 100,
    });
    const plain = await createRuledGeofence(t, jwt, { name: 'P', geometry: circleAt(200) });
    assert.equal(gated.max_accuracy_m, 100);
    const device = await createDevice(t, jwt);
    const track = trackWalker(
      t,
      jwt,
      device.id,
      new Map([
        [gated.id, 'G'],
        [plain.id, 'P'],
      ]),
      START,
    );
    const inside = (accuracy?: number): Fix => ({ lng: 13.7, lat: 52.5, ...(accuracy ? { accuracy } : {}) });
    const farOut = (accuracy?: number): Fix => ({
      lng: 13.7,
      lat: northOf(52.5, 5000),
      ...(accuracy ? { accuracy } : {}),
    });

    assert.deepEqual(await track.walk([inside(10)]), ['enter:G@0', 'enter:P@0']);
    // 500 m accuracy, 5 km away: the gated geofence ignores it; the plain one does not.
    assert.deepEqual(await track.walk([farOut(500)]), ['exit:P@1']);
    assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, [gated.id]);
    assert.deepEqual(await track.walk([inside(20)]), ['enter:P@2']);
    // Exactly max_accuracy_m is not worse than it: counts.
    assert.deepEqual(await track.walk([farOut(100)]), ['exit:G@3', 'exit:P@3']);
    // A poor fix inside does not enter the gated geofence.
    assert.deepEqual(await track.walk([inside(500)]), ['enter:P@4']);
    assert.deepEqual(await track.walk([inside(100.5)]), []);
    assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, [plain.id]);
    // A fix without accuracy counts, both ways.
    assert.deepEqual(await track.walk([inside()]), ['enter:G@6']);
    assert.deepEqual(await track.walk([farOut()]), ['exit:G@7', 'exit:P@7']);
    assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, []);
  });

  test('gate and buffer together: poor fixes change nothing, good ones within the buffer neither', async () => {
    const jwt = await workspace('both');
    const fence = await createRuledGeofence(t, jwt, {
      name: 'F',
      geometry: polygon(rect(13.4, 52.5, 13.42, 52.51)),
      exit_buffer_m: 30,
      max_accuracy_m: 100,
    });
    const device = await createDevice(t, jwt);
    const track = trackWalker(t, jwt, device.id, new Map([[fence.id, 'F']]), START);
    const at = (metresNorthOfEdge: number, accuracy: number): Fix => ({
      lng: 13.41,
      lat: northOf(52.51, metresNorthOfEdge),
      accuracy,
    });
    assert.deepEqual(
      await track.walk([
        at(-100, 5), // enter
        at(3000, 800), // poor, far out: nothing
        at(20, 5), // good, within the buffer: nothing
        at(80, 150), // poor, beyond the buffer: nothing
        at(80, 5), // good, beyond the buffer: exit
        at(-100, 300), // poor, inside: nothing
        at(-100, 50), // good, inside: enter
      ]),
      ['enter:F@0', 'exit:F@4', 'enter:F@6'],
    );
  });

  test('PATCHed rules take effect from the next location; a PATCH without them keeps them', async () => {
    const jwt = await workspace('patch');
    const fence = await createRuledGeofence(t, jwt, {
      name: 'F',
      geometry: polygon(rect(13.4, 52.5, 13.42, 52.51)),
    });
    const device = await createDevice(t, jwt);
    const track = trackWalker(t, jwt, device.id, new Map([[fence.id, 'F']]), START);
    const at = (metresNorthOfEdge: number, accuracy?: number): Fix => ({
      lng: 13.41,
      lat: northOf(52.51, metresNorthOfEdge),
      ...(accuracy ? { accuracy } : {}),
    });

    assert.deepEqual(await track.walk([at(-15), at(15), at(-15)]), ['enter:F@0', 'exit:F@1', 'enter:F@2']);

    const buffered = await patchGeofence(t, jwt, fence.id, { exit_buffer_m: 30 });
    assert.deepEqual(
      [buffered.dwell_seconds, buffered.exit_buffer_m, buffered.max_accuracy_m],
      [null, 30, null],
    );
    // The device is inside (fix 2): 15 m out now stays inside.
    assert.deepEqual(await track.walk([at(15), at(50), at(-15)]), ['exit:F@4', 'enter:F@5']);

    const both = await patchGeofence(t, jwt, fence.id, { max_accuracy_m: 100 });
    assert.deepEqual([both.dwell_seconds, both.exit_buffer_m, both.max_accuracy_m], [null, 30, 100]);
    const renamed = await patchGeofence(t, jwt, fence.id, { name: 'Renamed' });
    assert.deepEqual([renamed.dwell_seconds, renamed.exit_buffer_m, renamed.max_accuracy_m], [null, 30, 100]);
    assert.deepEqual(await track.walk([at(3000, 500)]), [], 'a poor fix far out changes nothing');

    const cleared = await patchGeofence(t, jwt, fence.id, { exit_buffer_m: null, max_accuracy_m: null });
    assert.deepEqual(
      [cleared.dwell_seconds, cleared.exit_buffer_m, cleared.max_accuracy_m],
      [null, null, null],
    );
    // Without rules the same kind of fix counts again, and 15 m out is out.
    assert.deepEqual(await track.walk([at(15, 500)]), ['exit:F@7']);
    assert.deepEqual(await track.walk([at(-15, 500), at(15)]), ['enter:F@8', 'exit:F@9']);
  });

  test('validation: ranges, integer dwell, null allowed; 422 details exact on create and update', async () => {
    const jwt = await workspace('validate');
    const geometry = polygon(rect(1, 1, 1.01, 1.01));
    const gte = (field: string, limit: number) => ({
      type: 'greater_than_equal',
      loc: ['body', field],
      msg: `Input should be greater than or equal to ${limit}`,
    });
    const lte = (field: string, limit: number) => ({
      type: 'less_than_equal',
      loc: ['body', field],
      msg: `Input should be less than or equal to ${limit}`,
    });
    const integer = {
      type: 'int_parsing',
      loc: ['body', 'dwell_seconds'],
      msg: 'Input should be a valid integer',
    };
    const number = (field: string) => ({
      type: 'float_parsing',
      loc: ['body', field],
      msg: 'Input should be a valid number',
    });
    const cases: Array<[Record<string, unknown>, unknown[]]> = [
      [{ dwell_seconds: 59 }, [gte('dwell_seconds', 60)]],
      [{ dwell_seconds: 86_401 }, [lte('dwell_seconds', 86400)]],
      [{ dwell_seconds: 60.5 }, [integer]],
      [{ dwell_seconds: '120' }, [integer]],
      [{ dwell_seconds: true }, [integer]],
      [{ exit_buffer_m: 0.99 }, [gte('exit_buffer_m', 1)]],
      [{ exit_buffer_m: 1000.01 }, [lte('exit_buffer_m', 1000)]],
      [{ exit_buffer_m: '30' }, [number('exit_buffer_m')]],
      [{ max_accuracy_m: 0 }, [gte('max_accuracy_m', 1)]],
      [{ max_accuracy_m: 10_000.5 }, [lte('max_accuracy_m', 10000)]],
      [{ max_accuracy_m: false }, [number('max_accuracy_m')]],
      [
        { dwell_seconds: 0, exit_buffer_m: -1, max_accuracy_m: 1e6 },
        [gte('dwell_seconds', 60), gte('exit_buffer_m', 1), lte('max_accuracy_m', 10000)],
      ],
    ];
    const existing = await createRuledGeofence(t, jwt, { name: 'Existing', geometry, exit_buffer_m: 10 });
    for (const [fields, detail] of cases) {
      const created = await call(t, '/geofences', { ...jwt, body: { name: 'Bad', geometry, ...fields } });
      assert.deepEqual(issuesOf(created, `create ${JSON.stringify(fields)}`), detail);
      const patched = await call(t, `/geofences/${existing.id}`, { ...jwt, method: 'PATCH', body: fields });
      assert.deepEqual(issuesOf(patched, `patch ${JSON.stringify(fields)}`), detail);
    }
    const unchanged = expectStatus<RuledGeofenceOut>(await call(t, `/geofences/${existing.id}`, jwt), 200);
    assert.equal(unchanged.exit_buffer_m, 10, 'a refused PATCH changed nothing');

    // The bounds are inclusive; the buffer and the accuracy take fractions; null is allowed.
    const valid: Array<Record<string, unknown>> = [
      { dwell_seconds: 60, exit_buffer_m: 1, max_accuracy_m: 1 },
      { dwell_seconds: 86_400, exit_buffer_m: 1000, max_accuracy_m: 10_000 },
      { dwell_seconds: 600, exit_buffer_m: 12.5, max_accuracy_m: 35.75 },
      { dwell_seconds: null, exit_buffer_m: null, max_accuracy_m: null },
    ];
    for (const fields of valid) {
      const fence = await createRuledGeofence(t, jwt, { name: 'Valid', geometry, ...fields });
      assert.deepEqual(
        {
          dwell_seconds: fence.dwell_seconds,
          exit_buffer_m: fence.exit_buffer_m,
          max_accuracy_m: fence.max_accuracy_m,
        },
        fields,
      );
      const patched = await patchGeofence(t, jwt, existing.id, fields);
      assert.deepEqual(
        {
          dwell_seconds: patched.dwell_seconds,
          exit_buffer_m: patched.exit_buffer_m,
          max_accuracy_m: patched.max_accuracy_m,
        },
        fields,
      );
    }
  });

  test('the record and /geofences/contains carry the rules; contains is plain containment', async () => {
    const jwt = await workspace('record');
    const fence = await createRuledGeofence(t, jwt, {
      name: 'Depot',
      geometry: polygon(rect(13.4, 52.5, 13.42, 52.51)),
      dwell_seconds: 600,
      exit_buffer_m: 30,
      max_accuracy_m: 100,
    });
    const plain = await createRuledGeofence(t, jwt, {
      name: 'Plain',
      geometry: polygon(rect(13.4, 52.5, 13.42, 52.51)),
    });
    const got = expectStatus<RuledGeofenceOut>(await call(t, `/geofences/${fence.id}`, jwt), 200);
    assert.deepEqual(got, fence);
    assert.deepEqual([got.dwell_seconds, got.exit_buffer_m, got.max_accuracy_m], [600, 30, 100]);
    const list = expectStatus<Page<RuledGeofenceOut>>(await call(t, '/geofences', jwt), 200);
    assert.deepEqual(
      list.results.map((g) => [g.name, g.dwell_seconds, g.exit_buffer_m, g.max_accuracy_m]),
      [
        ['Plain', null, null, null],
        ['Depot', 600, 30, 100],
      ],
    );

    // A device inside by the buffer only: contains still answers by the geometry.
    const device = await createDevice(t, jwt);
    const track = trackWalker(
      t,
      jwt,
      device.id,
      new Map([
        [fence.id, 'D'],
        [plain.id, 'P'],
      ]),
      START,
    );
    assert.deepEqual(
      await track.walk([
        { lng: 13.41, lat: northOf(52.51, -15) },
        { lng: 13.41, lat: northOf(52.51, 15) },
      ]),
      ['enter:D@0', 'enter:P@0', 'exit:P@1'],
    );
    const inside = await containing(t, jwt, 13.41, northOf(52.51, -15));
    assert.deepEqual(inside.results.map((g) => g.id).sort(), [fence.id, plain.id].sort());
    assert.deepEqual(
      inside.results.find((g) => g.id === fence.id),
      got,
      'the same record as GET /geofences/{id}',
    );
    assert.deepEqual((await containing(t, jwt, 13.41, northOf(52.51, 15))).results, []);
  });
});
