/**
 * Contract §4.5, dwell, through the HTTP API and the dwell worker driven by the manual clock: one
 * `dwell` event per visit at enter time + `dwell_seconds` (not a millisecond before), at the
 * device's last known point; none when the exit comes first; fired by ingestion when the device's
 * next location is past the dwell moment (before that location's own events); counted as usage;
 * exactly once when two nodes' workers and the device's own locations race for it.
 *
 * Each test runs on an app of its own: the worker fires every due timer of the database, so the
 * counts it answers are this test's only.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createDwellWorker } from '../../src/engine.ts';
import { nextDwellDue } from '../../src/locations/dwell.repository.ts';
import type { DwellWorker } from '../../src/locations/dwell-job.ts';
import { circle, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, IS_POSTGRES } from '../helpers/database.ts';
import {
  call,
  createApiKey,
  expectStatus,
  type Page,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import {
  type BatchOut,
  type Credentials,
  createDevice,
  type DeviceOut,
  deviceEvents,
  type EventOut,
  getDevice,
  type LocationOut,
  listAll,
  postLocation,
} from './helpers.ts';
import { createRuledGeofence, northOf, patchGeofence } from './rules-helpers.ts';

const UNLIMITED = { env: { DEFAULT_PLAN: 'enterprise' } };
const DEPOT = { lng: 13.4, lat: 52.5 };
const FAR = { lng: 14.4, lat: 52.5 };

interface Scenario {
  t: TestApp;
  jwt: Credentials;
  workspaceId: string;
  worker: DwellWorker;
}

/**
 * Runs `body` on a fresh app and workspace, closing both whatever happens. An API key, on a plan
 * without limits, outlives the hours the clock is advanced by (an access token would expire).
 */
async function scenario(body: (s: Scenario) => Promise<void>): Promise<void> {
  const t = await startIdentityApp(UNLIMITED);
  try {
    const user = await signUp(t, 'dwell');
    const key = await createApiKey(t, user.tokens.access_token, ['*']);
    await body({
      t,
      jwt: { apiKey: key.key },
      workspaceId: user.workspace.id,
      worker: createDwellWorker(t.deps),
    });
  } finally {
    await t.close();
  }
}

const epoch = (ms: number) => Math.floor(ms / 1000);
const iso = (ms: number) => new Date(ms).toISOString();

async function post(
  s: Scenario,
  deviceId: string,
  where: { lng: number; lat: number },
  atMs: number,
): Promise<{ location: LocationOut; events: EventOut[] }> {
  return postLocation(s.t, s.jwt, deviceId, { coordinates: [where.lng, where.lat], timestamp: iso(atMs) });
}

async function dwellEvents(s: Scenario, query: Record<string, string> = {}): Promise<EventOut[]> {
  return (await listAll<EventOut>(s.t, s.jwt, '/events', { event_type: 'dwell', ...query })).reverse();
}

const kinds = (events: readonly EventOut[]) => events.map((e) => `${e.event_type}@${e.occurred_at}`);

describe('dwell (contract §4.5)', () => {
  test('fires once at exactly enter + dwell_seconds, at the last known point; not a millisecond before', async () => {
    await scenario(async (s) => {
      const fence = await createRuledGeofence(s.t, s.jwt, {
        name: 'Depot',
        geometry: circle(DEPOT.lng, DEPOT.lat, 200),
        metadata: { site: 7 },
        dwell_seconds: 300,
      });
      const device = await createDevice(s.t, s.jwt, { name: 'truck', user_id: 'driver-7' });
      // A sub-second enter: the dwell moment keeps the milliseconds, its event_id the whole seconds.
      const t0 = s.t.clock.now().getTime() - 750;
      const entered = await post(s, device.id, DEPOT, t0);
      assert.deepEqual(kinds(entered.events), [`enter@${iso(t0)}`]);
      s.t.clock.advance(120_000);
      const moved = { lng: DEPOT.lng, lat: northOf(DEPOT.lat, 50) };
      const second = await post(s, device.id, moved, t0 + 120_000);
      assert.deepEqual(second.events, []);

      const due = t0 + 300_000;
      s.t.clock.set(new Date(due - 1));
      assert.equal(await s.worker.runOnce(), 0, 'a millisecond before the dwell moment: nothing');
      assert.deepEqual(await dwellEvents(s), []);
      s.t.clock.advance(1);
      assert.equal(await s.worker.runOnce(), 1, 'at the dwell moment: the dwell');
      assert.equal(await s.worker.runOnce(), 0, 'once');

      const [dwell, ...rest] = await dwellEvents(s);
      assert.deepEqual(rest, []);
      assert.ok(dwell);
      assert.deepEqual(
        { ...dwell, id: undefined },
        {
          id: undefined,
          event_id: `${fence.id}_dwell_${epoch(due)}`,
          event_type: 'dwell',
          event: 'geofence.dwell',
          device_id: device.id,
          user_id: 'driver-7',
          geofence_id: fence.id,
          geofence_name: 'Depot',
          // The device's last known point and location: the second fix, not the enter.
          point: { type: 'Point', coordinates: [moved.lng, moved.lat] },
          location_id: second.location.id,
          session_id: null,
          occurred_at: iso(due),
          created_at: iso(due),
          metadata: { geofence_metadata: { site: 7 }, event_metadata: {} },
        },
      );
      assert.deepEqual(
        expectStatus<EventOut>(await call(s.t, `/events/${dwell.id}`, s.jwt), 200, 'GET /events/{id}'),
        dwell,
      );

      // Staying on: no second dwell for this visit, from the worker or from later locations.
      s.t.clock.advance(3_600_000);
      assert.equal(await s.worker.runOnce(), 0);
      const later = await post(s, device.id, DEPOT, s.t.clock.now().getTime());
      assert.deepEqual(later.events, []);
      assert.deepEqual(kinds(await deviceEvents(s.t, s.jwt, device.id)), [
        `enter@${iso(t0)}`,
        `dwell@${iso(due)}`,
      ]);
      assert.deepEqual((await getDevice(s.t, s.jwt, device.id)).inside_geofence_ids, [fence.id]);
    });
  });

  test('an exit before the dwell moment cancels it; an exit at the dwell moment does not', async () => {
    await scenario(async (s) => {
      await createRuledGeofence(s.t, s.jwt, {
        name: 'Depot',
        geometry: circle(DEPOT.lng, DEPOT.lat, 200),
        dwell_seconds: 300,
      });
      const device = await createDevice(s.t, s.jwt);
      const t0 = s.t.clock.now().getTime();
      await post(s, device.id, DEPOT, t0);
      const left = await post(s, device.id, FAR, t0 + 299_999);
      assert.deepEqual(kinds(left.events), [`exit@${iso(t0 + 299_999)}`]);
      s.t.clock.advance(3_600_000);
      assert.equal(await s.worker.runOnce(), 0, 'the exit came first: no dwell');
      assert.deepEqual(await dwellEvents(s), []);

      // An exit at the dwell moment itself: the device did stay that long.
      const t1 = s.t.clock.now().getTime();
      await post(s, device.id, DEPOT, t1);
      const atDue = await post(s, device.id, FAR, t1 + 300_000);
      assert.deepEqual(kinds(atDue.events), [`dwell@${iso(t1 + 300_000)}`, `exit@${iso(t1 + 300_000)}`]);
      s.t.clock.advance(3_600_000);
      assert.equal(await s.worker.runOnce(), 0);
      assert.deepEqual(kinds(await deviceEvents(s.t, s.jwt, device.id)), [
        `enter@${iso(t0)}`,
        `exit@${iso(t0 + 299_999)}`,
        `enter@${iso(t1)}`,
        `dwell@${iso(t1 + 300_000)}`,
        `exit@${iso(t1 + 300_000)}`,
      ]);
    });
  });

  test('fired by ingestion: a location past the dwell moment brings the dwell first, in the answer and in GET /events', async () => {
    await scenario(async (s) => {
      const fence = await createRuledGeofence(s.t, s.jwt, {
        name: 'Depot',
        geometry: circle(DEPOT.lng, DEPOT.lat, 200),
        dwell_seconds: 300,
      });
      const t0 = s.t.clock.now().getTime();
      const inner = { lng: DEPOT.lng, lat: northOf(DEPOT.lat, -30) };

      // One location at a time. The clock stays before the dwell moment: the worker has nothing
      // to do; the device's own location (its clock is a few minutes ahead) fires the dwell.
      const a = await createDevice(s.t, s.jwt, { name: 'a' });
      await post(s, a.id, DEPOT, t0);
      const stay = await post(s, a.id, inner, t0 + 200_000);
      const out = await post(s, a.id, FAR, t0 + 400_000);
      assert.deepEqual(kinds(out.events), [`dwell@${iso(t0 + 300_000)}`, `exit@${iso(t0 + 400_000)}`]);
      const [dwell] = out.events;
      assert.equal(dwell?.event_id, `${fence.id}_dwell_${epoch(t0 + 300_000)}`);
      assert.equal(dwell?.location_id, stay.location.id, 'at the last known location');
      assert.deepEqual(dwell?.point.coordinates, [inner.lng, inner.lat]);
      const storedA = await deviceEvents(s.t, s.jwt, a.id);
      assert.deepEqual(kinds(storedA), [
        `enter@${iso(t0)}`,
        `dwell@${iso(t0 + 300_000)}`,
        `exit@${iso(t0 + 400_000)}`,
      ]);
      assert.deepEqual(
        storedA.slice(1).map((e) => e.id),
        out.events.map((e) => e.id),
      );

      // Still inside past the dwell moment: the dwell alone, at the previous location.
      const b = await createDevice(s.t, s.jwt, { name: 'b' });
      const enterB = await post(s, b.id, DEPOT, t0);
      const stillIn = await post(s, b.id, inner, t0 + 300_001);
      assert.deepEqual(kinds(stillIn.events), [`dwell@${iso(t0 + 300_000)}`]);
      assert.equal(stillIn.events[0]?.location_id, enterB.location.id);

      // A batch spanning the dwell moment: enter, dwell (at the batch's second location), exit.
      const batch = expectStatus<BatchOut>(
        await call(s.t, '/locations/batch', {
          ...s.jwt,
          body: {
            locations: [
              // Out of order in the request: items of one device are applied in timestamp order.
              { device_external_id: 'c', coordinates: [FAR.lng, FAR.lat], timestamp: iso(t0 + 400_000) },
              { device_external_id: 'c', coordinates: [DEPOT.lng, DEPOT.lat], timestamp: iso(t0) },
              { device_external_id: 'c', coordinates: [inner.lng, inner.lat], timestamp: iso(t0 + 200_000) },
            ],
          },
        }),
        200,
        'batch',
      );
      assert.deepEqual(kinds(batch.events), [
        `enter@${iso(t0)}`,
        `dwell@${iso(t0 + 300_000)}`,
        `exit@${iso(t0 + 400_000)}`,
      ]);
      const c = batch.events[0]?.device_id as string;
      const locationsC = await listAll<LocationOut>(s.t, s.jwt, `/devices/${c}/locations`);
      const middle = locationsC.find((l) => l.timestamp === iso(t0 + 200_000));
      assert.equal(batch.events[1]?.location_id, middle?.id);

      // Nothing left for the worker, however late.
      s.t.clock.advance(86_400_000);
      assert.equal(await s.worker.runOnce(), 0);
      assert.equal((await dwellEvents(s)).length, 3);
    });
  });

  test('each visit gets its own dwell; usage counts dwell events', async () => {
    await scenario(async (s) => {
      const fence = await createRuledGeofence(s.t, s.jwt, {
        name: 'Depot',
        geometry: polygon(rect(13.39, 52.49, 13.41, 52.51)),
        dwell_seconds: 60,
      });
      const device = await createDevice(s.t, s.jwt);
      const t0 = s.t.clock.now().getTime();
      await post(s, device.id, DEPOT, t0);
      s.t.clock.advance(60_000);
      assert.equal(await s.worker.runOnce(), 1, 'first visit');
      await post(s, device.id, FAR, t0 + 90_000);
      await post(s, device.id, DEPOT, t0 + 100_000);
      s.t.clock.advance(99_999);
      assert.equal(await s.worker.runOnce(), 0);
      s.t.clock.advance(1);
      assert.equal(await s.worker.runOnce(), 1, 'second visit');
      // A third visit fired by ingestion.
      await post(s, device.id, FAR, t0 + 200_000);
      await post(s, device.id, DEPOT, t0 + 210_000);
      const next = await post(s, device.id, DEPOT, t0 + 270_000);
      assert.deepEqual(kinds(next.events), [`dwell@${iso(t0 + 270_000)}`]);

      const dwells = await dwellEvents(s);
      assert.deepEqual(
        dwells.map((e) => e.event_id),
        [t0 + 60_000, t0 + 160_000, t0 + 270_000].map((ms) => `${fence.id}_dwell_${epoch(ms)}`),
      );
      const all = await deviceEvents(s.t, s.jwt, device.id);
      assert.deepEqual(
        all.map((e) => e.event_type),
        ['enter', 'dwell', 'exit', 'enter', 'dwell', 'exit', 'enter', 'dwell'],
      );

      const usage = expectStatus<{
        events: { used: number };
        daily: Array<{ date: string; events: number }>;
      }>(await call(s.t, '/subscriptions/usage', s.jwt), 200, 'usage');
      assert.equal(usage.events.used, all.length, 'every event counts, dwell events too');
      const today = iso(s.t.clock.now().getTime()).slice(0, 10);
      assert.equal(usage.daily.find((d) => d.date === today)?.events, all.length);
    });
  });

  test('disabling or deleting the geofence before the dwell moment: no dwell; other timers still fire', async () => {
    await scenario(async (s) => {
      const square = polygon(rect(13.39, 52.49, 13.41, 52.51));
      const disabled = await createRuledGeofence(s.t, s.jwt, {
        name: 'D',
        geometry: square,
        dwell_seconds: 60,
      });
      const deleted = await createRuledGeofence(s.t, s.jwt, {
        name: 'X',
        geometry: square,
        dwell_seconds: 60,
      });
      const t0 = s.t.clock.now().getTime();
      // More stale visits than one round of the worker takes: they must not hide a later due one.
      const stale = 250;
      const batch = expectStatus<BatchOut>(
        await call(s.t, '/locations/batch', {
          ...s.jwt,
          body: {
            locations: Array.from({ length: stale }, (_v, i) => ({
              device_external_id: `stale-${i}`,
              coordinates: [DEPOT.lng, DEPOT.lat],
              timestamp: iso(t0),
            })),
          },
        }),
        200,
      );
      assert.equal(batch.events.length, 2 * stale);
      await patchGeofence(s.t, s.jwt, disabled.id, { enabled: false });
      expectStatus(await call(s.t, `/geofences/${deleted.id}`, { ...s.jwt, method: 'DELETE' }), 204);
      const live = await createRuledGeofence(s.t, s.jwt, {
        name: 'L',
        geometry: circle(FAR.lng, FAR.lat, 100),
        dwell_seconds: 60,
      });
      const device = await createDevice(s.t, s.jwt);
      await post(s, device.id, FAR, t0 + 1_000);
      s.t.clock.advance(3_600_000);
      assert.equal(await s.worker.runOnce(), 1);
      const dwells = await dwellEvents(s);
      assert.deepEqual(
        dwells.map((e) => [e.geofence_id, e.device_id]),
        [[live.id, device.id]],
      );
      assert.equal(await s.worker.runOnce(), 0);
      // Nothing pending for the worker to wake for: the disabled geofence's visits wait, unseen.
      assert.equal(await nextDwellDue(s.t.deps.database.db), null);
    });
  });
});

/**
 * Two nodes: two apps on one database, each with its dwell worker, the same clock. On SQLite both
 * workers use the first app's connection (two connections of one process would block each other's
 * synchronous BEGIN IMMEDIATE), so there the race is between two workers of one process.
 */
describe('dwell across two nodes (contract §4.5)', () => {
  async function twoNodes(
    body: (nodes: { a: TestApp; b: TestApp; workers: [DwellWorker, DwellWorker] }) => Promise<void>,
  ): Promise<void> {
    const database = await createSharedTestDatabase();
    const a = await startIdentityApp({ database, ...UNLIMITED });
    let b: TestApp | undefined;
    try {
      b = IS_POSTGRES ? await startIdentityApp({ database, clock: a.clock, ...UNLIMITED }) : a;
      await body({ a, b, workers: [createDwellWorker(a.deps), createDwellWorker(b.deps)] });
    } finally {
      if (b && b !== a) await b.close();
      await a.close();
      await database.drop();
    }
  }

  async function enterMany(
    t: TestApp,
    token: string,
    prefix: string,
    count: number,
    atMs: number,
  ): Promise<DeviceOut[]> {
    const batch = expectStatus<BatchOut>(
      await call(t, '/locations/batch', {
        token,
        body: {
          locations: Array.from({ length: count }, (_v, i) => ({
            device_external_id: `${prefix}-${i}`,
            coordinates: [DEPOT.lng, DEPOT.lat],
            timestamp: iso(atMs),
          })),
        },
      }),
      200,
    );
    assert.equal(batch.events.length, count, 'one enter each');
    return listAll<DeviceOut>(t, { token }, '/devices');
  }

  test('100 devices due at the same moment, both workers firing concurrently: one dwell each', async () => {
    await twoNodes(async ({ a, b, workers }) => {
      // Four workspaces: the workers take a workspace per transaction, so they meet on each.
      const users = [];
      for (let w = 0; w < 4; w++) users.push(await signUp(a, `node-${w}`));
      const t0 = a.clock.now().getTime();
      const fences: string[] = [];
      for (const user of users) {
        const fence = await createRuledGeofence(
          a,
          { token: user.tokens.access_token },
          {
            name: 'Depot',
            geometry: circle(DEPOT.lng, DEPOT.lat, 200),
            dwell_seconds: 120,
          },
        );
        fences.push(fence.id);
        await enterMany(b, user.tokens.access_token, 'truck', 25, t0);
      }
      a.clock.advance(120_000);
      let fired = 0;
      for (let round = 0; round < 20; round++) {
        const counts = await Promise.all([
          workers[0].runOnce(),
          workers[1].runOnce(),
          workers[0].runOnce(),
          workers[1].runOnce(),
        ]);
        fired += counts.reduce((x, y) => x + y, 0);
      }
      assert.equal(fired, 100, 'the workers stored 100 dwell events in all');
      for (const [w, user] of users.entries()) {
        const dwells = await listAll<EventOut>(b, { token: user.tokens.access_token }, '/events', {
          event_type: 'dwell',
        });
        assert.equal(dwells.length, 25, `workspace ${w}: 25 dwell events`);
        assert.equal(new Set(dwells.map((e) => e.device_id)).size, 25, `workspace ${w}: one per device`);
        for (const e of dwells) {
          assert.equal(e.event_id, `${fences[w]}_dwell_${epoch(t0 + 120_000)}`);
          assert.equal(e.occurred_at, iso(t0 + 120_000));
        }
      }
    });
  });

  test('a device reporting while both workers fire its dwell: still one dwell per visit', async () => {
    await twoNodes(async ({ a, b, workers }) => {
      const user = await signUp(a, 'race');
      const token = user.tokens.access_token;
      await createRuledGeofence(
        a,
        { token },
        {
          name: 'Depot',
          geometry: circle(DEPOT.lng, DEPOT.lat, 200),
          dwell_seconds: 60,
        },
      );
      // Device i enters at t0 + i s: each round, one more device comes due, and it reports (inside,
      // at the dwell moment, through alternating nodes) while both workers fire. Whichever side
      // gets there first stores the dwell; the other finds the visit dwelt.
      const rounds = 30;
      const t0 = a.clock.now().getTime();
      const devices: DeviceOut[] = [];
      for (let i = 0; i < rounds; i++) {
        const device = await createDevice(a, { token }, { name: `racer-${i}` });
        devices.push(device);
        await postLocation(b, { token }, device.id, {
          coordinates: [DEPOT.lng, DEPOT.lat],
          timestamp: iso(t0 + i * 1000),
        });
      }
      a.clock.set(new Date(t0 + 60_000 - 1000));
      let byIngestion = 0;
      let byWorkers = 0;
      for (const [i, device] of devices.entries()) {
        a.clock.advance(1000);
        const reported = postLocation(i % 2 === 0 ? a : b, { token }, device.id, {
          coordinates: [DEPOT.lng, DEPOT.lat],
          timestamp: a.clock.now().toISOString(),
        });
        // Every other round the request gets a head start of a few turns of the event loop.
        for (let turn = 0; turn < (i % 2) * i; turn++) await new Promise((resolve) => setImmediate(resolve));
        const [answer, first, second] = await Promise.all([
          reported,
          workers[0].runOnce(),
          workers[1].runOnce(),
        ]);
        const fromAnswer = answer.events.filter((e) => e.event_type === 'dwell').length;
        assert.equal(fromAnswer + first + second, 1, `round ${i}: one dwell, from exactly one side`);
        byIngestion += fromAnswer;
        byWorkers += first + second;
      }
      assert.equal(byIngestion + byWorkers, rounds);
      for (const w of workers) assert.equal(await w.runOnce(), 0);
      const dwells = await listAll<EventOut>(a, { token }, '/events', { event_type: 'dwell' });
      assert.deepEqual(
        dwells.map((e) => [e.device_id, e.occurred_at]).sort(),
        devices.map((d, i) => [d.id, iso(t0 + i * 1000 + 60_000)]).sort(),
        'one dwell per device, at its own dwell moment',
      );
      const page = expectStatus<Page<EventOut>>(
        await call(b, '/events', { token, query: { limit: '1' } }),
        200,
      );
      assert.equal(page.pagination.total, 2 * rounds, 'an enter and a dwell each, nothing more');
    });
  });
});
