/**
 * What a tracker route keeps out (contract §4.6, §1): the credential never stored with a location,
 * even when a user typed it into another field of the app; device ids within the external id's
 * 255 characters (a longer one was a database error on PostgreSQL); Fastify's prototype-poisoning
 * rule as on every JSON route; free-form metadata at most 16 levels deep; a HEAD request stores
 * nothing; ids with leading zeros stay text; a negative heading is unknown; a batch sent again is
 * stored once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  basic,
  expectAnswer,
  expectTrackerError,
  fixIsoSeconds,
  fixSeconds,
  locationCount,
  locationsOf,
  newApiKey,
  send,
  trackedDevice,
  trackerFixture,
} from './helpers.ts';

describe('tracker routes: what they keep out', () => {
  const fixture = trackerFixture();

  test('a token typed into the user name, X-Limit-U and topic is not stored with the location', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const res = await send(t, {
      method: 'POST',
      path: '/ingest/owntracks',
      headers: {
        authorization: basic(token, token),
        'x-limit-u': token,
        'x-limit-d': 'phone',
        'content-type': 'application/json; charset=utf-8',
      },
      body: JSON.stringify({
        _type: 'location',
        topic: `owntracks/${token}/phone`,
        lat: 45,
        lon: 7,
        tst: fixSeconds(0),
        inregions: [`home ${token}`],
      }),
    });
    expectAnswer(res, [], 'stored');
    const [stored] = await locationsOf(t, device.id);
    assert.ok(stored);
    const metadata = JSON.stringify(stored.metadata);
    assert.equal(metadata.includes(token), false, metadata);
    assert.equal(metadata.includes(token.slice(7)), false, metadata);
    assert.deepEqual(stored.metadata.topic, '[redacted]');
    assert.deepEqual(stored.metadata.inregions, ['[redacted]']);
    assert.equal(stored.metadata.owntracks_user, '[redacted]');
    assert.equal(stored.metadata.owntracks_device, 'phone');
  });

  test('with an API key, a device id longer than 255 characters or holding the key is a 400', async () => {
    const { t } = fixture;
    const key = await newApiKey(t);
    const long = 'x'.repeat(3000);
    expectTrackerError(
      await send(t, {
        method: 'GET',
        path: `/ingest/osmand?id=${long}&lat=45&lon=7&token=${key}`,
      }),
      [['query', 'id']],
      'a 3000-character id',
    );
    expectTrackerError(
      await send(t, {
        method: 'POST',
        path: '/ingest/overland',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          locations: [
            {
              type: 'Feature',
              geometry: { type: 'Point', coordinates: [7, 45] },
              properties: { timestamp: fixIsoSeconds(0), device_id: long },
            },
          ],
        }),
      }),
      [['body', 'locations', 0, 'properties', 'device_id']],
      'an Overland device_id of 3000 characters',
    );
    expectTrackerError(
      await send(t, { method: 'GET', path: `/ingest/osmand?id=${key}&lat=45&lon=7&token=${key}` }),
      [['query', 'id']],
      'the key as the device id',
    );
    const devices = await t.h.t.deps.database.db
      .selectFrom('devices')
      .select('external_id')
      .where('external_id', 'in', [long, key])
      .execute();
    assert.deepEqual(devices, [], 'no device was made');
  });

  test('__proto__ in a JSON body is refused as on every JSON route; nothing stored', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const res = await send(t, {
      method: 'POST',
      path: '/ingest/owntracks',
      headers: { authorization: basic('anna', token), 'content-type': 'application/json' },
      body: `{"_type":"location","lat":45,"lon":7,"tst":${fixSeconds(0)},"__proto__":{"polluted":true}}`,
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json<{ error_code: string }>().error_code, 'VALIDATION_ERROR');
    assert.equal(await locationCount(t, device.id), 0);
  });

  test('metadata nested deeper than 16 levels is a 400 naming where', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    let deep: unknown = 'bottom';
    for (let level = 0; level < 17; level += 1) deep = { d: deep };
    const res = await send(t, {
      method: 'POST',
      path: '/ingest/owntracks',
      headers: { authorization: basic('anna', token), 'content-type': 'application/json' },
      body: JSON.stringify({ _type: 'location', lat: 45, lon: 7, tst: fixSeconds(0), extra: deep }),
    });
    const error = expectTrackerError(res, [], 'too deep');
    assert.ok(
      error.details.errors.some(
        (e) => e.type === 'value_error' && e.loc[0] === 'body' && e.loc[1] === 'extra',
      ),
      res.text,
    );
    assert.equal(await locationCount(t, device.id), 0);
  });

  test('HEAD /ingest/osmand stores nothing', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const res = await t.h.t.app.inject({
      method: 'HEAD',
      url: `/api/v1/ingest/osmand?id=x&lat=45&lon=7&timestamp=${fixSeconds(0)}&token=${token}`,
    });
    assert.notEqual(res.statusCode, 200);
    assert.equal(await locationCount(t, device.id), 0);
  });

  test('an id with leading zeros stays text; a negative heading is unknown', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    expectAnswer(
      await send(t, {
        method: 'GET',
        path: `/ingest/osmand?id=x&lat=45&lon=7&timestamp=${fixSeconds(0)}&bearing=-5&driverUniqueId=0012345&rpm=933&token=${token}`,
      }),
      { result: 'ok' },
      'stored',
    );
    const [stored] = await locationsOf(t, device.id);
    assert.ok(stored);
    assert.equal(stored.heading, null);
    assert.equal(stored.metadata.driverUniqueId, '0012345');
    assert.equal(stored.metadata.rpm, 933);
  });

  test('an Overland batch sent again, or a point twice in one batch, is stored once', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    const point = (step: number) => ({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [7 + step / 1000, 45] },
      properties: { timestamp: fixIsoSeconds(step), speed: 3, horizontal_accuracy: 10 },
    });
    const batch = (steps: number[]) =>
      send(t, {
        method: 'POST',
        path: '/ingest/overland',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ locations: steps.map(point) }),
      });
    expectAnswer(await batch([0, 1, 2, 2]), { result: 'ok' }, 'first send, one point twice');
    assert.equal(await locationCount(t, device.id), 3);
    expectAnswer(await batch([0, 1, 2]), { result: 'ok' }, 'the same batch again');
    expectAnswer(await batch([2, 3, 4]), { result: 'ok' }, 'overlapping the last one');
    assert.equal(await locationCount(t, device.id), 5);
    const stored = await locationsOf(t, device.id);
    assert.deepEqual(
      stored.map((l) => l.out_of_order),
      [false, false, false, false, false],
    );
  });
});
