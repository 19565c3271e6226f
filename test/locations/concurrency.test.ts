/**
 * Exactness under concurrency (contract §4.3): parallel requests for one device give the events of
 * a sequential run. Single-location requests of a workspace are group-committed (several requests,
 * one transaction); batch requests are one transaction each, so parallel batches sharing devices
 * really overlap on PostgreSQL (the app has a pool of several connections) and only the device row
 * locks (`FOR UPDATE`, taken in id order) keep them exact and deadlock-free. On SQLite the single
 * writer serialises them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pointInPolygon } from '../../src/geo/index.ts';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import {
  at,
  type BatchOut,
  createDevice,
  deviceEvents,
  type EventOut,
  getDevice,
  type LocationOut,
  listAll,
  postLocation,
} from './helpers.ts';

const N = 20;

describe('concurrent locations of one device', () => {
  let t: TestApp;
  let jwt: { token: string };
  let fenceId: string;
  const square = polygon(rect(5, 45, 5.01, 45.01));

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'concurrency')).tokens.access_token };
    fenceId = (await createGeofence(t, jwt, { name: 'Q', geometry: square })).id;
  });
  after(async () => t?.close());

  test(`${N} parallel locations inside one geofence: exactly one enter, as sequentially`, async () => {
    const sequential = await createDevice(t, jwt, { name: 'sequential' });
    for (let i = 0; i < N; i++) {
      await postLocation(t, jwt, sequential.id, { coordinates: [5.005, 45.005 + i * 1e-5] });
    }
    const parallel = await createDevice(t, jwt, { name: 'parallel' });
    const responses = await Promise.all(
      Array.from({ length: N }, (_v, i) =>
        postLocation(t, jwt, parallel.id, { coordinates: [5.005, 45.005 + i * 1e-5] }),
      ),
    );
    const summary = (events: EventOut[]) => events.map((e) => `${e.event_type}:${e.geofence_id}`);
    assert.deepEqual(summary(await deviceEvents(t, jwt, sequential.id)), [`enter:${fenceId}`]);
    assert.deepEqual(summary(await deviceEvents(t, jwt, parallel.id)), [`enter:${fenceId}`]);
    assert.equal(responses.flatMap((r) => r.events).length, 1, 'one response carries the enter');
    assert.deepEqual((await getDevice(t, jwt, parallel.id)).inside_geofence_ids, [fenceId]);
  });

  test(`${N} parallel in/out locations: the events are exactly those of the order they were applied in`, async () => {
    const device = await createDevice(t, jwt, { name: 'zigzag' });
    const inside: [number, number] = [5.005, 45.005];
    const outside: [number, number] = [4.995, 45.005];
    const responses = await Promise.all(
      Array.from({ length: N }, (_v, i) =>
        postLocation(t, jwt, device.id, { coordinates: i % 2 === 0 ? inside : outside, timestamp: at(i) }),
      ),
    );
    // Location ids are UUIDv7 created inside each transaction, after the device lock: their order is
    // the order the locations were applied in. Replay that order sequentially.
    const applied = responses.map((r) => r.location).sort((a, b) => (a.id < b.id ? -1 : 1));
    const expected = replay(applied);
    const events = await deviceEvents(t, jwt, device.id);
    assert.deepEqual(
      events.map((e) => `${e.event_type}@${e.location_id}`),
      expected.events,
    );
    const all = await listAll<LocationOut>(t, jwt, `/devices/${device.id}/locations`);
    assert.equal(all.length, N);
    assert.deepEqual(
      (await getDevice(t, jwt, device.id)).inside_geofence_ids,
      expected.inside ? [fenceId] : [],
    );
  });

  test('parallel batches sharing two devices: separate transactions, exact events, no deadlock', async () => {
    const d1 = await createDevice(t, jwt, { name: 'shared-1' });
    const d2 = await createDevice(t, jwt, { name: 'shared-2' });
    const inside: [number, number] = [5.005, 45.005];
    const outside: [number, number] = [4.995, 45.005];
    // Batch b carries steps 2b and 2b+1 of both devices, listing the devices in opposite orders in
    // alternate batches: without ordered locking, two such transactions could deadlock.
    const bodies = Array.from({ length: 10 }, (_v, b) => {
      const items = [d1, d2].flatMap((d) =>
        [2 * b, 2 * b + 1].map((step) => ({
          device_id: d.id,
          coordinates: (step + (d === d1 ? 0 : 1)) % 3 === 0 ? inside : outside,
          timestamp: at(step),
        })),
      );
      return { locations: b % 2 === 0 ? items : items.reverse() };
    });
    // Single-location requests for d1 at the same time: their group transaction contends too.
    const singles = Array.from({ length: 6 }, (_v, i) =>
      postLocation(t, jwt, d1.id, { coordinates: i % 2 === 0 ? inside : outside, timestamp: at(20 + i) }),
    );
    const answers = await Promise.all(
      bodies.map(async (body) =>
        expectStatus<BatchOut>(await call(t, '/locations/batch', { ...jwt, body }), 200),
      ),
    );
    await Promise.all(singles);
    assert.ok(answers.every((a) => a.accepted === 4 && a.rejected.length === 0));
    for (const device of [d1, d2]) {
      const stored = await listAll<LocationOut>(t, jwt, `/devices/${device.id}/locations`);
      assert.equal(stored.length, device === d1 ? 26 : 20);
      const expected = replay([...stored].sort((a, b) => (a.id < b.id ? -1 : 1)));
      const events = await deviceEvents(t, jwt, device.id);
      assert.deepEqual(
        events.map((e) => `${e.event_type}@${e.location_id}`),
        expected.events,
      );
      assert.deepEqual(
        (await getDevice(t, jwt, device.id)).inside_geofence_ids,
        expected.inside ? [fenceId] : [],
      );
    }
  });

  /** The events a sequential run over `applied` (in that order) produces, checking out_of_order. */
  function replay(applied: LocationOut[]): { events: string[]; inside: boolean } {
    const events: string[] = [];
    let newest = Number.NEGATIVE_INFINITY;
    let inside = false;
    for (const location of applied) {
      const time = Date.parse(location.timestamp);
      const outOfOrder = time < newest;
      assert.equal(location.out_of_order, outOfOrder, `out_of_order of ${location.timestamp}`);
      if (outOfOrder) continue;
      newest = time;
      const [lng, lat] = location.point.coordinates;
      const now = pointInPolygon(lng, lat, square);
      if (now !== inside) events.push(`${now ? 'enter' : 'exit'}@${location.id}`);
      inside = now;
    }
    return { events, inside };
  }
});
