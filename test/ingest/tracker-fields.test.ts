/**
 * Properties of the tracker readers (contract §4.6), over generated input: epoch seconds and
 * milliseconds are told apart at 10^11 and read exactly, as numbers or as text; unit conversions
 * (knots, km/h) hold for any value; −1 means unknown; the readers never throw, whatever the body,
 * and every problem they report names a field under the request part it came from.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { readOsmAndParams, readTraccarJson } from '../../src/ingest/osmand.ts';
import { readOverland } from '../../src/ingest/overland.ts';
import { readOwnTracks } from '../../src/ingest/owntracks.ts';
import { FieldReader } from '../../src/ingest/tracker-fields.ts';
import type { TrackerPayload } from '../../src/ingest/tracker-fix.ts';

const RUNS = { numRuns: 300 };
/** Epoch seconds from 1970 to 2200 (well below 10^11) and milliseconds from March 1973 on. */
const seconds = fc.integer({ min: 0, max: 7_258_118_400 });
const millis = fc.integer({ min: 100_000_000_000, max: 7_258_118_400_000 });
const latitude = fc.double({ min: -90, max: 90, noNaN: true });
const longitude = fc.double({ min: -180, max: 180, noNaN: true });
const nonNegative = fc.double({ min: 0, max: 1e6, noNaN: true });

function timeOf(value: unknown): { iso: string | undefined; issues: number } {
  const reader = new FieldReader({ t: value }, ['query']);
  return { iso: reader.time('t'), issues: reader.issues.length };
}

/** Every issue's loc starts with one of these request parts, and every fix has finite numbers. */
function wellFormed(payload: TrackerPayload, roots: string[]): void {
  for (const issue of payload.issues) {
    assert.ok(roots.includes(String(issue.loc[0])), `loc ${JSON.stringify(issue.loc)}`);
    assert.equal(typeof issue.msg, 'string');
    assert.equal(typeof issue.type, 'string');
  }
  for (const fix of payload.fixes) {
    assert.ok(Number.isFinite(fix.lat) && Number.isFinite(fix.lng));
    for (const value of [fix.speed, fix.heading, fix.accuracy, fix.altitude]) {
      assert.ok(value === null || Number.isFinite(value), `finite or null: ${value}`);
    }
  }
}

describe('tracker field readers', () => {
  test('epoch seconds (below 10^11) and milliseconds are read exactly, as numbers and as text', () => {
    fc.assert(
      fc.property(seconds, (s) => {
        const expected = new Date(s * 1000).toISOString();
        assert.deepEqual(timeOf(s), { iso: expected, issues: 0 });
        assert.deepEqual(timeOf(String(s)), { iso: expected, issues: 0 });
      }),
      RUNS,
    );
    fc.assert(
      fc.property(millis, (ms) => {
        const expected = new Date(ms).toISOString();
        assert.deepEqual(timeOf(ms), { iso: expected, issues: 0 });
        assert.deepEqual(timeOf(String(ms)), { iso: expected, issues: 0 });
      }),
      RUNS,
    );
  });

  test('ISO 8601 text (Z, offsets with and without a colon, a space for T) is the same instant', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_102_444_800 }),
        fc.integer({ min: -12 * 60, max: 14 * 60 }),
        (s, offsetMinutes) => {
          const instant = new Date(s * 1000);
          const expected = instant.toISOString();
          const local = new Date(instant.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 19);
          const sign = offsetMinutes < 0 ? '-' : '+';
          const hh = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
          const mm = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
          assert.equal(timeOf(`${expected.slice(0, 19)}Z`).iso, expected);
          assert.equal(timeOf(`${local}${sign}${hh}:${mm}`).iso, expected, `${local}${sign}${hh}:${mm}`);
          assert.equal(timeOf(`${local}${sign}${hh}${mm}`).iso, expected, `${local}${sign}${hh}${mm}`);
          assert.equal(timeOf(expected.slice(0, 19).replace('T', ' ')).iso, expected, 'no zone: UTC');
        },
      ),
      RUNS,
    );
  });

  test('text that is neither a number nor a date-time is a problem at its field, never a time', () => {
    fc.assert(
      fc.property(
        fc
          .string()
          .filter(
            (s) => !/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(s) && !/^\d{4}-\d{2}-\d{2}/.test(s),
          ),
        (text) => {
          const reader = new FieldReader({ timestamp: text }, ['query']);
          const value = reader.time('timestamp');
          if (text === '') {
            assert.equal(value, undefined);
            assert.deepEqual(reader.issues, []);
          } else {
            assert.equal(value, undefined, JSON.stringify(text));
            assert.deepEqual(
              reader.issues.map((i) => i.loc),
              [['query', 'timestamp']],
            );
          }
        },
      ),
      RUNS,
    );
  });

  test('OsmAnd query: lat/lon as decimal text, speed knots → m/s, −1 unknown, extras typed', () => {
    fc.assert(
      fc.property(
        latitude,
        longitude,
        nonNegative,
        seconds,
        fc.integer({ min: 0, max: 100 }),
        (lat, lon, knots, s, batt) => {
          const payload = readOsmAndParams(
            {
              id: 'x',
              lat: String(lat),
              lon: String(lon),
              speed: String(knots),
              bearing: '-1',
              accuracy: '-1',
              timestamp: String(s),
              batt: String(batt),
              charge: 'false',
              token: 'gf_dev_secret',
            },
            {},
          );
          assert.deepEqual(payload.issues, []);
          const [fix] = payload.fixes;
          assert.ok(fix);
          // As text, -0 is "0": compare with what the text says.
          assert.equal(fix.lat, Number(String(lat)));
          assert.equal(fix.lng, Number(String(lon)));
          assert.ok(Math.abs((fix.speed ?? Number.NaN) - (knots * 1852) / 3600) <= 1e-9 * Math.max(1, knots));
          assert.equal(fix.heading, null);
          assert.equal(fix.accuracy, null);
          assert.equal(fix.timestamp, new Date(s * 1000).toISOString());
          assert.equal(fix.deviceExternalId, 'x');
          assert.deepEqual(fix.metadata, { batt, charge: false }, 'the token is never metadata');
        },
      ),
      RUNS,
    );
  });

  test('OwnTracks: vel km/h → m/s, cog wraps to [0, 360), X-Limit-D names the device', () => {
    fc.assert(
      fc.property(
        latitude,
        longitude,
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 720 }),
        seconds,
        (lat, lon, vel, cog, tst) => {
          const payload = readOwnTracks(
            { _type: 'location', lat, lon, vel, cog, tst, tid: 'ab', topic: 'owntracks/u/topic-device' },
            { device: 'header-device', user: 'u' },
          );
          assert.deepEqual(payload.issues, []);
          const [fix] = payload.fixes;
          assert.ok(fix);
          assert.ok(Math.abs((fix.speed ?? Number.NaN) - vel / 3.6) <= 1e-9 * Math.max(1, vel));
          assert.equal(fix.heading, cog % 360);
          assert.equal(fix.timestamp, new Date(tst * 1000).toISOString());
          assert.equal(fix.deviceExternalId, 'header-device');
        },
      ),
      RUNS,
    );
  });

  test('Overland: coordinates are [lng, lat]; −1 speed and course unknown; negative vertical accuracy drops altitude', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(latitude, longitude, fc.integer({ min: -1, max: 50 })), {
          minLength: 1,
          maxLength: 20,
        }),
        (points) => {
          const payload = readOverland(
            {
              locations: points.map(([lat, lng, v]) => ({
                type: 'Feature',
                geometry: { type: 'Point', coordinates: [lng, lat] },
                properties: {
                  timestamp: '2026-03-10T11:00:00Z',
                  speed: v,
                  course: v,
                  altitude: 7,
                  vertical_accuracy: v,
                },
              })),
            },
            1000,
          );
          assert.deepEqual(payload.issues, []);
          assert.equal(payload.fixes.length, points.length);
          payload.fixes.forEach((fix, i) => {
            const [lat, lng, v] = points[i] ?? [0, 0, 0];
            assert.equal(fix.lat, lat);
            assert.equal(fix.lng, lng);
            assert.equal(fix.speed, v < 0 ? null : v);
            assert.equal(fix.heading, v < 0 ? null : v);
            assert.equal(fix.altitude, v < 0 ? null : 7);
            assert.deepEqual(fix.locs.lat, ['body', 'locations', i, 'geometry', 'coordinates', 1]);
          });
        },
      ),
      RUNS,
    );
  });

  test('the readers never throw on arbitrary bodies, and name only fields of the request', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.string(), { nil: undefined }), (body, device) => {
        wellFormed(readOwnTracks(body, { device }), ['body']);
        wellFormed(readOwnTracks({ _type: 'location', ...(asObject(body) ?? {}) }, { device }), ['body']);
        wellFormed(readOverland(body, 1000), ['body']);
        wellFormed(readOverland({ locations: Array.isArray(body) ? body : [body] }, 1000), ['body']);
        const object = asObject(body);
        if (object) {
          wellFormed(readTraccarJson(object), ['body']);
          wellFormed(readTraccarJson({ location: { coords: object, timestamp: object.timestamp } }), [
            'body',
          ]);
        }
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom(
            'id',
            'deviceid',
            'lat',
            'lon',
            'location',
            'timestamp',
            'speed',
            'bearing',
            'heading',
            'altitude',
            'accuracy',
            'batt',
            'x',
          ),
          fc.oneof(fc.string(), fc.double().map(String), fc.integer().map(String)),
        ),
        (params) => wellFormed(readOsmAndParams(params, {}), ['query']),
      ),
      { numRuns: 500 },
    );
  });
});

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
