/**
 * Device CRUD through HTTP (contract §4.1): the record, external_id uniqueness, list filters and
 * pagination, partial updates, deletion (locations and sessions go, events stay), scopes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  createApiKey,
  expectError,
  expectStatus,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { createDevice, type DeviceOut, deviceEvents, listAll, postLocation } from '../locations/helpers.ts';

describe('device CRUD', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'devices');
    jwt = { token: owner.tokens.access_token };
  });
  after(async () => t?.close());

  test('create → 201 with the full record; GET returns it', async () => {
    const res = await call(t, '/devices', {
      ...jwt,
      body: { name: 'Van 1', external_id: 'van-1', user_id: 'driver-7', metadata: { plate: 'B-123' } },
    });
    const device = expectStatus<DeviceOut>(res, 201);
    assert.match(device.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual(
      { ...device, id: undefined },
      {
        id: undefined,
        workspace_id: owner.workspace.id,
        name: 'Van 1',
        external_id: 'van-1',
        user_id: 'driver-7',
        metadata: { plate: 'B-123' },
        last_location: null,
        last_seen_at: null,
        inside_geofence_ids: [],
        created_at: t.clock.now().toISOString(),
        updated_at: t.clock.now().toISOString(),
      },
    );
    assert.deepEqual(expectStatus(await call(t, `/devices/${device.id}`, jwt), 200), device);
  });

  test('external_id is unique in the workspace (create and update) → 400 DUPLICATE_RESOURCE', async () => {
    await createDevice(t, jwt, { external_id: 'dup-1' });
    const dup = expectError(
      await call(t, '/devices', { ...jwt, body: { name: 'x', external_id: 'dup-1' } }),
      400,
      'DUPLICATE_RESOURCE',
    );
    assert.match(String(dup.detail), /dup-1/);
    const other = await createDevice(t, jwt, { external_id: 'dup-2' });
    expectError(
      await call(t, `/devices/${other.id}`, { ...jwt, method: 'PATCH', body: { external_id: 'dup-1' } }),
      400,
      'DUPLICATE_RESOURCE',
    );
    // Keeping its own external id is fine; several devices may have none.
    expectStatus(
      await call(t, `/devices/${other.id}`, { ...jwt, method: 'PATCH', body: { external_id: 'dup-2' } }),
      200,
    );
    await createDevice(t, jwt);
    await createDevice(t, jwt);
    // Concurrent creates with one external id: one wins.
    const racing = await Promise.all(
      Array.from({ length: 5 }, () =>
        call(t, '/devices', { ...jwt, body: { name: 'r', external_id: 'race' } }),
      ),
    );
    assert.deepEqual(racing.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400]);
  });

  test('validation: name required, unknown fields forbidden → 422', async () => {
    const missing = expectError(await call(t, '/devices', { ...jwt, body: {} }), 422, 'VALIDATION_ERROR');
    assert.deepEqual(missing.detail, [{ type: 'missing', loc: ['body', 'name'], msg: 'Field required' }]);
    const extra = expectError(
      await call(t, '/devices', { ...jwt, body: { name: 'x', colour: 'red' } }),
      422,
      'VALIDATION_ERROR',
    );
    assert.deepEqual(extra.detail, [
      { type: 'extra_forbidden', loc: ['body', 'colour'], msg: 'Extra inputs are not permitted' },
    ]);
    expectError(await call(t, '/devices', { ...jwt, body: { name: '' } }), 422, 'VALIDATION_ERROR');
  });

  test('list: newest first, filters external_id and q, pagination', async () => {
    const ws = await signUp(t, 'devices-list');
    const token = { token: ws.tokens.access_token };
    const made: DeviceOut[] = [];
    for (const [name, external_id] of [
      ['Truck North', 'T-N'],
      ['Truck South', 'T-S'],
      ['Bike 100%', 'B_1'],
    ] as const) {
      made.push(await createDevice(t, token, { name, external_id }));
      t.clock.advance(1000);
    }
    const all = await listAll<DeviceOut>(t, token, '/devices');
    assert.deepEqual(
      all.map((d) => d.name),
      ['Bike 100%', 'Truck South', 'Truck North'],
    );
    const names = async (query: Record<string, string>) =>
      (await listAll<DeviceOut>(t, token, '/devices', query)).map((d) => d.name);
    assert.deepEqual(await names({ external_id: 'T-S' }), ['Truck South']);
    assert.deepEqual(await names({ q: 'truck' }), ['Truck South', 'Truck North']);
    assert.deepEqual(await names({ q: '100%' }), ['Bike 100%'], 'wildcards are literal');
    assert.deepEqual(await names({ q: 't-' }), ['Truck South', 'Truck North'], 'q also matches external_id');
    const page = expectStatus<Page<DeviceOut>>(
      await call(t, '/devices', { ...token, query: { limit: '2', offset: '1' } }),
      200,
    );
    assert.deepEqual(page.pagination, { total: 3, limit: 2, offset: 1, has_more: false });
    assert.deepEqual(
      page.results.map((d) => d.name),
      ['Truck South', 'Truck North'],
    );
  });

  test('list sort: by name either way (case-insensitive, ties by id), oldest first; unknown → 422', async () => {
    const ws = await signUp(t, 'devices-sort');
    const token = { token: ws.tokens.access_token };
    for (const name of ['bravo', 'Alpha', 'charlie', 'alpha']) {
      await createDevice(t, token, { name });
      t.clock.advance(1000);
    }
    const names = async (sort: string, query: Record<string, string> = {}) =>
      (await listAll<DeviceOut>(t, token, '/devices', { sort, ...query })).map((d) => d.name);
    // "Alpha" and "alpha" are equal case-insensitively: the id (creation order) orders them.
    assert.deepEqual(await names('name'), ['Alpha', 'alpha', 'bravo', 'charlie']);
    assert.deepEqual(await names('-name'), ['charlie', 'bravo', 'alpha', 'Alpha']);
    assert.deepEqual(await names('created_at'), ['bravo', 'Alpha', 'charlie', 'alpha']);
    assert.deepEqual(await names('-created_at'), ['alpha', 'charlie', 'Alpha', 'bravo']);
    assert.deepEqual(await names('name', { q: 'ALPHA' }), ['Alpha', 'alpha'], 'sort and search together');
    // Pages of a sorted list neither overlap nor skip.
    const paged: string[] = [];
    for (const offset of ['0', '2']) {
      const page = expectStatus<Page<DeviceOut>>(
        await call(t, '/devices', { ...token, query: { sort: 'name', limit: '2', offset } }),
        200,
      );
      paged.push(...page.results.map((d) => d.name));
    }
    assert.deepEqual(paged, ['Alpha', 'alpha', 'bravo', 'charlie']);
    expectError(
      await call(t, '/devices', { ...token, query: { sort: 'last_seen_at' } }),
      422,
      'VALIDATION_ERROR',
    );
  });

  test('PATCH is partial; null clears external_id and user_id', async () => {
    const device = await createDevice(t, jwt, { external_id: 'p-1', user_id: 'u', metadata: { a: 1 } });
    t.clock.advance(5000);
    const renamed = expectStatus<DeviceOut>(
      await call(t, `/devices/${device.id}`, { ...jwt, method: 'PATCH', body: { name: 'Renamed' } }),
      200,
    );
    assert.deepEqual(
      [renamed.name, renamed.external_id, renamed.user_id, renamed.metadata],
      ['Renamed', 'p-1', 'u', { a: 1 }],
    );
    assert.equal(renamed.updated_at, t.clock.now().toISOString());
    assert.equal(renamed.created_at, device.created_at);
    const cleared = expectStatus<DeviceOut>(
      await call(t, `/devices/${device.id}`, {
        ...jwt,
        method: 'PATCH',
        body: { external_id: null, user_id: null, metadata: { b: 2 } },
      }),
      200,
    );
    assert.deepEqual([cleared.external_id, cleared.user_id, cleared.metadata], [null, null, { b: 2 }]);
    expectError(
      await call(t, '/devices/00000000-0000-7000-8000-000000000000', {
        ...jwt,
        method: 'PATCH',
        body: { name: 'x' },
      }),
      404,
      'NOT_FOUND',
    );
  });

  test('DELETE → 204; then 404; its locations go, its events stay', async () => {
    const g = await createGeofence(t, jwt, { name: 'G', geometry: polygon(rect(8, 8, 8.01, 8.01)) });
    const device = await createDevice(t, jwt);
    await postLocation(t, jwt, device.id, { coordinates: [8.005, 8.005] });
    expectStatus(await call(t, `/devices/${device.id}`, { ...jwt, method: 'DELETE' }), 204);
    const gone = expectError(await call(t, `/devices/${device.id}`, jwt), 404, 'NOT_FOUND');
    assert.deepEqual(gone, { detail: 'Device not found', error_code: 'NOT_FOUND' });
    expectError(await call(t, `/devices/${device.id}`, { ...jwt, method: 'DELETE' }), 404, 'NOT_FOUND');
    expectError(await call(t, `/devices/${device.id}/locations`, jwt), 404, 'NOT_FOUND');
    expectError(
      await call(t, `/devices/${device.id}/locations`, { ...jwt, body: { coordinates: [8, 8] } }),
      404,
      'NOT_FOUND',
    );
    const events = await deviceEvents(t, jwt, device.id);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.geofence_id]),
      [['enter', g.id]],
    );
  });

  test('scopes: devices:read reads, devices:write writes, locations:write ingests', async () => {
    const device = await createDevice(t, jwt);
    const reader = await createApiKey(t, owner.tokens.access_token, ['devices:read']);
    const ingester = await createApiKey(t, owner.tokens.access_token, ['locations:write']);
    expectStatus(await call(t, `/devices/${device.id}`, { apiKey: reader.key }), 200);
    expectError(
      await call(t, '/devices', { apiKey: reader.key, body: { name: 'x' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    expectStatus(
      await call(t, `/devices/${device.id}/locations`, {
        apiKey: ingester.key,
        body: { coordinates: [0, 0] },
      }),
      201,
    );
    expectError(
      await call(t, `/devices/${device.id}/locations`, { apiKey: reader.key, body: { coordinates: [0, 0] } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    expectError(await call(t, '/events', { apiKey: ingester.key }), 403, 'INSUFFICIENT_PERMISSIONS');
  });
});
