/**
 * The tracker routes' examples (contract §4.6): each payload as its app sends it (field names,
 * units and time forms after the documents named in owntracks.ts, osmand.ts and overland.ts).
 */
import type { OperationExamples } from '../http/examples/operation-example.ts';

const ok = { result: 'ok' };

/** OwnTracks for Android, HTTP mode (its `ParserTest` message, with the HTTP mode's topic). */
const ownTracks = {
  _type: 'location',
  topic: 'owntracks/anna/phone',
  created_at: 1773144605,
  _id: 'a1b2c3d4',
  t: 'u',
  batt: 30,
  bs: 2,
  acc: 10,
  vac: 1,
  lat: 52.5163,
  lon: 13.3777,
  alt: 34,
  vel: 18,
  cog: 56,
  tst: 1773144600,
  m: 1,
  conn: 'w',
  tid: 'ph',
};

/** Traccar Client 10's form body (speed in knots, timestamp in epoch seconds). */
const osmandForm = {
  id: 'phone',
  lat: '52.5163',
  lon: '13.3777',
  timestamp: '1773144600',
  accuracy: '5.0',
  altitude: '34.0',
  speed: '9.72',
  bearing: '56.0',
  batt: '87',
  charge: 'true',
};

/** Traccar Client 9's JSON (speed in m/s; −1: unknown). */
const traccarJson = {
  location: {
    timestamp: '2026-03-10T12:10:00.862Z',
    coords: { latitude: 52.5163, longitude: 13.3777, accuracy: 5, speed: 5, heading: -1, altitude: 34 },
    is_moving: true,
    odometer: 1520,
    event: 'motionchange',
    battery: { level: 0.87, is_charging: false },
    activity: { type: 'in_vehicle' },
  },
  device_id: 'phone',
};

const overlandPoint = (lng: number, lat: number, timestamp: string) => ({
  type: 'Feature',
  geometry: { type: 'Point', coordinates: [lng, lat] },
  properties: {
    timestamp,
    altitude: 34,
    speed: 5,
    course: 270,
    horizontal_accuracy: 10,
    vertical_accuracy: 4,
    motion: ['driving'],
    battery_state: 'unplugged',
    battery_level: 0.8,
    device_id: 'phone',
    wifi: '',
  },
});

export const trackerExamples: OperationExamples = {
  'POST /api/v1/ingest/owntracks': { request: ownTracks, responses: { 200: [] } },
  'GET /api/v1/ingest/osmand': { responses: { 200: ok } },
  'POST /api/v1/ingest/osmand': {
    requestByType: { 'application/x-www-form-urlencoded': osmandForm, 'application/json': traccarJson },
    responses: { 200: ok },
  },
  'POST /api/v1/ingest/overland': {
    request: {
      locations: [
        overlandPoint(13.3777, 52.5163, '2026-03-10T12:10:00Z'),
        overlandPoint(13.3785, 52.5159, '2026-03-10T12:10:05Z'),
      ],
    },
    responses: { 200: ok },
  },
};
