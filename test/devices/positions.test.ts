/**
 * GET /devices/positions (ADR 016): the map snapshot, every located device of the workspace as a
 * GeoJSON Feature in one answer; devices without a location left out; capped at 50,000 devices
 * (the oldest) with `truncated: true` beyond.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_POSITIONS } from '../../src/devices/positions.schemas.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type SignedUpUser, signUp, startIdentityApp } from '../helpers/identity.ts';
import { documentedOperations, SchemaValidator, servedDocument } from '../helpers/openapi.ts';
import { createDevice, getDevice, postLocation } from '../locations/helpers.ts';

interface Feature {
  type: 'Feature';
  id: string;
  geometry: { type: 'Point'; coordinates: [number, number] };
  properties: {
    name: string;
    external_id: string | null;
    last_seen_at: string;
    recorded_at: string;
    accuracy: number | null;
    inside_geofence_ids: string[];
  };
}

interface Positions {
  type: 'FeatureCollection';
  features: Feature[];
  truncated: boolean;
}

describe('GET /devices/positions', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp({ env: { DEFAULT_PLAN: 'enterprise' } });
    owner = await signUp(t, 'positions');
    jwt = { token: owner.tokens.access_token };
  });
  after(async () => t?.close());

  test('every located device as a GeoJSON Feature, as GET /devices/{id} shows it; the others left out', async () => {
    const fence = await createGeofence(t, jwt, { name: 'Depot', geometry: circle(13.4, 52.5, 300) });
    // Created a millisecond apart: the snapshot lists the oldest first.
    const truck = await createDevice(t, jwt, { name: 'Truck 7', external_id: 'truck-7' });
    t.clock.advance(1);
    const van = await createDevice(t, jwt, { name: 'Van 3' });
    t.clock.advance(1);
    const idle = await createDevice(t, jwt, { name: 'never reported' });
    await postLocation(t, jwt, truck.id, {
      coordinates: [13.4, 52.5],
      accuracy: 5,
      timestamp: '2026-03-10T11:58:00.000Z',
    });
    t.clock.advance(1_000);
    await postLocation(t, jwt, van.id, {
      coordinates: [13.45, 52.52],
      timestamp: '2026-03-10T11:59:00.000Z',
    });
    // An older location arriving late changes nothing.
    await postLocation(t, jwt, van.id, { coordinates: [0, 0], timestamp: '2026-03-10T11:00:00.000Z' });

    const positions = expectStatus<Positions>(await call(t, '/devices/positions', jwt), 200);
    assert.equal(positions.type, 'FeatureCollection');
    assert.equal(positions.truncated, false);
    assert.deepEqual(
      positions.features.map((f) => f.id),
      [truck.id, van.id],
      'oldest device first; the one without a location is left out',
    );
    assert.ok(!positions.features.some((f) => f.id === idle.id));
    for (const feature of positions.features) {
      const device = await getDevice(t, jwt, feature.id);
      assert.ok(device.last_location);
      assert.deepEqual(feature, {
        type: 'Feature',
        id: device.id,
        geometry: device.last_location.point,
        properties: {
          name: device.name,
          external_id: device.external_id,
          last_seen_at: device.last_seen_at,
          recorded_at: device.last_location.timestamp,
          accuracy: device.last_location.accuracy,
          inside_geofence_ids: device.inside_geofence_ids,
        },
      });
    }
    assert.deepEqual(positions.features[0]?.properties.inside_geofence_ids, [fence.id]);
    // The answer is written as text (positions-json.ts): it must still be what the document says.
    const operation = (await documentedOperations(await servedDocument(t))).find(
      (op) => op.label === 'GET /api/v1/devices/positions',
    );
    const schema = operation?.operation.responses['200']?.content?.['application/json']?.schema;
    assert.ok(schema);
    assert.equal(new SchemaValidator().errors(schema, positions), '');
    assert.deepEqual(positions.features[1]?.geometry.coordinates, [13.45, 52.52]);
  });

  test(`more than ${MAX_POSITIONS} located devices: the oldest ${MAX_POSITIONS} and truncated`, async () => {
    const other = await signUp(t, 'many');
    const workspaceId = other.workspace.id;
    const db = t.deps.database.db;
    const base = Date.parse('2026-01-01T00:00:00.000Z');
    const total = MAX_POSITIONS + 1;
    const row = (i: number) => {
      const created = new Date(base + i * 1000);
      const id = `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`;
      return {
        id,
        workspace_id: workspaceId,
        name: `device ${i}`,
        external_id: `ext-${i}`,
        user_id: null,
        metadata: '{}',
        inside_geofence_ids: '[]',
        active_session_id: null,
        created_at: created,
        updated_at: created,
      };
    };
    // Its position: one location row, the device's newest (and its row in device_last_locations).
    const location = (i: number) => {
      const created = new Date(base + i * 1000);
      return {
        id: `00000000-0000-7000-8001-${String(i).padStart(12, '0')}`,
        workspace_id: workspaceId,
        device_id: row(i).id,
        session_id: null,
        lng: i / 1000,
        lat: 10,
        accuracy: null,
        speed: null,
        heading: null,
        altitude: null,
        metadata: '{}',
        recorded_at: created,
        received_at: created,
        out_of_order: false,
      };
    };
    // Rows written directly: 50,001 devices through the API would take minutes.
    await db.transaction().execute(async (trx) => {
      for (let from = 0; from < total; from += 1000) {
        const n = Math.min(1000, total - from);
        await trx
          .insertInto('devices')
          .values(Array.from({ length: n }, (_, k) => row(from + k)))
          .execute();
        const locations = Array.from({ length: n }, (_, k) => location(from + k));
        await trx.insertInto('locations').values(locations).execute();
        await trx
          .insertInto('device_last_locations')
          .values(
            locations.map((l) => ({
              device_id: l.device_id,
              location_id: l.id,
              lng: l.lng,
              lat: l.lat,
              accuracy: l.accuracy,
              recorded_at: l.recorded_at,
              received_at: l.received_at,
            })),
          )
          .execute();
      }
    });
    const positions = expectStatus<Positions>(
      await call(t, '/devices/positions', { token: other.tokens.access_token }),
      200,
    );
    assert.equal(positions.truncated, true);
    assert.equal(positions.features.length, MAX_POSITIONS);
    assert.equal(positions.features[0]?.properties.name, 'device 0');
    assert.equal(
      positions.features.at(-1)?.properties.name,
      `device ${MAX_POSITIONS - 1}`,
      'the newest is left out',
    );

    await db.deleteFrom('devices').where('id', '=', row(0).id).execute();
    const exactly = expectStatus<Positions>(
      await call(t, '/devices/positions', { token: other.tokens.access_token }),
      200,
    );
    assert.deepEqual(
      [exactly.truncated, exactly.features.length],
      [false, MAX_POSITIONS],
      'at the cap: whole',
    );
  });
});
