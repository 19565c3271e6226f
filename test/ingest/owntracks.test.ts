/**
 * POST /ingest/owntracks (contract §4.6): OwnTracks in HTTP mode, each request written as the
 * Android app writes it (HttpMessageProcessorEndpoint: Basic credentials, X-Limit-U / X-Limit-D,
 * `application/json; charset=utf-8`, the MessageLocation body with `vel` in km/h and `tst` in epoch
 * seconds). A location is stored as POST /devices/{id}/locations stores it (events, webhooks), the
 * answer is always `[]`, other message types and an empty body store nothing, a payload it cannot
 * read is a 400 naming the OwnTracks field.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Answer,
  basic,
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

const LAT = 50.1;
const LON = 60.2;

/** The Android app's location message (MessageLocation, default preferences, extendedData on). */
function androidLocation(step: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const tst = fixSeconds(step);
  return {
    _type: 'location',
    topic: 'owntracks/username/device',
    qos: 1,
    retained: true,
    created_at: tst + 5,
    _id: `a1b2c3d${step}`,
    source: 'fused',
    t: 'u',
    batt: 30,
    bs: 2,
    acc: 10,
    vac: 1,
    lat: LAT,
    lon: LON,
    alt: 20,
    vel: 5,
    cog: 56,
    tst,
    m: 1,
    conn: 'w',
    inregions: ['Home'],
    BSSID: '12:34:56:78',
    SSID: 'Wifi SSID',
    tid: 'ce',
    ...overrides,
  };
}

/** As the Android app sends it: Basic user:password (the password a credential), X-Limit-U/D. */
function postAndroid(
  t: TrackerHarness,
  password: string,
  body: string,
  options: { user?: string; device?: string } = {},
): Promise<Answer> {
  const user = options.user ?? 'username';
  const headers: Record<string, string> = {
    'user-agent': 'Owntracks-Android/gms/420412000',
    authorization: basic(user, password),
    'content-type': 'application/json; charset=utf-8',
    'x-limit-u': user,
  };
  if (options.device !== '') headers['x-limit-d'] = options.device ?? 'device';
  return send(t, { method: 'POST', path: '/ingest/owntracks', headers, body });
}

describe('POST /ingest/owntracks', () => {
  const fixture = trackerFixture();

  test('the Android app’s location: stored with units converted, extras in metadata, enter event and webhook, answer []', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t, { name: 'owntracks phone' });
    const { geofence } = await enterWatch(t, LON, LAT, 'OwnTracks home');

    const res = await postAndroid(t, token, JSON.stringify(androidLocation(0)));
    expectAnswer(res, [], 'location');

    const [stored, ...rest] = await locationsOf(t, device.id);
    assert.equal(rest.length, 0, 'one location');
    assert.ok(stored);
    assert.deepEqual(stored.point, { type: 'Point', coordinates: [LON, LAT] });
    assert.equal(stored.timestamp, fixIso(0));
    near(stored.speed, 5 / 3.6, 'speed: vel km/h → m/s');
    assert.equal(stored.heading, 56);
    assert.equal(stored.accuracy, 10);
    assert.equal(stored.altitude, 20);
    const expectedExtras = {
      topic: 'owntracks/username/device',
      qos: 1,
      retained: true,
      created_at: fixSeconds(0) + 5,
      _id: 'a1b2c3d0',
      source: 'fused',
      t: 'u',
      batt: 30,
      bs: 2,
      vac: 1,
      m: 1,
      conn: 'w',
      inregions: ['Home'],
      BSSID: '12:34:56:78',
      SSID: 'Wifi SSID',
      tid: 'ce',
    };
    for (const [key, value] of Object.entries(expectedExtras)) {
      assert.deepEqual(stored.metadata[key], value, `metadata.${key} in ${JSON.stringify(stored.metadata)}`);
    }
    for (const mapped of ['lat', 'lon', 'tst', 'vel', 'cog']) {
      assert.equal(mapped in stored.metadata, false, `${mapped} is a column, not metadata`);
    }
    assert.equal(JSON.stringify(stored.metadata).includes(token), false, 'no credential in metadata');

    // The token's device, whatever X-Limit-D and topic say: no device "device" appears.
    assert.equal(await deviceByExternalId(t, 'device'), undefined);

    const events = await eventsOf(t, device.id);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.geofence_id, e.location_id]),
      [['enter', geofence.id, stored.id]],
    );
    const delivered = await deliveredFor(t, device.id);
    assert.equal(delivered.length, 1, 'one verified delivery');
    assert.equal(delivered[0]?.event, 'geofence.enter');
    assert.equal(delivered[0]?.data.geofence_id, geofence.id);
    assert.equal(delivered[0]?.data.event_id, events[0]?.event_id);
    assert.equal(delivered[0]?.data.metadata.event_metadata.batt, 30, 'the extras travel with the event');
  });

  test('iOS form: plain application/json, Basic, X-Limit headers always sent; the answer is []', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const body = JSON.stringify({
      _type: 'location',
      lat: 50.100001,
      lon: 60.200001,
      tst: fixSeconds(3),
      acc: 65,
      batt: 80,
      bs: 1,
      ssid: 'Home',
      topic: 'owntracks/user/device',
      tid: 'ip',
    });
    const res = await send(t, {
      method: 'POST',
      path: '/ingest/owntracks',
      headers: {
        'content-type': 'application/json',
        authorization: basic('user', token),
        'x-limit-u': 'user',
        'x-limit-d': 'device',
      },
      body,
    });
    expectAnswer(res, [], 'iOS location');
    const [stored] = await locationsOf(t, device.id);
    assert.equal(stored?.timestamp, fixIso(3));
    assert.equal(stored?.accuracy, 65);
    assert.equal(stored?.speed, null, 'no vel: speed unknown');
    assert.equal(stored?.heading, null, 'no cog: heading unknown');
    assert.equal(stored?.altitude, null, 'no alt: altitude unknown');
    assert.equal(stored?.metadata.ssid, 'Home');
    assert.equal(stored?.metadata.batt, 80);
  });

  test('a transition message and an empty body are answered [] and store nothing', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const transition = {
      _type: 'transition',
      _id: 'e1f2a3b4',
      event: 'enter',
      desc: 'Home',
      tid: 'ce',
      t: 'c',
      tst: fixSeconds(1),
      wtst: fixSeconds(-100),
      acc: 10,
      lat: LAT,
      lon: LON,
      topic: 'owntracks/username/device/event',
    };
    expectAnswer(await postAndroid(t, token, JSON.stringify(transition)), [], 'transition');
    // MessageClear: zero bytes, still labelled JSON (Android's and the plain form).
    expectAnswer(await postAndroid(t, token, ''), [], 'empty body, charset=utf-8');
    const plainEmpty = await send(t, {
      method: 'POST',
      path: '/ingest/owntracks',
      headers: { 'content-type': 'application/json', authorization: basic('username', token) },
      body: '',
    });
    expectAnswer(plainEmpty, [], 'empty body, application/json');
    for (const type of ['waypoint', 'status', 'cmd', 'card', 'encrypted']) {
      expectAnswer(
        await postAndroid(t, token, JSON.stringify({ _type: type, data: 'x', tst: fixSeconds(2) })),
        [],
        type,
      );
    }
    assert.equal(await locationCount(t, device.id), 0, 'nothing stored');
    assert.deepEqual(await eventsOf(t, device.id), []);
  });

  test('a payload it cannot read: 400 naming the OwnTracks field, nothing stored', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    expectAnswer(await postAndroid(t, token, JSON.stringify(androidLocation(0))), [], 'a first location');
    const { lat: _lat, ...withoutLat } = androidLocation(1);
    const cases: Array<[string, Record<string, unknown>, Array<string | number>]> = [
      ['missing lat', withoutLat, ['body', 'lat']],
      ['lat 91', androidLocation(1, { lat: 91 }), ['body', 'lat']],
      ['lon -181', androidLocation(1, { lon: -181 }), ['body', 'lon']],
      ['lat "abc"', androidLocation(1, { lat: 'abc' }), ['body', 'lat']],
      ['tst in 2099 (epoch seconds)', androidLocation(1, { tst: YEAR_2099_SECONDS }), ['body', 'tst']],
      ['tst in 2099 (ISO 8601)', androidLocation(1, { tst: YEAR_2099_ISO }), ['body', 'tst']],
      ['tst "abc"', androidLocation(1, { tst: 'abc' }), ['body', 'tst']],
    ];
    for (const [what, body, loc] of cases) {
      expectTrackerError(await postAndroid(t, token, JSON.stringify(body)), [loc], what);
    }
    const malformed = await postAndroid(t, token, '{"_type":"location",');
    assert.equal(malformed.status, 400, `malformed JSON: ${malformed.text}`);
    assert.equal(malformed.json<{ error_code: string }>().error_code, 'VALIDATION_ERROR');
    assert.equal(await locationCount(t, device.id), 1, 'only the first location is stored');
  });

  test('with an API key the device is X-Limit-D, else the topic’s last segment, else tid (created if absent)', async () => {
    const { t } = fixture;
    const key = await newApiKey(t);
    const byHeader = await postAndroid(t, key, JSON.stringify(androidLocation(0, { tid: 'h1' })), {
      user: 'anna',
      device: 'anna-pixel',
    });
    expectAnswer(byHeader, [], 'X-Limit-D');
    const byTopic = await postAndroid(
      t,
      key,
      JSON.stringify(androidLocation(1, { topic: 'owntracks/anna/anna-tablet', tid: 't1' })),
      { user: 'anna', device: '' },
    );
    expectAnswer(byTopic, [], 'topic');
    const { topic: _topic, ...noTopic } = androidLocation(2, { tid: 'zx' });
    expectAnswer(await postAndroid(t, key, JSON.stringify(noTopic), { device: '' }), [], 'tid');

    for (const [externalId, timestamp] of [
      ['anna-pixel', fixIso(0)],
      ['anna-tablet', fixIso(1)],
      ['zx', fixIso(2)],
    ] as const) {
      const device = await deviceByExternalId(t, externalId);
      assert.ok(device, `device ${externalId} created`);
      const locations = await locationsOf(t, device.id);
      assert.deepEqual(
        locations.map((l) => l.timestamp),
        [timestamp],
        `${externalId}'s location`,
      );
    }
    // The same header again: the existing device, not a second one.
    expectAnswer(
      await postAndroid(t, key, JSON.stringify(androidLocation(3)), { device: 'anna-pixel' }),
      [],
      'again',
    );
    const again = await deviceByExternalId(t, 'anna-pixel');
    assert.ok(again);
    assert.equal(await locationCount(t, again.id), 2);

    // No X-Limit-D, no topic, no tid: nothing names the device.
    const { topic: _t, tid: _tid, ...anonymous } = androidLocation(4);
    const unnamed = await postAndroid(t, key, JSON.stringify(anonymous), { device: '' });
    assert.equal(unnamed.status, 400, unnamed.text);
  });
});
