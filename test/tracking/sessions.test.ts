/**
 * Tracking sessions (contract §4.4): one active session per device, stop, the summary kept current
 * by ingestion (count, haversine distance, duration, events, geofences visited), session ids on
 * locations and events, filters, and a session's locations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { haversineDistance } from '../../src/geo/index.ts';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import {
  at,
  type BatchOut,
  createDevice,
  type LocationOut,
  listAll,
  postLocation,
  type SessionOut,
  WALK_START,
} from '../locations/helpers.ts';

describe('tracking sessions', () => {
  let t: TestApp;
  let jwt: { token: string };
  let a: string;
  let b: string;

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'sessions')).tokens.access_token };
    a = (await createGeofence(t, jwt, { name: 'A', geometry: polygon(rect(3, 3, 3.01, 3.01)) })).id;
    b = (await createGeofence(t, jwt, { name: 'B', geometry: polygon(rect(3.02, 3, 3.03, 3.01)) })).id;
  });
  after(async () => t?.close());

  const start = (deviceId: string, body?: unknown) =>
    call(t, `/devices/${deviceId}/sessions`, { ...jwt, method: 'POST', ...(body ? { body } : {}) });

  test('start, second start refused, summary kept current, stop, stop again refused', async () => {
    // The session starts at WALK_START so that durations follow the walk's timestamps.
    t.clock.set(WALK_START);
    const device = await createDevice(t, jwt);
    const before = await postLocation(t, jwt, device.id, { coordinates: [2.99, 3.005], timestamp: at(0) });
    assert.equal(before.location.session_id, null);

    const session = expectStatus<SessionOut>(await start(device.id, { metadata: { route: 7 } }), 201);
    assert.deepEqual(
      { ...session, id: undefined },
      {
        id: undefined,
        device_id: device.id,
        status: 'active',
        started_at: new Date(WALK_START).toISOString(),
        ended_at: null,
        metadata: { route: 7 },
        summary: {
          location_count: 0,
          distance_m: 0,
          duration_s: 0,
          event_count: 0,
          geofence_ids_visited: [],
        },
      },
    );
    assert.deepEqual(
      expectError(await start(device.id), 400, 'SESSION_ACTIVE').detail,
      'Device already has an active session',
    );

    t.clock.set(WALK_START + 3_600_000);
    const path: Array<[number, number, number]> = [
      [3.005, 3.005, 1], // enter A
      [3.015, 3.005, 2], // exit A
      [3.025, 3.005, 3], // enter B
    ];
    for (const [lng, lat, step] of path) {
      const { location, events } = await postLocation(t, jwt, device.id, {
        coordinates: [lng, lat],
        timestamp: at(step),
      });
      assert.equal(location.session_id, session.id);
      for (const e of events) assert.equal(e.session_id, session.id);
    }
    // An out-of-order location carries the session too and is counted, but is not on the path.
    const late = await postLocation(t, jwt, device.id, { coordinates: [0, 0], timestamp: at(0) });
    assert.deepEqual([late.location.session_id, late.location.out_of_order], [session.id, true]);
    // Batch locations join the session as well.
    const batch = expectStatus<BatchOut>(
      await call(t, '/locations/batch', {
        ...jwt,
        body: { locations: [{ device_id: device.id, coordinates: [3.04, 3.005], timestamp: at(4) }] },
      }),
      200,
    );
    assert.equal(batch.events[0]?.session_id, session.id);

    const current = expectStatus<SessionOut>(await call(t, `/sessions/${session.id}`, jwt), 200);
    const distance =
      haversineDistance(3.005, 3.005, 3.015, 3.005) +
      haversineDistance(3.015, 3.005, 3.025, 3.005) +
      haversineDistance(3.025, 3.005, 3.04, 3.005);
    assert.equal(current.status, 'active');
    assert.equal(current.summary.location_count, 5);
    assert.ok(
      Math.abs(current.summary.distance_m - distance) < 1e-6,
      `${current.summary.distance_m} vs ${distance}`,
    );
    assert.equal(current.summary.duration_s, 40, 'start to the newest in-order location');
    assert.equal(current.summary.event_count, 4, 'enter A, exit A, enter B, exit B');
    assert.deepEqual(current.summary.geofence_ids_visited, [a, b]);

    const sessionLocations = await listAll<LocationOut>(t, jwt, `/sessions/${session.id}/locations`);
    assert.deepEqual(
      sessionLocations.map((l) => l.timestamp),
      [at(4), at(3), at(2), at(1), at(0)],
      'newest first',
    );
    const filtered = expectStatus<Page<LocationOut>>(
      await call(t, `/devices/${device.id}/locations`, {
        ...jwt,
        query: { session_id: session.id, limit: '2' },
      }),
      200,
    );
    assert.deepEqual(
      [filtered.pagination.total, filtered.results.map((l) => l.timestamp)],
      [5, [at(4), at(3)]],
    );

    t.clock.set(WALK_START + 7_200_000);
    const stopped = expectStatus<SessionOut>(
      await call(t, `/sessions/${session.id}/stop`, { ...jwt, method: 'POST' }),
      200,
    );
    assert.equal(stopped.status, 'completed');
    assert.equal(stopped.ended_at, new Date(WALK_START + 7_200_000).toISOString());
    assert.equal(stopped.summary.duration_s, 7200, 'start to end once completed');
    assert.equal(stopped.summary.location_count, 5);
    const again = expectError(
      await call(t, `/sessions/${session.id}/stop`, { ...jwt, method: 'POST' }),
      400,
      undefined,
    );
    assert.equal(again.detail, 'Session is already completed');

    const afterStop = await postLocation(t, jwt, device.id, {
      coordinates: [3.005, 3.005],
      timestamp: at(5),
    });
    assert.equal(afterStop.location.session_id, null);
    const final = expectStatus<SessionOut>(await call(t, `/sessions/${session.id}`, jwt), 200);
    assert.equal(final.summary.location_count, 5, 'a completed session no longer counts');

    // A new session may start once the previous one is completed.
    const next = expectStatus<SessionOut>(await start(device.id), 201);
    assert.notEqual(next.id, session.id);
    t.clock.set('2026-03-10T12:00:00.000Z');
  });

  test('list filters: device_id and status, newest first', async () => {
    const d1 = await createDevice(t, jwt);
    const d2 = await createDevice(t, jwt);
    const s1 = expectStatus<SessionOut>(await start(d1.id), 201);
    t.clock.advance(1000);
    const s2 = expectStatus<SessionOut>(await start(d2.id), 201);
    expectStatus(await call(t, `/sessions/${s1.id}/stop`, { ...jwt, method: 'POST' }), 200);
    const ids = async (query: Record<string, string>) =>
      (await listAll<SessionOut>(t, jwt, '/sessions', query)).map((s) => s.id);
    assert.deepEqual(await ids({ device_id: d1.id }), [s1.id]);
    assert.deepEqual(await ids({ device_id: d2.id, status: 'active' }), [s2.id]);
    assert.deepEqual(await ids({ device_id: d1.id, status: 'active' }), []);
    const all = await ids({});
    assert.ok(all.indexOf(s2.id) < all.indexOf(s1.id), 'newest first');
    const completed = await listAll<SessionOut>(t, jwt, '/sessions', { status: 'completed' });
    assert.ok(completed.every((s) => s.status === 'completed' && s.ended_at !== null));
    expectError(await call(t, '/sessions', { ...jwt, query: { status: 'paused' } }), 422, 'VALIDATION_ERROR');
  });

  test('unknown ids → 404; deleting a device removes its sessions', async () => {
    expectError(await start('00000000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await call(t, '/sessions/nope', jwt), 404, 'NOT_FOUND');
    expectError(await call(t, '/sessions/nope/stop', { ...jwt, method: 'POST' }), 404, 'NOT_FOUND');
    expectError(await call(t, '/sessions/nope/locations', jwt), 404, 'NOT_FOUND');
    const device = await createDevice(t, jwt);
    const session = expectStatus<SessionOut>(await start(device.id), 201);
    expectStatus(await call(t, `/devices/${device.id}`, { ...jwt, method: 'DELETE' }), 204);
    const gone = expectError(await call(t, `/sessions/${session.id}`, jwt), 404, 'NOT_FOUND');
    assert.equal(gone.detail, 'Session not found');
  });

  test('concurrent starts on one device: exactly one wins', async () => {
    const device = await createDevice(t, jwt);
    const results = await Promise.all(Array.from({ length: 8 }, () => start(device.id)));
    const statuses = results.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [201, 400, 400, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.statusCode === 400)) {
      assert.equal(r.json().error_code, 'SESSION_ACTIVE');
    }
  });
});
