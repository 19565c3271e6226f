import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  parseCsvTrack,
  parseGeoJsonTrack,
  parseTrack,
  TrackFormatError,
} from '../../src/simulator/track-file.ts';

test('GeoJSON LineString, Feature and FeatureCollection of timestamped Points', () => {
  assert.deepEqual(parseGeoJsonTrack('{"type":"LineString","coordinates":[[13.4,52.5],[13.5,52.6]]}'), [
    { lng: 13.4, lat: 52.5 },
    { lng: 13.5, lat: 52.6 },
  ]);
  const collection = {
    type: 'FeatureCollection',
    features: [
      {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [1, 2] },
        properties: { timestamp: '2026-01-01T00:00:00Z' },
      },
      { type: 'Feature', geometry: { type: 'Point', coordinates: [3, 4] }, properties: {} },
    ],
  };
  assert.deepEqual(parseGeoJsonTrack(JSON.stringify(collection)), [
    { lng: 1, lat: 2, timestamp: '2026-01-01T00:00:00Z' },
    { lng: 3, lat: 4 },
  ]);
});

test('CSV with a header and optional timestamps', () => {
  assert.deepEqual(parseCsvTrack('lng,lat,timestamp\n13.4,52.5,2026-01-01T00:00:00Z\n13.5, 52.6\n'), [
    { lng: 13.4, lat: 52.5, timestamp: '2026-01-01T00:00:00.000Z' },
    { lng: 13.5, lat: 52.6 },
  ]);
});

test('bad tracks are refused with a message, never a crash', () => {
  assert.throws(() => parseTrack('t.geojson', '{"type":"Polygon","coordinates":[]}'), TrackFormatError);
  assert.throws(() => parseTrack('t.geojson', '{nope'), TrackFormatError);
  assert.throws(() => parseTrack('t.csv', '1,2\nx,y\n'), /line 2/);
  assert.throws(() => parseTrack('t.csv', ''), /no points/);
  assert.throws(() => parseTrack('t.csv', '1,2,yesterday'), /not a timestamp/);
  fc.assert(
    fc.property(fc.string(), fc.boolean(), (text, csv) => {
      try {
        parseTrack(csv ? 'x.csv' : 'x.json', text);
      } catch (error) {
        assert.ok(error instanceof TrackFormatError, String(error));
      }
    }),
    { numRuns: 500 },
  );
});
