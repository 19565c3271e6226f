/**
 * The tracker payloads as the OpenAPI document shows them (contract §4.6). The routes read them
 * with their own adapters (owntracks.ts, osmand.ts, overland.ts), which name the client's field in
 * a 400, so these schemas describe and illustrate; they are not what rejects a request.
 */
import { Type } from 'typebox';
import { component } from '../http/components.ts';

const num = (description: string) => Type.Optional(Type.Number({ description }));
const text = (description: string) => Type.Optional(Type.String({ description }));

export const OwnTracksMessage = Type.Object(
  {
    _type: Type.String({
      description: '`location` is stored; any other message type is answered `[]` and stored as nothing',
    }),
    lat: num('Latitude, degrees'),
    lon: num('Longitude, degrees'),
    tst: Type.Optional(Type.Integer({ description: 'Time of the fix, epoch seconds' })),
    acc: num('Horizontal accuracy, metres'),
    alt: num('Altitude, metres'),
    vel: num('Speed, km/h (stored as m/s)'),
    cog: num('Course over ground, degrees'),
    batt: num('Battery, percent (kept in metadata)'),
    tid: text('Tracker id, two characters; names the device when neither X-Limit-D nor topic does'),
    topic: text('`owntracks/<user>/<device>`: its last segment names the device when X-Limit-D does not'),
  },
  {
    additionalProperties: true,
    description:
      'An OwnTracks message as the app sends it in HTTP mode. Every field beyond the position, time, accuracy, altitude, speed and course is kept in the location’s `metadata`.',
  },
);
component('OwnTracksMessage', OwnTracksMessage);

export const OwnTracksAnswer = Type.Array(Type.Unknown(), {
  maxItems: 0,
  description: 'Always `[]`: no messages for the app; any 200 makes it drop the message from its queue',
});

export const OsmAndParams = Type.Object(
  {
    id: text('The device’s identifier (its external id here); or `deviceid`'),
    lat: text('Latitude, degrees'),
    lon: text('Longitude, degrees'),
    location: text('`lat,lon` in one parameter, instead of lat and lon'),
    timestamp: text(
      'Epoch seconds or milliseconds, or ISO 8601 (`yyyy-MM-dd HH:mm:ss` is UTC); default: the receive time',
    ),
    speed: text('Speed, KNOTS (stored as m/s)'),
    bearing: text('Course, degrees; or `heading`'),
    altitude: text('Altitude, metres'),
    accuracy: text('Horizontal accuracy, metres'),
    hdop: text('Kept in metadata'),
    batt: text('Battery percent, kept in metadata'),
    charge: text('`true` while charging, kept in metadata'),
  },
  {
    additionalProperties: true,
    description:
      'OsmAnd protocol parameters (Traccar Client, GPSLogger). Any other parameter is kept in the location’s `metadata`.',
  },
);
// Not a named component: a query schema must stay inline for the document to list its parameters.

export const TraccarClientLocation = Type.Object(
  {
    device_id: text('The device’s identifier (its external id here)'),
    location: Type.Object(
      {
        timestamp: Type.String({ description: 'ISO 8601' }),
        coords: Type.Object(
          {
            latitude: Type.Number(),
            longitude: Type.Number(),
            accuracy: num('Metres'),
            speed: num('m/s; negative: unknown'),
            heading: num('Degrees; negative: unknown'),
            altitude: num('Metres'),
          },
          { additionalProperties: true },
        ),
        battery: Type.Optional(
          Type.Object(
            { level: num('0..1'), is_charging: Type.Optional(Type.Boolean()) },
            { additionalProperties: true },
          ),
        ),
        is_moving: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: true },
    ),
  },
  {
    additionalProperties: true,
    description:
      'Traccar Client’s JSON (version 9 on). `location` beyond coords and timestamp (battery, motion, activity, odometer, event…) is kept in `metadata`.',
  },
);
component('TraccarClientLocation', TraccarClientLocation);

export const TrackerAnswer = Type.Object(
  { result: Type.Literal('ok', { description: 'Every location of the request is stored' }) },
  { additionalProperties: false },
);
component('TrackerAnswer', TrackerAnswer);

const OverlandFeature = Type.Object(
  {
    type: Type.Literal('Feature'),
    geometry: Type.Object({
      type: Type.Literal('Point'),
      coordinates: Type.Array(Type.Number(), { minItems: 2, maxItems: 3, description: '[lng, lat]' }),
    }),
    properties: Type.Object(
      {
        timestamp: Type.String({ description: 'ISO 8601' }),
        horizontal_accuracy: num('Metres'),
        speed: num('m/s; −1: unknown'),
        course: num('Degrees; −1: unknown'),
        altitude: num('Metres'),
        device_id: text('The device name set in the app: the device’s external id here'),
        battery_level: num('0..1, kept in metadata'),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

export const OverlandBatch = Type.Object(
  {
    locations: Type.Array(OverlandFeature, { maxItems: 1000 }),
    current: Type.Optional(Type.Unknown()),
    trip: Type.Optional(Type.Unknown()),
  },
  {
    additionalProperties: true,
    description: 'An Overland batch: up to 1000 GeoJSON Point features, stored all or none.',
  },
);
component('OverlandBatch', OverlandBatch);
