/**
 * Reading back what the pipeline stored: a device's location history (`from`, `to`, `session_id`,
 * newest first, pagination) and the event list (`device_id`, `geofence_id`, `event_type`, `from`,
 * `to`), plus the single-location validation rules (422 shapes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import { at, createDevice, type EventOut, type LocationOut, listAll, postLocation } from './helpers.ts';

describe('location history and event filters', () => {
  let t: TestApp;
  let jwt: { token: string };
  let g1: string;
  let g2: string;
  let d1: string;
  let d2: string;

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'history')).tokens.access_token };
    g1 = (await createGeofence(t, jwt, { name: 'G1', geometry: polygon(rect(4, 4, 4.01, 4.01)) })).id;
    g2 = (await createGeofence(t, jwt, { name: 'G2', geometry: polygon(rect(4.02, 4, 4.03, 4.01)) })).id;
    d1 = (await createDevice(t, jwt, { name: 'd1' })).id;
    d2 = (await createDevice(t, jwt, { name: 'd2' })).id;
    // d1: enter G1 @1, exit G1 @2, enter G2 @3, exit G2 @4; d2: enter G1 @2, exit G1 @5.
    const walk: Array<[string, number, number]> = [
      [d1, 4.005, 1],
      [d1, 4.015, 2],
      [d1, 4.025, 3],
      [d1, 4.035, 4],
      [d2, 4.005, 2],
      [d2, 3.99, 5],
    ];
    for (const [device, lng, step] of walk) {
      await postLocation(t, jwt, device, { coordinates: [lng, 4.005], timestamp: at(step) });
    }
  });
  after(async () => t?.close());

  const events = async (query: Record<string, string>) =>
    (await listAll<EventOut>(t, jwt, '/events', query)).map(
      (e) =>
        `${e.device_id === d1 ? 'd1' : 'd2'}:${e.event_type}:${e.geofence_id === g1 ? 'G1' : 'G2'}@${e.occurred_at}`,
    );

  test('events: newest first, each filter and their combination', async () => {
    assert.deepEqual(await events({}), [
      `d2:exit:G1@${at(5)}`,
      `d1:exit:G2@${at(4)}`,
      `d1:enter:G2@${at(3)}`,
      `d2:enter:G1@${at(2)}`,
      `d1:exit:G1@${at(2)}`,
      `d1:enter:G1@${at(1)}`,
    ]);
    assert.deepEqual(await events({ device_id: d2 }), [`d2:exit:G1@${at(5)}`, `d2:enter:G1@${at(2)}`]);
    assert.deepEqual(await events({ geofence_id: g2 }), [`d1:exit:G2@${at(4)}`, `d1:enter:G2@${at(3)}`]);
    assert.deepEqual(await events({ event_type: 'enter', device_id: d1 }), [
      `d1:enter:G2@${at(3)}`,
      `d1:enter:G1@${at(1)}`,
    ]);
    assert.deepEqual(await events({ from: at(2), to: at(3) }), [
      `d1:enter:G2@${at(3)}`,
      `d2:enter:G1@${at(2)}`,
      `d1:exit:G1@${at(2)}`,
    ]);
    assert.deepEqual(await events({ geofence_id: g1, event_type: 'exit', from: at(3) }), [
      `d2:exit:G1@${at(5)}`,
    ]);
    const page = expectStatus<Page<EventOut>>(
      await call(t, '/events', { ...jwt, query: { limit: '4', offset: '4' } }),
      200,
    );
    assert.deepEqual(page.pagination, { total: 6, limit: 4, offset: 4, has_more: false });
    expectError(
      await call(t, '/events', { ...jwt, query: { event_type: 'linger' } }),
      422,
      'VALIDATION_ERROR',
    );
    expectError(await call(t, '/events', { ...jwt, query: { from: 'yesterday' } }), 422, 'VALIDATION_ERROR');
    expectError(await call(t, '/events/00000000-0000-7000-8000-000000000000', jwt), 404, 'NOT_FOUND');
  });

  test('history: newest first, from/to inclusive, pagination', async () => {
    const stamps = async (query: Record<string, string>) =>
      (await listAll<LocationOut>(t, jwt, `/devices/${d1}/locations`, query)).map((l) => l.timestamp);
    assert.deepEqual(await stamps({}), [at(4), at(3), at(2), at(1)]);
    assert.deepEqual(await stamps({ from: at(2), to: at(3) }), [at(3), at(2)]);
    assert.deepEqual(await stamps({ from: at(4) }), [at(4)]);
    assert.deepEqual(await stamps({ to: at(1) }), [at(1)]);
    const page = expectStatus<Page<LocationOut>>(
      await call(t, `/devices/${d1}/locations`, { ...jwt, query: { limit: '3' } }),
      200,
    );
    assert.deepEqual(page.pagination, { total: 4, limit: 3, offset: 0, has_more: true });
    assert.deepEqual(await stamps({ session_id: 'none' }), []);
  });

  test('single location validation: 422 with the contract issue shapes', async () => {
    const post = (body: unknown) => call(t, `/devices/${d1}/locations`, { ...jwt, body });
    const issues = async (body: unknown) =>
      (
        expectError(await post(body), 422, 'VALIDATION_ERROR').detail as Array<{
          type: string;
          loc: unknown[];
        }>
      ).map((i) => `${i.type}@${i.loc.join('.')}`);
    assert.deepEqual(await issues({}), ['missing@body.point']);
    assert.deepEqual(await issues({ coordinates: [0, 0], point: { type: 'Point', coordinates: [0, 0] } }), [
      'value_error@body',
    ]);
    assert.deepEqual(await issues({ coordinates: [-180.5, 90.5] }), [
      'greater_than_equal@body.coordinates.0',
      'less_than_equal@body.coordinates.1',
    ]);
    assert.deepEqual(await issues({ point: { type: 'Point', coordinates: [181, 0] } }), [
      'less_than_equal@body.point.coordinates.0',
    ]);
    assert.deepEqual(await issues({ point: { type: 'LineString', coordinates: [0, 0] } }), [
      'enum@body.point.type',
    ]);
    assert.deepEqual(await issues({ coordinates: [0] }), ['too_short@body.coordinates']);
    assert.deepEqual(await issues({ coordinates: [0, 0], accuracy: -1 }), [
      'greater_than_equal@body.accuracy',
    ]);
    assert.deepEqual(await issues({ coordinates: [0, 0], heading: 400 }), ['less_than_equal@body.heading']);
    assert.deepEqual(await issues({ coordinates: [0, 0], timestamp: 'soon' }), [
      'value_error@body.timestamp',
    ]);
    assert.deepEqual(await issues({ coordinates: [0, 0], timestamp: '2026-03-10T12:11:00Z' }), [
      'value_error@body.timestamp',
    ]);
    // Boundaries of the ranges are valid; ten minutes ahead is tolerated; nulls mean "not given".
    const ok = await post({
      coordinates: [180, -90],
      heading: 360,
      accuracy: 0,
      speed: null,
      timestamp: '2026-03-10T12:10:00Z',
    });
    assert.equal(ok.statusCode, 201, ok.body);
    const body = ok.json() as { location: LocationOut };
    assert.equal(body.location.timestamp, '2026-03-10T12:10:00.000Z');
    assert.equal(body.location.speed, null);
    const unknown = await call(t, '/devices/nope/locations', { ...jwt, body: { coordinates: [0, 0] } });
    assert.deepEqual(expectError(unknown, 404, 'NOT_FOUND'), {
      detail: 'Device not found',
      error_code: 'NOT_FOUND',
    });
  });
});
