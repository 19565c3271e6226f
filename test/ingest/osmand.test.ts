/**
 * GET|POST /ingest/osmand (contract §4.6): the OsmAnd protocol as each client writes it —
 * Traccar Client ≤ 8 (a POST whose parameters are all in the query, empty body, no content type),
 * Traccar Client 10 (a form body, `application/x-www-form-urlencoded; charset=UTF-8`), Traccar
 * Client 9 (the Transistorsoft JSON object), GPSLogger's custom URL (a GET with `%TIME` ISO or
 * `%TIMESTAMP` seconds) — with the credential as `?token=`. Speed in the query or form is knots,
 * in the JSON m/s; −1 is unknown. A request without a position (heartbeat, push-token
 * registration) is answered 200 and stores nothing; a payload it cannot read is a 400 naming the
 * client's field.
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
  fixIso,
  fixSeconds,
  locationCount,
  locationsOf,
  near,
  newApiKey,
  send,
  type TrackerHarness,
  trackedDevice,
  trackerFixture,
  YEAR_2099_ISO,
  YEAR_2099_SECONDS,
} from './helpers.ts';

const OK = { result: 'ok' };
const KNOT = 1852 / 3600;
const FORM = 'application/x-www-form-urlencoded; charset=UTF-8';

/** A query string in the order given, encoded as the clients encode it. */
function query(params: Array<[string, string | number]>): string {
  return params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
}

/** Traccar Client 8 (ProtocolFormatter): the configured URL's query, then its parameters; no body. */
function legacyPost(t: TrackerHarness, params: Array<[string, string | number]>): Promise<Answer> {
  return send(t, { method: 'POST', path: `/ingest/osmand?${query(params)}` });
}

/** Traccar Client 10 (HttpUploader, Ktor submitForm). */
function formPost(
  t: TrackerHarness,
  token: string,
  params: Array<[string, string | number]>,
): Promise<Answer> {
  return send(t, {
    method: 'POST',
    path: `/ingest/osmand?token=${token}`,
    headers: { 'content-type': FORM },
    body: query(params),
  });
}

/** Traccar Client 9 (flutter_background_geolocation with the app's locationTemplate). */
function jsonPost(t: TrackerHarness, token: string, body: unknown): Promise<Answer> {
  return send(t, {
    method: 'POST',
    path: `/ingest/osmand?token=${token}`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

function getQuery(
  t: TrackerHarness,
  params: Array<[string, string | number]>,
  headers = {},
): Promise<Answer> {
  return send(t, { method: 'GET', path: `/ingest/osmand?${query(params)}`, headers });
}

function traccar9Body(step: number, lat: number, lon: number, overrides: Record<string, unknown> = {}) {
  const timestamp = fixIso(step);
  return {
    location: {
      timestamp,
      coords: {
        latitude: lat,
        longitude: lon,
        accuracy: 5,
        speed: 3,
        heading: -1,
        altitude: 5,
        ...overrides,
      },
      is_moving: true,
      odometer: 1234,
      event: '',
      battery: { level: 0.87, is_charging: false },
      activity: { type: 'in_vehicle' },
      extras: {},
      _: `&id=48241179&lat=${lat}&lon=${lon}&timestamp=${timestamp}&`,
    },
    device_id: '48241179',
  };
}

describe('GET|POST /ingest/osmand', () => {
  const fixture = trackerFixture();

  test('Traccar Client 8: POST with every parameter in the query and no body; speed in knots', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t, { name: 'traccar 8' });
    const { geofence } = await enterWatch(t, 13.405, 52.52, 'Traccar 8 depot');

    const res = await legacyPost(t, [
      ['token', token],
      ['id', '123456789012345'],
      ['timestamp', fixSeconds(0)],
      ['lat', '52.52'],
      ['lon', '13.405'],
      ['speed', '9.71922'],
      ['bearing', '45.0'],
      ['altitude', '34.0'],
      ['accuracy', '12.0'],
      ['batt', '87.0'],
      ['charge', 'true'],
    ]);
    expectAnswer(res, OK, 'legacy query POST');

    const [stored, ...rest] = await locationsOf(t, device.id);
    assert.equal(rest.length, 0);
    assert.ok(stored);
    assert.deepEqual(stored.point.coordinates, [13.405, 52.52]);
    assert.equal(stored.timestamp, fixIso(0));
    near(stored.speed, 9.71922 * KNOT, 'speed: knots → m/s');
    assert.equal(stored.heading, 45);
    assert.equal(stored.altitude, 34);
    assert.equal(stored.accuracy, 12);
    assert.equal(stored.metadata.batt, 87);
    assert.equal(stored.metadata.charge, true);
    assert.equal('token' in stored.metadata, false, 'the credential is not metadata');
    assert.equal(JSON.stringify(stored.metadata).includes(token), false);
    assert.equal(await deviceByExternalId(t, '123456789012345'), undefined, "the token's device, not id");

    const events = await eventsOf(t, device.id);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.geofence_id]),
      [['enter', geofence.id]],
    );
    const delivered = await deliveredFor(t, device.id);
    assert.deepEqual(
      delivered.map((d) => [d.event, d.data.geofence_id, d.data.metadata.event_metadata.batt]),
      [['geofence.enter', geofence.id, 87]],
    );
  });

  test('Traccar Client 10: a form body (charset=UTF-8) with battery extras', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t, { name: 'traccar 10' });
    const { geofence } = await enterWatch(t, -122.084, 37.4219983, 'Traccar 10 campus');

    const res = await formPost(t, token, [
      ['id', '48241179'],
      ['lat', '37.4219983'],
      ['lon', '-122.084'],
      ['timestamp', fixSeconds(1)],
      ['accuracy', '5.0'],
      ['altitude', '5.0'],
      ['speed', '3.89'],
      ['bearing', '270.0'],
      ['batt', '87'],
      ['charge', 'true'],
      ['battery_health', 'good'],
      ['battery_voltage', '4213'],
      ['battery_temp', '27.5'],
    ]);
    expectAnswer(res, OK, 'form POST');

    const [stored] = await locationsOf(t, device.id);
    assert.ok(stored);
    assert.deepEqual(stored.point.coordinates, [-122.084, 37.4219983]);
    assert.equal(stored.timestamp, fixIso(1));
    near(stored.speed, 3.89 * KNOT, 'speed: knots → m/s');
    assert.equal(stored.heading, 270);
    assert.equal(stored.accuracy, 5);
    assert.equal(stored.altitude, 5);
    assert.deepEqual(
      {
        batt: stored.metadata.batt,
        charge: stored.metadata.charge,
        battery_health: stored.metadata.battery_health,
        battery_voltage: stored.metadata.battery_voltage,
        battery_temp: stored.metadata.battery_temp,
      },
      { batt: 87, charge: true, battery_health: 'good', battery_voltage: 4213, battery_temp: 27.5 },
    );
    assert.equal('token' in stored.metadata, false);

    assert.deepEqual(
      (await eventsOf(t, device.id)).map((e) => [e.event_type, e.geofence_id]),
      [['enter', geofence.id]],
    );
    const delivered = await deliveredFor(t, device.id);
    assert.deepEqual(
      delivered.map((d) => [d.event, d.data.geofence_id]),
      [['geofence.enter', geofence.id]],
    );
  });

  test('Traccar Client 9: the JSON object; speed m/s, heading −1 unknown, battery and activity in metadata', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t, { name: 'traccar 9' });
    const { geofence } = await enterWatch(t, 2.2945, 48.8584, 'Traccar 9 tower');

    const res = await jsonPost(t, token, traccar9Body(2, 48.8584, 2.2945));
    expectAnswer(res, OK, 'JSON POST');

    const [stored] = await locationsOf(t, device.id);
    assert.ok(stored);
    assert.deepEqual(stored.point.coordinates, [2.2945, 48.8584]);
    assert.equal(stored.timestamp, fixIso(2));
    assert.equal(stored.speed, 3, 'coords.speed is m/s already');
    assert.equal(stored.heading, null, 'heading −1 is unknown');
    assert.equal(stored.accuracy, 5);
    assert.equal(stored.altitude, 5);
    assert.deepEqual(stored.metadata.battery, { level: 0.87, is_charging: false });
    assert.deepEqual(stored.metadata.activity, { type: 'in_vehicle' });
    assert.equal(stored.metadata.is_moving, true);
    assert.equal(stored.metadata.odometer, 1234);

    // −1 speed and accuracy: unknown too.
    expectAnswer(
      await jsonPost(t, token, traccar9Body(3, 48.8584, 2.2945, { speed: -1, accuracy: -1, heading: 90 })),
      OK,
      'unknown speed',
    );
    const [latest] = await locationsOf(t, device.id);
    assert.equal(latest?.timestamp, fixIso(3));
    assert.equal(latest?.speed, null);
    assert.equal(latest?.accuracy, null);
    assert.equal(latest?.heading, 90);

    assert.deepEqual(
      (await eventsOf(t, device.id)).map((e) => [e.event_type, e.geofence_id]),
      [['enter', geofence.id]],
    );
    const delivered = await deliveredFor(t, device.id);
    assert.deepEqual(
      delivered.map((d) => [d.event, d.data.geofence_id]),
      [['geofence.enter', geofence.id]],
    );
  });

  test('GPSLogger custom URL: GET with ?token=, %TIME (ISO, ms, Z) and %TIMESTAMP (seconds)', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t, { name: 'gpslogger' });
    const { geofence } = await enterWatch(t, 19.111, 12.193, 'GPSLogger spot');

    // http://host/api/v1/ingest/osmand?id=gl&lat=%LAT&lon=%LON&timestamp=%TIME&speed=%SPD&bearing=%DIR
    //   &altitude=%ALT&accuracy=%ACC&batt=%BATT&ischarging=%ISCHARGING&hdop=%HDOP&sat=%SAT&prov=%PROV&token=…
    // %TIME is URL-encoded by GPSLogger with ':' kept.
    const first = await send(t, {
      method: 'GET',
      path:
        `/ingest/osmand?id=gl&lat=12.193&lon=19.111&timestamp=${fixIso(4)}&speed=5.0&bearing=270.0` +
        `&altitude=45.0&accuracy=8.0&batt=91.0&ischarging=false&hdop=&sat=7&prov=gps&token=${token}`,
    });
    expectAnswer(first, OK, 'GPSLogger %TIME');
    const [stored] = await locationsOf(t, device.id);
    assert.ok(stored);
    assert.deepEqual(stored.point.coordinates, [19.111, 12.193]);
    assert.equal(stored.timestamp, fixIso(4));
    near(stored.speed, 5 * KNOT, 'speed: the OsmAnd parameter is knots');
    assert.equal(stored.heading, 270);
    assert.equal(stored.altitude, 45);
    assert.equal(stored.accuracy, 8);
    assert.equal(stored.metadata.batt, 91);
    assert.equal(stored.metadata.ischarging, false);
    assert.equal(stored.metadata.sat, 7);
    assert.equal(stored.metadata.prov, 'gps');
    assert.equal('token' in stored.metadata, false);

    const second = await send(t, {
      method: 'GET',
      path: `/ingest/osmand?id=gl&lat=12.1931&lon=19.1111&timestamp=${fixSeconds(5)}&speed=0.0&batt=90.0&token=${token}`,
    });
    expectAnswer(second, OK, 'GPSLogger %TIMESTAMP');
    const [latest] = await locationsOf(t, device.id);
    assert.equal(latest?.timestamp, fixIso(5));
    assert.equal(latest?.speed, 0);
    assert.equal(await locationCount(t, device.id), 2);

    assert.deepEqual(
      (await eventsOf(t, device.id)).map((e) => [e.event_type, e.geofence_id]),
      [['enter', geofence.id]],
    );
    const delivered = await deliveredFor(t, device.id);
    assert.deepEqual(
      delivered.map((d) => [d.event, d.data.geofence_id]),
      [['geofence.enter', geofence.id]],
    );
  });

  test('timestamps: epoch seconds, epoch milliseconds, ISO with offset, "yyyy-MM-dd HH:mm:ss" UTC; Traccar’s location=lat,lon', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    // Epoch seconds, epoch milliseconds, ISO with an offset, Traccar's "yyyy-MM-dd HH:mm:ss" (UTC).
    const forms: Array<string | number> = [
      fixSeconds(10),
      fixSeconds(11) * 1000,
      '2026-03-10T12:01:55+01:00',
      '2026-03-10 11:02:10',
    ];
    const expected = [fixIso(10), fixIso(11), '2026-03-10T11:01:55.000Z', fixIso(13)];
    for (const timestamp of forms) {
      expectAnswer(
        await getQuery(t, [
          ['token', token],
          ['id', 'x'],
          ['lat', '1.5'],
          ['lon', '2.5'],
          ['timestamp', timestamp],
        ]),
        OK,
        `timestamp ${timestamp}`,
      );
    }
    expectAnswer(
      await getQuery(t, [
        ['token', token],
        ['id', 'x'],
        ['timestamp', fixSeconds(14)],
        ['location', '1.25,2.75'],
      ]),
      OK,
      'location=lat,lon',
    );
    const stored = (await locationsOf(t, device.id)).reverse();
    assert.deepEqual(
      stored.map((l) => l.timestamp),
      [...expected, fixIso(14)].sort(),
    );
    assert.deepEqual(stored.at(-1)?.point.coordinates, [2.75, 1.25]);
  });

  test('a heartbeat or push-token registration (no lat, no lon) is answered 200 and stores nothing', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    expectAnswer(
      await formPost(t, token, [
        ['id', '48241179'],
        ['notificationToken', 'fcm-token-abc:APA91b'],
      ]),
      OK,
      'push-token registration',
    );
    expectAnswer(
      await formPost(t, token, [
        ['id', '48241179'],
        ['timestamp', fixSeconds(0)],
      ]),
      OK,
      'heartbeat without a fix (Traccar Client 10)',
    );
    expectAnswer(
      await legacyPost(t, [
        ['token', token],
        ['id', '48241179'],
      ]),
      OK,
      'query with only an id',
    );
    assert.equal(await locationCount(t, device.id), 0);
  });

  test('bad payloads: 400 naming the query, form or JSON field; nothing stored', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    expectAnswer(
      await getQuery(t, [
        ['token', token],
        ['lat', '1'],
        ['lon', '1'],
        ['timestamp', fixSeconds(0)],
      ]),
      OK,
      'a first location',
    );
    const base: Array<[string, string | number]> = [
      ['token', token],
      ['id', 'x'],
      ['lat', '10.5'],
      ['lon', '20.5'],
      ['timestamp', fixSeconds(1)],
    ];
    const withParam = (name: string, value: string | number | undefined) =>
      value === undefined
        ? base.filter(([k]) => k !== name)
        : base.map(([k, v]): [string, string | number] => [k, k === name ? value : v]);
    const cases: Array<[string, Array<[string, string | number]>, Array<string | number>]> = [
      ['missing lat', withParam('lat', undefined), ['query', 'lat']],
      ['missing lon', withParam('lon', undefined), ['query', 'lon']],
      ['lat 91', withParam('lat', '91'), ['query', 'lat']],
      ['lon 181', withParam('lon', '181'), ['query', 'lon']],
      ['lon "abc"', withParam('lon', 'abc'), ['query', 'lon']],
      ['lat "12,5"', withParam('lat', '12,5'), ['query', 'lat']],
      ['timestamp 2099 (epoch seconds)', withParam('timestamp', YEAR_2099_SECONDS), ['query', 'timestamp']],
      ['timestamp 2099 (ISO 8601)', withParam('timestamp', YEAR_2099_ISO), ['query', 'timestamp']],
      ['timestamp "abc"', withParam('timestamp', 'abc'), ['query', 'timestamp']],
    ];
    for (const [what, params, loc] of cases) {
      expectTrackerError(await getQuery(t, params), [loc], `GET ${what}`);
      expectTrackerError(await legacyPost(t, params), [loc], `legacy POST ${what}`);
    }
    // Two unreadable fields at once: both named.
    expectTrackerError(
      await getQuery(t, [
        ['token', token],
        ['lat', 'north'],
        ['lon', 'east'],
      ]),
      [
        ['query', 'lat'],
        ['query', 'lon'],
      ],
      'two problems',
    );

    const jsonCases: Array<[string, unknown, Array<string | number>]> = [
      [
        'missing latitude',
        (() => {
          const body = traccar9Body(1, 10, 20);
          delete (body.location.coords as Record<string, unknown>).latitude;
          return body;
        })(),
        ['body', 'location', 'coords', 'latitude'],
      ],
      ['latitude 91', traccar9Body(1, 91, 20), ['body', 'location', 'coords', 'latitude']],
      [
        'longitude "abc"',
        traccar9Body(1, 10, 20, { longitude: 'abc' }),
        ['body', 'location', 'coords', 'longitude'],
      ],
      [
        'timestamp 2099 (ISO)',
        {
          ...traccar9Body(1, 10, 20),
          location: { ...traccar9Body(1, 10, 20).location, timestamp: YEAR_2099_ISO },
        },
        ['body', 'location', 'timestamp'],
      ],
      [
        'timestamp 2099 (epoch seconds)',
        {
          ...traccar9Body(1, 10, 20),
          location: { ...traccar9Body(1, 10, 20).location, timestamp: YEAR_2099_SECONDS },
        },
        ['body', 'location', 'timestamp'],
      ],
      ['no location', { device_id: 'x' }, ['body', 'location']],
    ];
    for (const [what, body, loc] of jsonCases) {
      expectTrackerError(await jsonPost(t, token, body), [loc], `JSON ${what}`);
    }
    assert.equal(await locationCount(t, device.id), 1, 'only the first location');
  });

  test('an out-of-range lat beside an unreadable lon: both named', async () => {
    const { t } = fixture;
    const { token } = await trackedDevice(t);
    expectTrackerError(
      await getQuery(t, [
        ['token', token],
        ['lat', '95'],
        ['lon', 'east'],
      ]),
      [
        ['query', 'lat'],
        ['query', 'lon'],
      ],
      'two problems',
    );
  });

  test('a bad form field is named in the body (loc ["body", …]), not the query', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const cases: Array<[string, Array<[string, string | number]>, Array<string | number>]> = [
      [
        'lat 91',
        [
          ['id', 'x'],
          ['lat', '91'],
          ['lon', '1'],
          ['timestamp', fixSeconds(0)],
        ],
        ['body', 'lat'],
      ],
      [
        'lon "abc"',
        [
          ['id', 'x'],
          ['lat', '1'],
          ['lon', 'abc'],
        ],
        ['body', 'lon'],
      ],
      [
        'missing lat',
        [
          ['id', 'x'],
          ['lon', '1'],
        ],
        ['body', 'lat'],
      ],
      [
        'timestamp 2099',
        [
          ['id', 'x'],
          ['lat', '1'],
          ['lon', '1'],
          ['timestamp', YEAR_2099_SECONDS],
        ],
        ['body', 'timestamp'],
      ],
    ];
    for (const [what, params, loc] of cases) {
      expectTrackerError(await formPost(t, token, params), [loc], `form ${what}`);
    }
    assert.equal(await locationCount(t, device.id), 0);
  });

  test('bad form payloads: 400, nothing stored', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const cases: Array<[string, Array<[string, string | number]>, string]> = [
      [
        'lat 91',
        [
          ['id', 'x'],
          ['lat', '91'],
          ['lon', '1'],
        ],
        'lat',
      ],
      [
        'lon "abc"',
        [
          ['id', 'x'],
          ['lat', '1'],
          ['lon', 'abc'],
        ],
        'lon',
      ],
      [
        'missing lat',
        [
          ['id', 'x'],
          ['lon', '1'],
        ],
        'lat',
      ],
      [
        'timestamp 2099 (seconds)',
        [
          ['id', 'x'],
          ['lat', '1'],
          ['lon', '1'],
          ['timestamp', YEAR_2099_SECONDS],
        ],
        'timestamp',
      ],
      [
        'timestamp 2099 (ISO)',
        [
          ['id', 'x'],
          ['lat', '1'],
          ['lon', '1'],
          ['timestamp', YEAR_2099_ISO],
        ],
        'timestamp',
      ],
    ];
    for (const [what, params, field] of cases) {
      const body = expectTrackerError(await formPost(t, token, params), [], `form ${what}`);
      assert.ok(
        body.details.errors.some((e) => e.loc.at(-1) === field),
        `form ${what}: ${field} named in ${JSON.stringify(body.details.errors)}`,
      );
    }
    assert.equal(await locationCount(t, device.id), 0);
  });

  test('with an API key, id (or deviceid, or JSON device_id) names the device, created if absent; no id → 400', async () => {
    const { t } = fixture;
    const key = await newApiKey(t);
    expectAnswer(
      await getQuery(
        t,
        [
          ['id', 'new-phone'],
          ['lat', '3.5'],
          ['lon', '4.5'],
          ['timestamp', fixSeconds(0)],
        ],
        { 'x-api-key': key },
      ),
      OK,
      'id=new-phone',
    );
    const created = await deviceByExternalId(t, 'new-phone');
    assert.ok(created, 'device new-phone created');
    assert.equal(created.external_id, 'new-phone');
    const [stored] = await locationsOf(t, created.id);
    assert.deepEqual(stored?.point.coordinates, [4.5, 3.5]);

    // The same id again: the same device.
    expectAnswer(
      await legacyPost(t, [
        ['token', key],
        ['id', 'new-phone'],
        ['lat', '3.6'],
        ['lon', '4.6'],
        ['timestamp', fixSeconds(1)],
      ]),
      OK,
      'again, key in ?token=',
    );
    assert.equal(await locationCount(t, created.id), 2);

    expectAnswer(
      await getQuery(
        t,
        [
          ['deviceid', 'by-deviceid'],
          ['lat', '1'],
          ['lon', '1'],
        ],
        { authorization: `Bearer ${key}` },
      ),
      OK,
      'deviceid',
    );
    assert.ok(await deviceByExternalId(t, 'by-deviceid'), 'device by deviceid');

    expectAnswer(await jsonPost(t, key, traccar9Body(2, 5, 6)), OK, 'JSON device_id');
    const byJson = await deviceByExternalId(t, '48241179');
    assert.ok(byJson, 'device 48241179 created from device_id');
    assert.equal(await locationCount(t, byJson.id), 1);

    expectTrackerError(
      await getQuery(
        t,
        [
          ['lat', '3.5'],
          ['lon', '4.5'],
        ],
        { 'x-api-key': key },
      ),
      [['query', 'id']],
      'no id',
    );
    const { device_id: _id, ...noDevice } = traccar9Body(3, 5, 6);
    expectTrackerError(await jsonPost(t, key, noDevice), [['body', 'device_id']], 'JSON without device_id');
    assert.equal(await locationCount(t, byJson.id), 1);
  });
});
