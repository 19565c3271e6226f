/**
 * Location retention: `purgeOldLocations(db, clock, days)` deletes locations received more than
 * `days` ago, in every workspace, and nothing else (events keep their copy of the point). A
 * device's newest location stays however old: it is the device's last location (ADR 008).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { purgeOldLocations } from '../../src/locations/retention.ts';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { createApiKey, signUp, startIdentityApp } from '../helpers/identity.ts';
import { createDevice, deviceEvents, getDevice, type LocationOut, listAll, postLocation } from './helpers.ts';

const DAY_MS = 86_400_000;

describe('location retention', () => {
  let t: TestApp;

  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  test('deletes locations received before now − days, in every workspace; keeps the rest and events', async () => {
    const start = t.clock.now().getTime();
    // API keys, not JWTs: the clock moves by months here.
    const key = async (label: string) =>
      (await createApiKey(t, (await signUp(t, label)).tokens.access_token, ['*'])).key;
    const a = { apiKey: await key('retention-a') };
    const b = { apiKey: await key('retention-b') };
    await createGeofence(t, a, { name: 'R', geometry: polygon(rect(9, 9, 9.01, 9.01)) });
    const da = await createDevice(t, a);
    const db = await createDevice(t, b);
    // Received on day 0 (timestamps default to the receive time) ...
    await postLocation(t, a, da.id, { coordinates: [9.005, 9.005] });
    await postLocation(t, b, db.id, { coordinates: [0, 0] });
    // ... on day 30 ...
    t.clock.set(start + 30 * DAY_MS);
    await postLocation(t, a, da.id, { coordinates: [9.006, 9.005] });
    // ... and on day 95.
    t.clock.set(start + 95 * DAY_MS);
    await postLocation(t, b, db.id, { coordinates: [1, 1] });

    // At day 95 with 90 days of retention, only day-0 locations are older than the cutoff (day 5).
    assert.deepEqual(await purgeOldLocations(t.deps.database.db, t.clock, 90), { deleted: 2 });
    const left = async (token: { apiKey: string }, id: string) =>
      (await listAll<LocationOut>(t, token, `/devices/${id}/locations`)).map((l) => l.received_at);
    assert.deepEqual(await left(a, da.id), [new Date(start + 30 * DAY_MS).toISOString()]);
    assert.deepEqual(await left(b, db.id), [new Date(start + 95 * DAY_MS).toISOString()]);
    assert.deepEqual(await purgeOldLocations(t.deps.database.db, t.clock, 90), { deleted: 0 }, 'idempotent');

    // Exactly `days` old is kept; older goes, except a device's newest location: da's day-30
    // location is its newest, also when an out-of-order location arrives after it.
    const deviceBefore = await getDevice(t, a, da.id);
    t.clock.set(start + 100 * DAY_MS);
    const late = await postLocation(t, a, da.id, {
      coordinates: [9.5, 9.5],
      timestamp: new Date(start + 20 * DAY_MS).toISOString(),
    });
    assert.equal(late.location.out_of_order, true);
    t.clock.set(start + 120 * DAY_MS + 1);
    assert.deepEqual(await purgeOldLocations(t.deps.database.db, t.clock, 90), { deleted: 0 });
    assert.deepEqual(await getDevice(t, a, da.id), deviceBefore, 'the device answers as before');
    // A newer location makes the day-30 one an ordinary old location.
    await postLocation(t, a, da.id, { coordinates: [9.007, 9.005] });
    assert.deepEqual(await purgeOldLocations(t.deps.database.db, t.clock, 90), { deleted: 1 });
    assert.deepEqual((await left(a, da.id)).sort(), [
      new Date(start + 100 * DAY_MS).toISOString(),
      new Date(start + 120 * DAY_MS + 1).toISOString(),
    ]);

    // The event produced by a purged location is still there.
    assert.equal((await deviceEvents(t, a, da.id)).length, 1);
  });
});
