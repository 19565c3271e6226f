/**
 * GET /geofences/{id}/devices (contract §4.5): the devices inside a geofence now, read from
 * `geofence_presence` (rows seeded here directly, so that visits of chosen times can be listed;
 * ingestion's own writes are tested in test/locations), joined to the devices. Newest `entered_at` first, the list
 * envelope and its pagination, `dwelling` once the visit's dwell happened, only this geofence's
 * visits, and 404 for an absent geofence or one of another workspace.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  expectError,
  expectStatus,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { circle, createGeofence, type GeofenceOut } from './helpers.ts';

interface DeviceInsideOut {
  device_id: string;
  name: string;
  external_id: string | null;
  user_id: string | null;
  entered_at: string;
  dwelling: boolean;
  last_seen_at: string | null;
  last_location: { point: unknown; timestamp: string; accuracy: number | null } | null;
}

describe('GET /geofences/{id}/devices', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let other: SignedUpUser;
  let yard: GeofenceOut;
  let gate: GeofenceOut;
  let empty: GeofenceOut;
  let theirs: GeofenceOut;
  const devices: Record<string, string> = {};
  /** 11:0n on the test day (the test clock starts at 12:00): the visits begin at minutes 1 to 5. */
  const minute = (n: number) => new Date(Date.UTC(2026, 2, 10, 11, n));

  const get = async (user: SignedUpUser, geofenceId: string, query: Record<string, string> = {}) =>
    call(t, `/geofences/${geofenceId}/devices`, { token: user.tokens.access_token, query });

  const createDevice = async (body: Record<string, unknown>) =>
    expectStatus<{ id: string }>(
      await call(t, '/devices', { token: owner.tokens.access_token, body }),
      201,
      'create device',
    ).id;

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'presence');
    other = await signUp(t, 'presence-other');
    const token = { token: owner.tokens.access_token };
    yard = await createGeofence(t, token, { name: 'Yard', geometry: circle(9, 47, 300), dwell_seconds: 600 });
    gate = await createGeofence(t, token, { name: 'Gate', geometry: circle(9.1, 47, 100) });
    empty = await createGeofence(t, token, { name: 'Empty', geometry: circle(9.2, 47, 100) });
    theirs = await createGeofence(
      t,
      { token: other.tokens.access_token },
      {
        name: 'Theirs',
        geometry: circle(9, 47, 300),
      },
    );
    devices.truck = await createDevice({ name: 'truck', external_id: 'truck-1', user_id: 'driver-1' });
    devices.van = await createDevice({ name: 'van' });
    devices.bike = await createDevice({ name: 'bike' });
    devices.crane = await createDevice({ name: 'crane' });
    // The truck's last location (away from every geofence, so evaluation keeps out of this test).
    expectStatus(
      await call(t, `/devices/${devices.truck}/locations`, {
        ...token,
        body: { coordinates: [20, 20], accuracy: 7, timestamp: minute(4).toISOString() },
      }),
      201,
    );

    const { db } = t.deps.database;
    const visit = (device: string, geofence: GeofenceOut, enteredAt: Date, dwellSeconds: number | null) =>
      db
        .insertInto('geofence_presence')
        .values({
          device_id: device,
          geofence_id: geofence.id,
          workspace_id: owner.workspace.id,
          entered_at: enteredAt,
          dwell_due_at: dwellSeconds === null ? null : new Date(enteredAt.getTime() + dwellSeconds * 1000),
          dwelled_at: null,
        })
        .execute();
    await visit(devices.truck, yard, minute(1), 600);
    await visit(devices.van, yard, minute(3), 600);
    await visit(devices.bike, yard, minute(3), 600);
    await visit(devices.crane, yard, minute(2), 600);
    await visit(devices.crane, gate, minute(5), null);
    // The truck's dwell happened: the dwell worker marks the visit as it stores the event.
    await db
      .updateTable('geofence_presence')
      .set({ dwelled_at: minute(11) })
      .where('device_id', '=', devices.truck)
      .where('geofence_id', '=', yard.id)
      .execute();
  });
  after(async () => t.close());

  test('the devices inside, latest to enter first, with their visit and last report', async () => {
    const page = expectStatus<Page<DeviceInsideOut>>(await get(owner, yard.id), 200);
    assert.deepEqual(page.pagination, { total: 4, limit: 50, offset: 0, has_more: false });
    // The van and the bike entered in the same minute: the larger device id (the later one) first.
    const sameMinute = [devices.van, devices.bike].sort().reverse();
    assert.deepEqual(
      page.results.map((d) => d.device_id),
      [...sameMinute, devices.crane, devices.truck],
    );
    const truck = page.results.find((d) => d.device_id === devices.truck);
    assert.deepEqual(truck, {
      device_id: devices.truck,
      name: 'truck',
      external_id: 'truck-1',
      user_id: 'driver-1',
      entered_at: minute(1).toISOString(),
      dwelling: true,
      last_seen_at: truck?.last_seen_at,
      last_location: {
        point: { type: 'Point', coordinates: [20, 20] },
        timestamp: minute(4).toISOString(),
        accuracy: 7,
      },
    });
    assert.ok(truck?.last_seen_at !== null && !Number.isNaN(Date.parse(truck?.last_seen_at ?? '')));
    const crane = page.results.find((d) => d.device_id === devices.crane);
    assert.deepEqual(crane, {
      device_id: devices.crane,
      name: 'crane',
      external_id: null,
      user_id: null,
      entered_at: minute(2).toISOString(),
      dwelling: false,
      last_seen_at: null,
      last_location: null,
    });
  });

  test('pagination: limit and offset over the same order', async () => {
    const all = expectStatus<Page<DeviceInsideOut>>(await get(owner, yard.id), 200).results.map(
      (d) => d.device_id,
    );
    const first = expectStatus<Page<DeviceInsideOut>>(await get(owner, yard.id, { limit: '3' }), 200);
    assert.deepEqual(first.pagination, { total: 4, limit: 3, offset: 0, has_more: true });
    const second = expectStatus<Page<DeviceInsideOut>>(
      await get(owner, yard.id, { limit: '3', offset: '3' }),
      200,
    );
    assert.deepEqual(second.pagination, { total: 4, limit: 3, offset: 3, has_more: false });
    assert.deepEqual(
      [...first.results, ...second.results].map((d) => d.device_id),
      all,
    );
    const past = expectStatus<Page<DeviceInsideOut>>(await get(owner, yard.id, { offset: '10' }), 200);
    assert.deepEqual(past, { results: [], pagination: { total: 4, limit: 50, offset: 10, has_more: false } });
    expectError(await get(owner, yard.id, { limit: '0' }), 422, 'VALIDATION_ERROR');
  });

  test("only this geofence's visits: the gate holds the crane alone, a geofence nobody is in none", async () => {
    const gatePage = expectStatus<Page<DeviceInsideOut>>(await get(owner, gate.id), 200);
    assert.deepEqual(
      gatePage.results.map((d) => [d.device_id, d.dwelling]),
      [[devices.crane, false]],
    );
    assert.deepEqual(expectStatus<Page<DeviceInsideOut>>(await get(owner, empty.id), 200), {
      results: [],
      pagination: { total: 0, limit: 50, offset: 0, has_more: false },
    });
  });

  test('404 for an absent geofence and for one of another workspace, either way round', async () => {
    expectError(await get(owner, '00000000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await get(owner, theirs.id), 404, 'NOT_FOUND');
    expectError(await get(other, yard.id), 404, 'NOT_FOUND');
    assert.equal(expectStatus<Page<DeviceInsideOut>>(await get(other, theirs.id), 200).pagination.total, 0);
  });
});
