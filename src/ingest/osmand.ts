/**
 * The OsmAnd protocol (contract §4.6), as Traccar Client and GPSLogger send it, and Traccar
 * Client's JSON. Mapping after Traccar's own reader of it, `OsmAndProtocolDecoder` (traccar/traccar,
 * src/main/java/org/traccar/protocol/OsmAndProtocolDecoder.java), and the clients' builders
 * (traccar/traccar-client-android `ProtocolFormatter`, mendhak/gpslogger `CustomUrlManager`):
 *
 * Query or form parameters:
 *   id | deviceid                   the device's identifier   → the device's external id
 *   lat, lon | location=lat,lon     degrees
 *   timestamp                       epoch seconds or milliseconds, or ISO 8601 / "yyyy-MM-dd HH:mm:ss"
 *   speed                           KNOTS                      → speed, m/s
 *   bearing | heading               degrees                    → heading
 *   altitude                        metres                     → altitude
 *   accuracy                        metres                     → accuracy
 *   hdop, batt, charge, driverUniqueId, … (anything else)      → metadata
 *
 * Traccar Client's JSON body (version 9 on, built on the Transistorsoft background-geolocation
 * location object):
 *   { "device_id", "location": { "timestamp" (ISO 8601), "coords": { latitude, longitude,
 *     accuracy (m), speed (m/s), heading (degrees), altitude (m) }, "battery": { level (0..1),
 *     is_charging }, "is_moving", "odometer", "activity": { type }, "event", … } }
 * Negative speed, heading and accuracy mean "unknown" there. Both clients count a fix as sent on
 * any 2xx answer; the route answers 200 `{"result": "ok"}` (the body is not read by either).
 *
 * A request with no position at all (neither lat, lon nor location) stores nothing and is answered
 * 200: Traccar Client sends such requests as heartbeats without a fix and to register its push
 * token (`id=…&notificationToken=…`), and would otherwise retry them forever. A request with half a
 * position (lat without lon) is a bad payload (400).
 */

import { FieldReader, LATITUDE, LONGITUDE, type Loc } from './tracker-fields.ts';
import { extras, heading, knownNonNegative, type TrackerFix, type TrackerPayload } from './tracker-fix.ts';

/** One knot in metres per second (1852 m per hour). */
const KNOT = 1852 / 3600;
const MAPPED_PARAMS = new Set([
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
  // The credential, if it rode in the URL: never stored.
  'token',
]);
const MAPPED_COORDS = new Set(['latitude', 'longitude', 'accuracy', 'speed', 'heading', 'altitude']);

/**
 * Query and form parameters: a form field wins over a query parameter of the same name, and a
 * problem is reported where the field was (`["body", …]` or `["query", …]`).
 */
export function readOsmAndParams(
  query: Readonly<Record<string, unknown>>,
  form: Readonly<Record<string, unknown>>,
): TrackerPayload {
  const params = { ...query, ...form };
  const source = { ...params, ...splitLocation(params) };
  // A field stands where it was sent; a missing one (or lat and lon split out of `location`) in the
  // form when there is one, since that is where the fix came from.
  const formSent = Object.keys(form).length > 0;
  const rootOf = (name: string) => (name in form || (!(name in query) && formSent) ? 'body' : 'query');
  const read = new FieldReader(source, (name) => [rootOf(name), name]);
  if (!read.has('lat') && !read.has('lon')) return { fixes: [], issues: [] };
  const lat = read.number('lat', true, LATITUDE);
  const lng = read.number('lon', true, LONGITUDE);
  const timestamp = read.time('timestamp');
  const speed = knownNonNegative(read.number('speed'));
  const course = heading(read.number(read.has('bearing') ? 'bearing' : 'heading'));
  const altitude = read.number('altitude') ?? null;
  const accuracy = knownNonNegative(read.number('accuracy'));
  const idField = read.has('id') ? 'id' : 'deviceid';
  const deviceExternalId = read.text(idField);
  if (lat === undefined || lng === undefined) return { fixes: [], issues: read.issues };
  const fix: TrackerFix = {
    deviceExternalId,
    deviceLoc: read.loc('id'),
    lat,
    lng,
    timestamp,
    accuracy,
    speed: speed === null ? null : speed * KNOT,
    heading: course,
    altitude,
    metadata: typedExtras(extras(params, MAPPED_PARAMS)),
    locs: {
      lat: locOf(read, params, 'lat'),
      lng: locOf(read, params, 'lon'),
      timestamp: read.loc('timestamp'),
      metadata: [Object.keys(form).length > 0 ? 'body' : 'query'],
    },
  };
  return { fixes: [fix], issues: read.issues };
}

/** Traccar Client's JSON body. */
export function readTraccarJson(body: Readonly<Record<string, unknown>>): TrackerPayload {
  const root = new FieldReader(body, ['body']);
  const location = body.location;
  if (typeof location !== 'object' || location === null || Array.isArray(location)) {
    return {
      fixes: [],
      issues: [{ type: 'missing', loc: ['body', 'location'], msg: 'Field required (a location object)' }],
    };
  }
  const loc = location as Record<string, unknown>;
  const coordsValue = loc.coords;
  if (typeof coordsValue !== 'object' || coordsValue === null || Array.isArray(coordsValue)) {
    return {
      fixes: [],
      issues: [{ type: 'missing', loc: ['body', 'location', 'coords'], msg: 'Field required' }],
    };
  }
  const coords = new FieldReader(coordsValue as Record<string, unknown>, ['body', 'location', 'coords']);
  const at = new FieldReader(loc, ['body', 'location']);
  const lat = coords.number('latitude', true, LATITUDE);
  const lng = coords.number('longitude', true, LONGITUDE);
  const timestamp = at.time('timestamp');
  const accuracy = knownNonNegative(coords.number('accuracy'));
  const speed = knownNonNegative(coords.number('speed'));
  const course = heading(coords.number('heading'));
  const altitude = coords.number('altitude') ?? null;
  const deviceExternalId = root.text('device_id');
  const issues = [...root.issues, ...at.issues, ...coords.issues];
  if (lat === undefined || lng === undefined) return { fixes: [], issues };
  const metadata: Record<string, unknown> = extras(loc, new Set(['coords', 'timestamp']));
  const otherCoords = extras(coordsValue as Record<string, unknown>, MAPPED_COORDS);
  if (Object.keys(otherCoords).length > 0) metadata.coords = otherCoords;
  if (deviceExternalId !== undefined) metadata.device_id = deviceExternalId;
  return {
    fixes: [
      {
        deviceExternalId,
        deviceLoc: root.loc('device_id'),
        lat,
        lng,
        timestamp,
        accuracy,
        speed,
        heading: course,
        altitude,
        metadata,
        locs: {
          lat: coords.loc('latitude'),
          lng: coords.loc('longitude'),
          timestamp: at.loc('timestamp'),
          metadata: ['body', 'location'],
        },
      },
    ],
    issues,
  };
}

/** Traccar also takes the position as one `location=lat,lon` parameter. */
function splitLocation(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const location = params.location;
  if (typeof location !== 'string' || params.lat !== undefined || params.lon !== undefined) return {};
  const [lat, lon] = location.split(',');
  return { lat: lat ?? '', lon: lon ?? '' };
}

function locOf(read: FieldReader, params: Readonly<Record<string, unknown>>, name: 'lat' | 'lon'): Loc {
  return params[name] === undefined && params.location !== undefined ? read.loc('location') : read.loc(name);
}

/** Query text that is plainly a number or a boolean is kept as one (battery 87, charge true). */
function typedExtras(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, typedValue(value)]));
}

/** A number without a leading zero (an id such as an RFID "0012345" stays text). */
const PLAIN_NUMBER = /^-?(0|[1-9]\d{0,14})(\.\d+)?$/;

function typedValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  return PLAIN_NUMBER.test(value) ? Number(value) : value;
}
