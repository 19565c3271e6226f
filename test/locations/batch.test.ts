/**
 * POST /locations/batch (contract §4.2): each item checked on its own (bad ones reported by index,
 * the rest stored), unknown external ids create devices, items of one device applied in timestamp
 * order, size limits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import {
  at,
  type BatchOut,
  createDevice,
  type DeviceOut,
  deviceEvents,
  getDevice,
  type LocationOut,
  listAll,
} from './helpers.ts';

describe('batch ingestion', () => {
  let t: TestApp;
  let jwt: { token: string };
  let fenceId: string;

  before(async () => {
    // A batch of 1,000 new external ids creates more devices than the free plan's 100.
    t = await startIdentityApp({ env: { DEFAULT_PLAN: 'business' } });
    jwt = { token: (await signUp(t, 'batch')).tokens.access_token };
    fenceId = (await createGeofence(t, jwt, { name: 'Yard', geometry: polygon(rect(2, 2, 2.01, 2.01)) })).id;
  });
  after(async () => t?.close());

  const batch = async (locations: unknown[]) =>
    expectStatus<BatchOut>(await call(t, '/locations/batch', { ...jwt, body: { locations } }), 200, 'batch');

  test('mixed valid and invalid items: the bad ones are rejected by index, the rest stored', async () => {
    const device = await createDevice(t, jwt);
    const result = await batch([
      { device_id: device.id, coordinates: [2.005, 2.005], timestamp: at(0) }, // 0 ok: enter
      { coordinates: [2.005, 2.005] }, // 1 no device reference
      { device_id: device.id, device_external_id: 'x', coordinates: [0, 0] }, // 2 both references
      { device_id: device.id, coordinates: [0, 91] }, // 3 latitude out of range
      { device_id: device.id, coordinates: ['2', 2] }, // 4 wrong type
      { device_id: device.id, coordinates: [0, 0], colour: 'red' }, // 5 unknown field
      { device_id: 'no-such-device', coordinates: [0, 0] }, // 6 unknown device
      { device_id: device.id, point: { type: 'Point', coordinates: [0, 0] }, coordinates: [0, 0] }, // 7 both
      { device_id: device.id, coordinates: [1.99, 2.005], timestamp: at(1) }, // 8 ok: exit
      'not an object', // 9
      { device_id: device.id, coordinates: [0, 0], heading: 361 }, // 10 heading out of range
      { device_id: device.id, coordinates: [0, 0], timestamp: '2026-03-10T13:00:00Z' }, // 11 future
    ]);
    assert.equal(result.accepted, 2);
    const types = Object.fromEntries(
      result.rejected.map((r) => [
        r.index,
        typeof r.detail === 'string' ? r.detail : r.detail.map((i) => `${i.type}@${i.loc.join('.')}`),
      ]),
    );
    assert.deepEqual(types, {
      1: ['missing@body.locations.1.device_id'],
      2: ['value_error@body.locations.2'],
      3: ['less_than_equal@body.locations.3.coordinates.1'],
      4: ['float_parsing@body.locations.4.coordinates.0'],
      5: ['extra_forbidden@body.locations.5.colour'],
      6: 'Device not found',
      7: ['value_error@body.locations.7'],
      9: ['dict_type@body.locations.9'],
      10: ['less_than_equal@body.locations.10.heading'],
      11: ['value_error@body.locations.11.timestamp'],
    });
    assert.deepEqual(
      result.rejected.map((r) => r.index),
      [1, 2, 3, 4, 5, 6, 7, 9, 10, 11],
      'in index order',
    );
    assert.deepEqual(
      result.events.map((e) => [e.event_type, e.device_id, e.geofence_id]),
      [
        ['enter', device.id, fenceId],
        ['exit', device.id, fenceId],
      ],
    );
    const stored = await listAll<LocationOut>(t, jwt, `/devices/${device.id}/locations`);
    assert.equal(stored.length, 2);
  });

  test('unknown external ids create devices (once each); known ones are used', async () => {
    const known = await createDevice(t, jwt, { name: 'known', external_id: 'known-1' });
    const result = await batch([
      { device_external_id: 'new-a', coordinates: [2.005, 2.005], timestamp: at(0) },
      { device_external_id: 'new-b', coordinates: [0, 0], timestamp: at(0) },
      { device_external_id: 'new-a', coordinates: [0, 0], timestamp: at(1) },
      { device_external_id: 'known-1', coordinates: [2.005, 2.005], timestamp: at(0) },
    ]);
    assert.equal(result.accepted, 4);
    assert.deepEqual(result.rejected, []);
    const byExternal = async (externalId: string) =>
      expectStatus<Page<DeviceOut>>(
        await call(t, '/devices', { ...jwt, query: { external_id: externalId } }),
        200,
      ).results;
    const [a] = await byExternal('new-a');
    const [b] = await byExternal('new-b');
    assert.ok(a && b);
    assert.equal((await byExternal('new-a')).length, 1);
    assert.equal(a.name, 'new-a', 'a created device is named after its external id');
    assert.deepEqual(a.inside_geofence_ids, []);
    assert.equal(a.last_location?.timestamp, at(1));
    assert.deepEqual(
      (await deviceEvents(t, jwt, a.id)).map((e) => e.event_type),
      ['enter', 'exit'],
    );
    assert.deepEqual((await getDevice(t, jwt, known.id)).inside_geofence_ids, [fenceId]);
    assert.equal((await byExternal('known-1')).length, 1);
    // A second batch with the same external id reuses the device.
    await batch([{ device_external_id: 'new-b', coordinates: [0, 0] }]);
    assert.equal((await byExternal('new-b')).length, 1);
    assert.equal((await listAll<LocationOut>(t, jwt, `/devices/${b.id}/locations`)).length, 2);
  });

  test("one device's items are applied in timestamp order, whatever their order in the batch", async () => {
    const device = await createDevice(t, jwt);
    const other = await createDevice(t, jwt);
    const result = await batch([
      { device_id: device.id, coordinates: [1.99, 2.005], timestamp: at(4) }, // out
      { device_id: other.id, coordinates: [2.005, 2.005], timestamp: at(2) },
      { device_id: device.id, coordinates: [2.005, 2.005], timestamp: at(3) }, // in
      { device_id: device.id, coordinates: [1.99, 2.005], timestamp: at(1) }, // out
      { device_id: device.id, coordinates: [2.005, 2.005], timestamp: at(2) }, // in
    ]);
    assert.equal(result.accepted, 5);
    // Sorted: out@1, in@2 (enter), in@3, out@4 (exit). None is out of order.
    assert.deepEqual(
      result.events.map((e) => [e.device_id, e.event_type, e.occurred_at]),
      [
        [device.id, 'enter', at(2)],
        [other.id, 'enter', at(2)],
        [device.id, 'exit', at(4)],
      ].sort((x, y) => (x[2] as string).localeCompare(y[2] as string)),
    );
    const stored = await listAll<LocationOut>(t, jwt, `/devices/${device.id}/locations`);
    assert.deepEqual(
      stored.map((l) => [l.timestamp, l.out_of_order]),
      [
        [at(4), false],
        [at(3), false],
        [at(2), false],
        [at(1), false],
      ],
    );
    // A later batch with an older point: out of order, stored, no event.
    const late = await batch([{ device_id: device.id, coordinates: [2.005, 2.005], timestamp: at(0) }]);
    assert.deepEqual([late.accepted, late.events], [1, []]);
    assert.deepEqual((await getDevice(t, jwt, device.id)).inside_geofence_ids, []);
  });

  test('envelope limits: 1..1000 items (422 otherwise), bodies up to 5 MiB', async () => {
    const device = await createDevice(t, jwt);
    const empty = expectError(
      await call(t, '/locations/batch', { ...jwt, body: { locations: [] } }),
      422,
      'VALIDATION_ERROR',
    );
    assert.deepEqual(empty.detail, [
      { type: 'too_short', loc: ['body', 'locations'], msg: 'List should have at least 1 items' },
    ]);
    const item = { device_id: device.id, coordinates: [0, 0] };
    expectError(
      await call(t, '/locations/batch', { ...jwt, body: { locations: Array(1001).fill(item) } }),
      422,
      'VALIDATION_ERROR',
    );
    expectError(
      await call(t, '/locations/batch', { ...jwt, body: { items: [item] } }),
      422,
      'VALIDATION_ERROR',
    );
    // 1000 items of ~2 KiB each: ~2 MiB, above the 1 MiB default limit, under the batch's 5 MiB.
    const padding = 'x'.repeat(2000);
    const big = Array.from({ length: 1000 }, (_v, i) => ({
      device_id: device.id,
      coordinates: [0.001 * (i % 100), 0.001],
      timestamp: at(i / 10),
      metadata: { padding },
    }));
    const ok = await batch(big);
    assert.equal(ok.accepted, 1000);
    const tooBig = await call(t, '/locations/batch', {
      ...jwt,
      body: { locations: big.map((l) => ({ ...l, metadata: { padding: 'y'.repeat(6000) } })) },
    });
    assert.equal(tooBig.statusCode, 413, tooBig.body);
    // The single-location endpoint keeps the 1 MiB limit.
    const single = await call(t, `/devices/${device.id}/locations`, {
      ...jwt,
      body: { coordinates: [0, 0], metadata: { padding: 'z'.repeat(1_100_000) } },
    });
    assert.equal(single.statusCode, 413);
  });

  test('many devices in one batch: one transaction, every device state written', async () => {
    const items = Array.from({ length: 300 }, (_v, i) => ({
      device_external_id: `fleet-${i % 100}`,
      coordinates: i % 2 === 0 ? [2.005, 2.005] : [0, 0],
      timestamp: at(i),
    }));
    const result = await batch(items);
    assert.equal(result.accepted, 300);
    // Device k gets items k, k+100, k+200: inside iff the index is even.
    let expectedEvents = 0;
    for (let k = 0; k < 100; k++) {
      const seq = [k, k + 100, k + 200].map((i) => i % 2 === 0);
      let was = false;
      for (const inside of seq) {
        if (inside !== was) expectedEvents++;
        was = inside;
      }
    }
    assert.equal(result.events.length, expectedEvents);
    const fleet = await listAll<DeviceOut>(t, jwt, '/devices', { q: 'fleet-' });
    assert.equal(fleet.length, 100);
    for (const d of fleet) {
      const k = Number(d.external_id?.slice('fleet-'.length));
      assert.equal(d.last_location?.timestamp, at(k + 200));
      assert.deepEqual(d.inside_geofence_ids, (k + 200) % 2 === 0 ? [fenceId] : []);
    }
  });

  test('the outbox dispatcher is woken by a commit that stored events for a subscriber, not by others', async () => {
    let wakes = 0;
    const unsubscribe = t.deps.signals.outbox.subscribe(() => {
      wakes++;
    });
    try {
      const device = await createDevice(t, jwt);
      const step = (i: number, inside: boolean) => ({
        device_id: device.id,
        coordinates: inside ? [2.005, 2.005] : [1, 1],
        timestamp: at(i),
      });
      assert.equal((await batch([step(0, false)])).events.length, 0);
      assert.equal(wakes, 0, 'no events');
      // No webhook yet: the event's outbox row is stored dispatched, nobody to wake.
      assert.equal((await batch([step(1, true)])).events.length, 1);
      assert.equal(wakes, 0, 'events, but no subscriber');
      const hook = expectStatus<{ id: string }>(
        await call(t, '/webhooks', { ...jwt, body: { name: 'wake', url: 'https://hooks.example.com/in' } }),
        201,
        'create webhook',
      );
      try {
        assert.equal((await batch([step(2, false)])).events.length, 1);
        assert.equal(wakes, 1, 'events for a subscriber');
      } finally {
        await call(t, `/webhooks/${hook.id}`, { ...jwt, method: 'DELETE' });
      }
    } finally {
      unsubscribe();
    }
  });
});
