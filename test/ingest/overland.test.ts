/**
 * POST /ingest/overland (contract §4.6): Overland's batch as the iOS app sends it (GLManager
 * sendQueueNow: `Authorization: Bearer`, `application/json`, `{"locations": [GeoJSON Feature…],
 * "current"?, "trip"?}`, timestamps UTC whole seconds, speed m/s and course degrees with −1 for
 * unknown, altitude invalid when vertical_accuracy < 0). App events, visits and trips in the same
 * array are skipped. The app deletes a batch only on `{"result": "ok"}` as JSON, so the batch is
 * stored whole (500 points in one request) or not at all (one bad point: 400, nothing stored).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Answer,
  deliveredFor,
  deviceByExternalId,
  enterWatch,
  eventsOf,
  expectAnswer,
  expectTrackerError,
  FIX_START_MS,
  fixIso,
  fixIsoSeconds,
  locationCount,
  locationsOf,
  newApiKey,
  send,
  type TrackerHarness,
  trackedDevice,
  trackerFixture,
  YEAR_2099_ISO,
  YEAR_2099_SECONDS,
} from './helpers.ts';

const OK = { result: 'ok' };
const LNG = -122.030581;
const LAT = 37.3318;

/** One point as currentDictionaryFromLocation writes it ("All Data" mode). */
function point(
  timestamp: string,
  lng: number,
  lat: number,
  properties: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: 'Feature',
    geometry: { type: 'Point', coordinates: [lng, lat] },
    properties: {
      timestamp,
      altitude: 0,
      speed: 4,
      course: 270,
      horizontal_accuracy: 30,
      vertical_accuracy: -1,
      speed_accuracy: 0.5,
      course_accuracy: 12.3,
      motion: ['driving', 'stationary'],
      device_id: 'phone1',
      wifi: '',
      battery_state: 'charging',
      battery_level: 0.8,
      ...properties,
    },
  };
}

function postBatch(t: TrackerHarness, token: string, body: unknown): Promise<Answer> {
  return send(t, {
    method: 'POST',
    path: '/ingest/overland',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('POST /ingest/overland', () => {
  const fixture = trackerFixture();

  test('a batch with Bearer: points stored with their units, non-fix records skipped, enter event and webhook, {"result":"ok"}', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t, { name: 'overland iphone' });
    const { geofence } = await enterWatch(t, LNG, LAT, 'Infinite Loop');

    const first = point(fixIsoSeconds(0), LNG, LAT, { speed: 4, course: 270, altitude: 0 });
    const second = point(fixIsoSeconds(1), LNG + 0.0001, LAT, {
      speed: -1,
      course: -1,
      horizontal_accuracy: 10,
      altitude: 12,
      vertical_accuracy: 3,
      trip_id: '2026-03-10T10:55:00Z',
    });
    const body = {
      locations: [
        first,
        // logAction: an app event without geometry (no last location yet).
        {
          type: 'Feature',
          properties: { action: 'app_paused', timestamp: fixIsoSeconds(0), battery_level: 0.8 },
        },
        // logAction with geometry.
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [LNG, LAT] },
          properties: { action: 'app_resumed', timestamp: fixIsoSeconds(1) },
        },
        // didVisit.
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [LNG, LAT] },
          properties: {
            action: 'visit',
            arrival_date: fixIsoSeconds(0),
            departure_date: null,
            horizontal_accuracy: 50,
          },
        },
        // writeTripToDB: a finished trip.
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [LNG, LAT] },
          properties: {
            type: 'trip',
            mode: 'car',
            start: '2026-03-10T10:55:00Z',
            end: fixIsoSeconds(1),
            duration: 300,
            distance: 1234.5,
            stopped_automatically: false,
            steps: 0,
          },
        },
        second,
      ],
      current: point(fixIsoSeconds(1), LNG + 0.0001, LAT),
      trip: {
        mode: 'car',
        start: '2026-03-10T10:55:00Z',
        distance: 1234.5,
        start_location: point('2026-03-10T10:55:00Z', LNG, LAT),
        current_location: second,
      },
    };
    const res = await postBatch(t, token, body);
    expectAnswer(res, OK, 'batch');

    const stored = (await locationsOf(t, device.id)).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    assert.deepEqual(
      stored.map((l) => l.timestamp),
      [fixIso(0), fixIso(1)],
      'two fixes stored; events, visits and trips skipped',
    );
    const [a, b] = stored;
    assert.ok(a && b);
    assert.deepEqual(a.point.coordinates, [LNG, LAT], 'coordinates are [lng, lat]');
    assert.equal(a.speed, 4);
    assert.equal(a.heading, 270);
    assert.equal(a.accuracy, 30);
    assert.equal(a.altitude, null, 'vertical_accuracy −1: altitude unknown');
    assert.deepEqual(
      {
        battery_level: a.metadata.battery_level,
        battery_state: a.metadata.battery_state,
        motion: a.metadata.motion,
        wifi: a.metadata.wifi,
        device_id: a.metadata.device_id,
        vertical_accuracy: a.metadata.vertical_accuracy,
        speed_accuracy: a.metadata.speed_accuracy,
        course_accuracy: a.metadata.course_accuracy,
      },
      {
        battery_level: 0.8,
        battery_state: 'charging',
        motion: ['driving', 'stationary'],
        wifi: '',
        device_id: 'phone1',
        vertical_accuracy: -1,
        speed_accuracy: 0.5,
        course_accuracy: 12.3,
      },
    );
    assert.deepEqual(b.point.coordinates, [LNG + 0.0001, LAT]);
    assert.equal(b.speed, null, 'speed −1: unknown');
    assert.equal(b.heading, null, 'course −1: unknown');
    assert.equal(b.accuracy, 10);
    assert.equal(b.altitude, 12);
    assert.equal(b.metadata.trip_id, '2026-03-10T10:55:00Z');

    // The token's device; properties.device_id names no other.
    assert.equal(await deviceByExternalId(t, 'phone1'), undefined);

    const events = await eventsOf(t, device.id);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.geofence_id, e.location_id]),
      [['enter', geofence.id, a.id]],
    );
    const delivered = await deliveredFor(t, device.id);
    assert.deepEqual(
      delivered.map((d) => [d.event, d.data.geofence_id, d.data.metadata.event_metadata.battery_level]),
      [['geofence.enter', geofence.id, 0.8]],
    );
  });

  test('500 points in one request: {"result":"ok"} and 500 locations stored', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const locations = Array.from({ length: 500 }, (_v, i) =>
      point(new Date(FIX_START_MS + i * 1000).toISOString().replace('.000Z', 'Z'), 10 + i * 1e-5, 50),
    );
    const res = await postBatch(t, token, { locations });
    expectAnswer(res, OK, '500 points');
    assert.equal(await locationCount(t, device.id), 500);
  });

  test('only app events or an empty array: {"result":"ok"}, nothing stored', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    expectAnswer(await postBatch(t, token, { locations: [] }), OK, 'empty array');
    expectAnswer(
      await postBatch(t, token, {
        locations: [
          { type: 'Feature', properties: { action: 'app_terminated', timestamp: fixIsoSeconds(0) } },
        ],
      }),
      OK,
      'an app event only',
    );
    assert.equal(await locationCount(t, device.id), 0);
  });

  test('one bad point: 400 naming it, and none of the others stored', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    expectAnswer(
      await postBatch(t, token, { locations: [point(fixIsoSeconds(0), 1, 1)] }),
      OK,
      'a first point',
    );
    const batch = (bad: Record<string, unknown>) => ({
      locations: [
        point(fixIsoSeconds(1), 1, 1.001),
        point(fixIsoSeconds(2), 1, 1.002),
        point(fixIsoSeconds(3), 1, 1.003),
        bad,
        point(fixIsoSeconds(5), 1, 1.005),
      ],
    });
    const coordinates = ['body', 'locations', 3, 'geometry', 'coordinates'];
    const cases: Array<[string, Record<string, unknown>, Array<string | number>]> = [
      ['lat 91', point(fixIsoSeconds(4), 1, 91), [...coordinates, 1]],
      ['lng 181', point(fixIsoSeconds(4), 181, 1), [...coordinates, 0]],
      [
        'missing lat',
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [1] },
          properties: point(fixIsoSeconds(4), 1, 1).properties,
        },
        [...coordinates, 1],
      ],
      [
        'lat "abc"',
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [1, 'abc'] },
          properties: point(fixIsoSeconds(4), 1, 1).properties,
        },
        [...coordinates, 1],
      ],
      ['no geometry', { type: 'Feature', properties: point(fixIsoSeconds(4), 1, 1).properties }, coordinates],
      [
        'timestamp 2099 (ISO)',
        point(YEAR_2099_ISO, 1, 1),
        ['body', 'locations', 3, 'properties', 'timestamp'],
      ],
      [
        'timestamp 2099 (epoch seconds)',
        point(fixIsoSeconds(4), 1, 1, { timestamp: YEAR_2099_SECONDS }),
        ['body', 'locations', 3, 'properties', 'timestamp'],
      ],
      [
        'speed "fast"',
        point(fixIsoSeconds(4), 1, 1, { speed: 'fast' }),
        ['body', 'locations', 3, 'properties', 'speed'],
      ],
    ];
    for (const [what, bad, loc] of cases) {
      expectTrackerError(await postBatch(t, token, batch(bad)), [loc], what);
    }
    expectTrackerError(
      await postBatch(t, token, { location: [] }),
      [['body', 'locations']],
      'no locations array',
    );
    assert.equal(await locationCount(t, device.id), 1, 'none of the good points of a bad batch stored');
  });

  test('with an API key, properties.device_id names each point’s device, created if absent; none → 400', async () => {
    const { t } = fixture;
    const key = await newApiKey(t);
    const res = await postBatch(t, key, {
      locations: [
        point(fixIsoSeconds(0), 5, 5, { device_id: 'overland-a' }),
        point(fixIsoSeconds(1), 5, 5.001, { device_id: 'overland-a' }),
        point(fixIsoSeconds(0), 6, 6, { device_id: 'overland-b' }),
      ],
    });
    expectAnswer(res, OK, 'two devices');
    const a = await deviceByExternalId(t, 'overland-a');
    const b = await deviceByExternalId(t, 'overland-b');
    assert.ok(a && b, 'both devices created');
    assert.equal(await locationCount(t, a.id), 2);
    assert.equal(await locationCount(t, b.id), 1);

    const { device_id: _d, ...anonymous } = point(fixIsoSeconds(2), 5, 5).properties as Record<
      string,
      unknown
    >;
    expectTrackerError(
      await postBatch(t, key, {
        locations: [
          point(fixIsoSeconds(2), 5, 5, { device_id: 'overland-a' }),
          { type: 'Feature', geometry: { type: 'Point', coordinates: [5, 5] }, properties: anonymous },
        ],
      }),
      [['body', 'locations', 1, 'properties', 'device_id']],
      'a point without device_id',
    );
    assert.equal(await locationCount(t, a.id), 2, 'nothing of that batch stored');
  });
});
