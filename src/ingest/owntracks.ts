/**
 * OwnTracks in HTTP mode (contract §4.6). Mapping after the OwnTracks booklet, "JSON" and "HTTP"
 * (owntracks.org/booklet/tech/json/, owntracks.org/booklet/tech/http/), and the apps' payload
 * builders (owntracks/android `MessageLocation`, owntracks/ios `OwnTracksLocation`):
 *   lat, lon   degrees
 *   tst        epoch seconds of the fix
 *   acc        horizontal accuracy, metres        → accuracy
 *   alt        metres above sea level             → altitude
 *   vel        km/h (an integer)                  → speed, m/s
 *   cog        course over ground, degrees        → heading
 *   batt, bs, conn, vac, t, m, tid, topic, inregions, SSID, BSSID, created_at, …  → metadata
 * The app POSTs one JSON object per message, with `Content-Type: application/json`, HTTP Basic
 * credentials when a user and password are set, and `X-Limit-U` / `X-Limit-D` naming the user and
 * the device. Messages other than `_type: "location"` (transition, waypoint, lwt, card, status, …)
 * and an empty body store nothing. The app removes a message from its queue on any 2xx and reads
 * the answer as a JSON array of messages for it (cards, commands): the route answers `[]`.
 */

import { FieldReader, LATITUDE, LONGITUDE } from './tracker-fields.ts';
import { extras, heading, knownNonNegative, type TrackerPayload } from './tracker-fix.ts';

const KMH = 1 / 3.6;
const MAPPED = new Set(['_type', 'lat', 'lon', 'tst', 'acc', 'alt', 'vel', 'cog']);

export interface OwnTracksHeaders {
  /** `X-Limit-D`: the device name configured in the app. */
  device?: string | undefined;
  /** `X-Limit-U`: the user name configured in the app. */
  user?: string | undefined;
}

export function readOwnTracks(body: unknown, headers: OwnTracksHeaders): TrackerPayload {
  if (body === undefined || body === null || body === '') return { fixes: [], issues: [] };
  if (typeof body !== 'object' || Array.isArray(body)) {
    return {
      fixes: [],
      issues: [{ type: 'dict_type', loc: ['body'], msg: 'Input should be an OwnTracks message object' }],
    };
  }
  const message = body as Record<string, unknown>;
  if (message._type !== 'location') return { fixes: [], issues: [] };
  const read = new FieldReader(message, ['body']);
  const lat = read.number('lat', true, LATITUDE);
  const lng = read.number('lon', true, LONGITUDE);
  const timestamp = read.time('tst');
  const accuracy = knownNonNegative(read.number('acc'));
  const altitude = read.number('alt') ?? null;
  const velocity = knownNonNegative(read.number('vel'));
  const course = heading(read.number('cog'));
  const topic = read.text('topic');
  const tid = read.text('tid');
  if (lat === undefined || lng === undefined) return { fixes: [], issues: read.issues };
  const metadata = extras(message, MAPPED);
  if (headers.user !== undefined) metadata.owntracks_user = headers.user;
  if (headers.device !== undefined) metadata.owntracks_device = headers.device;
  return {
    fixes: [
      {
        deviceExternalId: headers.device ?? lastSegment(topic) ?? tid,
        deviceLoc: ['header', 'x-limit-d'],
        lat,
        lng,
        timestamp,
        accuracy,
        speed: velocity === null ? null : velocity * KMH,
        heading: course,
        altitude,
        metadata,
        locs: { lat: read.loc('lat'), lng: read.loc('lon'), timestamp: read.loc('tst'), metadata: ['body'] },
      },
    ],
    issues: read.issues,
  };
}

/** `owntracks/anna/phone` → `phone`: the device part of the MQTT-style topic the app sets. */
function lastSegment(topic: string | undefined): string | undefined {
  const segment = topic
    ?.split('/')
    .filter((s) => s !== '')
    .at(-1);
  return segment === undefined || segment === '' ? undefined : segment;
}
