/**
 * Geofence evaluation scenarios (contract §4.3), each asserting the EXACT event sequence a device
 * produces while walking: across a polygon and a circle, through a hole, along a boundary, jitter at
 * an edge, out-of-order points, overlapping geofences, a geofence disabled while inside, a geometry
 * edit, and a deleted geofence. Scenarios live in separate areas of the map, one device each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { circle, createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import {
  at,
  createDevice,
  describeEvent,
  deviceEvents,
  type EventOut,
  getDevice,
  type LocationOut,
  postLocation,
  walker,
} from './helpers.ts';

describe('evaluation scenarios: exact event sequences', () => {
  let t: TestApp;
  let jwt: { token: string };
  const labels = new Map<string, string>();

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'scenarios')).tokens.access_token };
  });
  after(async () => t?.close());

  async function fence(
    label: string,
    geometry: unknown,
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const g = await createGeofence(t, jwt, { name: label, geometry, ...extra });
    labels.set(g.id, label);
    return g.id;
  }

  async function newWalk() {
    const device = await createDevice(t, jwt);
    return { device, walk: walker(t, jwt, device.id, labels) };
  }

  test('across a polygon, then a circle', async () => {
    await fence('P', polygon(rect(10, 50, 10.01, 50.01)));
    await fence('C', circle(10.02, 50.005, 300));
    const { device, walk } = await newWalk();
    assert.deepEqual(await walk(9.995, 50.005), []);
    assert.deepEqual(await walk(10.005, 50.005), ['enter:P']);
    assert.deepEqual(await walk(10.015, 50.005), ['exit:P']); // ~357 m from the circle's centre
    assert.deepEqual(await walk(10.02, 50.005), ['enter:C']);
    assert.deepEqual(await walk(10.03, 50.005), ['exit:C']);
    // One step from inside P straight into C: the exit comes before the enter.
    assert.deepEqual(await walk(10.005, 50.005), ['enter:P']);
    assert.deepEqual(await walk(10.02, 50.005), ['exit:P', 'enter:C']);
    const history = (await deviceEvents(t, jwt, device.id)).map((e) => describeEvent(e, labels));
    assert.deepEqual(history, ['enter:P', 'exit:P', 'enter:C', 'exit:C', 'enter:P', 'exit:P', 'enter:C']);
  });

  test('through a hole: entering the hole exits, leaving it (or touching its edge) enters', async () => {
    await fence('H', polygon(rect(20, 50, 20.04, 50.04), rect(20.01, 50.01, 20.03, 50.03).reverse()));
    const { walk } = await newWalk();
    assert.deepEqual(await walk(19.99, 50.02), []);
    assert.deepEqual(await walk(20.005, 50.02), ['enter:H']);
    assert.deepEqual(await walk(20.02, 50.02), ['exit:H']); // inside the hole
    assert.deepEqual(await walk(20.01, 50.02), ['enter:H']); // on the hole's edge: boundary is inside
    assert.deepEqual(await walk(20.02, 50.02), ['exit:H']);
    assert.deepEqual(await walk(20.035, 50.02), ['enter:H']); // out of the hole on the far side
    assert.deepEqual(await walk(20.05, 50.02), ['exit:H']);
  });

  test('along a boundary: edges and corners count as inside', async () => {
    await fence('B', polygon(rect(30, 50, 30.01, 50.01)));
    const { device, walk } = await newWalk();
    assert.deepEqual(await walk(29.995, 50.005), []);
    assert.deepEqual(await walk(30, 50.005), ['enter:B']); // on the west edge
    assert.deepEqual(await walk(30, 50.01), []); // north-west corner
    assert.deepEqual(await walk(30.005, 50.01), []); // north edge
    assert.deepEqual(await walk(30.01, 50), []); // south-east corner
    assert.deepEqual(await walk(30.0100001, 50), ['exit:B']);
    assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, []);
  });

  test('jitter at an edge: every crossing is an event (no hysteresis)', async () => {
    const id = await fence('J', polygon(rect(35, 50, 35.01, 50.01)));
    const { walk } = await newWalk();
    const inside = 35.01 - 1e-9;
    const outside = 35.01 + 1e-9;
    const sequence: string[] = [];
    for (const lng of [inside, outside, inside, 35.01, outside, outside, inside]) {
      sequence.push(...(await walk(lng, 50.005)));
    }
    assert.deepEqual(sequence, ['enter:J', 'exit:J', 'enter:J', 'exit:J', 'enter:J']);
    assert.ok(id);
  });

  test('out-of-order points are stored, flagged, and change nothing', async () => {
    const o = await fence('O', polygon(rect(45, 50, 45.01, 50.01)));
    const { device, walk } = await newWalk();
    assert.deepEqual(await walk(45.005, 50.005, { step: 10 }), ['enter:O']);
    const beforeLate = await getDevice(t, jwt, device.id);
    t.clock.advance(1000);
    const late = await postLocation(t, jwt, device.id, { coordinates: [44.99, 50.005], timestamp: at(5) });
    assert.equal(late.location.out_of_order, true);
    assert.deepEqual(late.events, []);
    const afterLate = await getDevice(t, jwt, device.id);
    assert.deepEqual(afterLate, beforeLate, 'the device is exactly as before (last_seen_at too)');
    assert.deepEqual(afterLate.inside_geofence_ids, [o]);
    assert.deepEqual(afterLate.last_location?.point.coordinates, [45.005, 50.005]);
    assert.equal(afterLate.last_location?.timestamp, at(10));
    // The same timestamp as the newest evaluated one is in order.
    assert.deepEqual(await walk(44.99, 50.005, { step: 10 }), ['exit:O']);
    assert.deepEqual(await walk(45.005, 50.005, { step: 12 }), ['enter:O']);
    assert.deepEqual(await walk(44.99, 50.005, { step: 11 }), []);
    const history = expectStatus<Page<LocationOut>>(
      await call(t, `/devices/${device.id}/locations`, { ...jwt, query: { limit: '10' } }),
      200,
    );
    // Newest (by timestamp) first.
    assert.deepEqual(
      history.results.map((l) => [l.timestamp, l.out_of_order]),
      [
        [at(12), false],
        [at(11), true],
        [at(10), false],
        [at(10), false],
        [at(5), true],
      ],
    );
    const events = (await deviceEvents(t, jwt, device.id)).map((e) => describeEvent(e, labels));
    assert.deepEqual(events, ['enter:O', 'exit:O', 'enter:O']);
  });

  test('two overlapping geofences', async () => {
    await fence('A', polygon(rect(40, 50, 40.02, 50.02)));
    await fence('Bo', polygon(rect(40.01, 50, 40.03, 50.02)));
    const { walk } = await newWalk();
    assert.deepEqual(await walk(39.995, 50.01), []);
    assert.deepEqual(await walk(40.005, 50.01), ['enter:A']);
    assert.deepEqual(await walk(40.015, 50.01), ['enter:Bo']);
    assert.deepEqual(await walk(40.025, 50.01), ['exit:A']);
    assert.deepEqual(await walk(40.035, 50.01), ['exit:Bo']);
    // Straight into the overlap: both enters, in geofence id order (A was created first).
    assert.deepEqual(await walk(40.015, 50.01), ['enter:A', 'enter:Bo']);
    assert.deepEqual(await walk(40.005, 50.01), ['exit:Bo']);
    // From A only to Bo only: exits first.
    assert.deepEqual(await walk(40.025, 50.01), ['exit:A', 'enter:Bo']);
    // On the shared part of their edges (x = 40.02 is A's east edge, inside Bo).
    assert.deepEqual(await walk(40.02, 50.01), ['enter:A']);
  });

  test('a geofence disabled while inside: no exit; re-enabled, the next location inside enters', async () => {
    const d = await fence('D', polygon(rect(50, 50, 50.01, 50.01)));
    const { device, walk } = await newWalk();
    assert.deepEqual(await walk(50.005, 50.005), ['enter:D']);
    expectStatus(
      await call(t, `/geofences/${d}`, { ...jwt, method: 'PATCH', body: { enabled: false } }),
      200,
    );
    assert.deepEqual(await walk(50.005, 50.005), []);
    assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, []);
    assert.deepEqual(await walk(49.99, 50.005), []); // leaving a disabled geofence: nothing either
    assert.deepEqual(await walk(50.005, 50.005), []);
    expectStatus(await call(t, `/geofences/${d}`, { ...jwt, method: 'PATCH', body: { enabled: true } }), 200);
    assert.deepEqual(await walk(50.006, 50.005), ['enter:D']);
    assert.deepEqual(await walk(49.99, 50.005), ['exit:D']);
  });

  test('a geometry edit takes effect from the next location', async () => {
    const e = await fence('E', polygon(rect(55, 50, 55.01, 50.01)));
    const { walk } = await newWalk();
    assert.deepEqual(await walk(55.005, 50.005), ['enter:E']);
    const move = async (geometry: unknown) =>
      expectStatus(await call(t, `/geofences/${e}`, { ...jwt, method: 'PATCH', body: { geometry } }), 200);
    await move(polygon(rect(55.02, 50, 55.03, 50.01)));
    assert.deepEqual(await walk(55.005, 50.005), ['exit:E']); // same point, fence moved away
    assert.deepEqual(await walk(55.025, 50.005), ['enter:E']);
    await move(circle(55.025, 50.005, 50));
    assert.deepEqual(await walk(55.025, 50.005), []); // still inside the new shape
    assert.deepEqual(await walk(55.027, 50.005), ['exit:E']); // ~143 m from the centre
  });

  test('a deleted geofence: no event, and it leaves the device state silently', async () => {
    const x = await fence('X', polygon(rect(60, 50, 60.01, 50.01)));
    const { device, walk } = await newWalk();
    assert.deepEqual(await walk(60.005, 50.005), ['enter:X']);
    assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, [x]);
    expectStatus(await call(t, `/geofences/${x}`, { ...jwt, method: 'DELETE' }), 204);
    assert.deepEqual(await walk(60.005, 50.005), []);
    assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, []);
    assert.deepEqual(await walk(59.99, 50.005), []);
    // The history keeps the event of the geofence that no longer exists.
    const events = await deviceEvents(t, jwt, device.id);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.geofence_id, e.geofence_name]),
      [['enter', x, 'X']],
    );
  });

  test('the event record: seed event_id, user_id, point, metadata, location link', async () => {
    const g = await fence('Depot', circle(70, 50, 100), { metadata: { site: 'north', dock: 3 } });
    const device = await createDevice(t, jwt, { name: 'truck', user_id: 'driver-42' });
    const timestamp = '2026-03-10T11:30:15.750Z';
    const { location, events } = await postLocation(t, jwt, device.id, {
      point: { type: 'Point', coordinates: [70, 50.0005, 120] },
      timestamp,
      accuracy: 4.5,
      speed: 3.2,
      heading: 90,
      metadata: { trip: 'T-1' },
    });
    assert.equal(location.altitude, 120, 'a GeoJSON third coordinate is the altitude');
    assert.equal(events.length, 1);
    const event = events[0] as EventOut;
    const epoch = Math.floor(Date.parse(timestamp) / 1000);
    assert.deepEqual(
      { ...event, id: undefined, created_at: undefined },
      {
        id: undefined,
        event_id: `${g}_enter_${epoch}`,
        event_type: 'enter',
        event: 'geofence.enter',
        device_id: device.id,
        user_id: 'driver-42',
        geofence_id: g,
        geofence_name: 'Depot',
        point: { type: 'Point', coordinates: [70, 50.0005] },
        location_id: location.id,
        session_id: null,
        occurred_at: timestamp,
        created_at: undefined,
        metadata: { geofence_metadata: { site: 'north', dock: 3 }, event_metadata: { trip: 'T-1' } },
      },
    );
    assert.equal(event.created_at, t.clock.now().toISOString());
    assert.deepEqual(expectStatus(await call(t, `/events/${event.id}`, jwt), 200), event);

    // Without a user_id, the device id stands in.
    const anonymous = await createDevice(t, jwt, { name: 'anonymous' });
    const second = await postLocation(t, jwt, anonymous.id, { coordinates: [70, 50] });
    assert.equal(second.events[0]?.user_id, anonymous.id);

    const after = await getDevice(t, jwt, device.id);
    assert.deepEqual(after.last_location, {
      point: { type: 'Point', coordinates: [70, 50.0005] },
      timestamp,
      accuracy: 4.5,
    });
    assert.equal(after.last_seen_at, t.clock.now().toISOString());
    assert.deepEqual(after.inside_geofence_ids, [g]);
  });
});
