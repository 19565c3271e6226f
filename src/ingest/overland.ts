/**
 * Overland (contract §4.6): batches of GeoJSON Point features. Mapping after the app's README
 * ("Receiver endpoint", github.com/aaronpk/Overland-iOS) and its payload builder:
 *   geometry.coordinates            [lng, lat]
 *   properties.timestamp            ISO 8601                    → timestamp
 *   properties.horizontal_accuracy  metres                      → accuracy
 *   properties.speed                m/s (−1: unknown)           → speed
 *   properties.course               degrees (−1: unknown)       → heading
 *   properties.altitude             metres                      → altitude
 *   properties.device_id            the device name set in the app → the device's external id
 *   battery_level, battery_state, motion, activity, wifi, vertical_accuracy, …  → metadata
 * Records that are not fixes share the array and store nothing: app events and visits
 * (`properties.action`, an app event possibly without geometry) and finished trips
 * (`properties.type: "trip"`). The altitude is unknown when `vertical_accuracy` is negative.
 * The app removes a batch from its queue only when the answer is `{"result": "ok"}` (JSON); so the route
 * gives it only once every location of the batch is stored, and stores nothing of a batch holding a
 * location it cannot read (the problem named, 400), rather than leaving the app to resend a
 * half-stored batch.
 */
import type { ValidationIssue } from '../http/validation-errors.ts';
import { FieldReader, LATITUDE, LONGITUDE } from './tracker-fields.ts';
import { extras, heading, knownNonNegative, type TrackerFix, type TrackerPayload } from './tracker-fix.ts';

const MAPPED = new Set(['timestamp', 'horizontal_accuracy', 'speed', 'course', 'altitude']);

export function readOverland(body: unknown, maxItems: number): TrackerPayload {
  const locations = (body as { locations?: unknown } | undefined)?.locations;
  if (!Array.isArray(locations)) {
    return {
      fixes: [],
      issues: [
        { type: 'missing', loc: ['body', 'locations'], msg: 'Field required (an array of GeoJSON Features)' },
      ],
    };
  }
  if (locations.length > maxItems) {
    return {
      fixes: [],
      issues: [
        {
          type: 'too_long',
          loc: ['body', 'locations'],
          msg: `List should have at most ${maxItems} items; set a smaller batch size in the app`,
        },
      ],
    };
  }
  const fixes: TrackerFix[] = [];
  const issues: ValidationIssue[] = [];
  locations.forEach((feature, index) => {
    const read = readFeature(feature, index);
    issues.push(...read.issues);
    fixes.push(...read.fixes);
  });
  return { fixes, issues };
}

function readFeature(feature: unknown, index: number): TrackerPayload {
  const at = ['body', 'locations', index];
  const { geometry, properties } = (feature ?? {}) as { geometry?: unknown; properties?: unknown };
  if (!isFix(properties)) return { fixes: [], issues: [] };
  const coordinates = (geometry as { coordinates?: unknown } | null | undefined)?.coordinates;
  if (!Array.isArray(coordinates)) {
    return {
      fixes: [],
      issues: [
        { type: 'missing', loc: [...at, 'geometry', 'coordinates'], msg: 'Field required ([lng, lat])' },
      ],
    };
  }
  const position = new FieldReader({ 0: coordinates[0], 1: coordinates[1] }, [
    ...at,
    'geometry',
    'coordinates',
  ]);
  const lng = position.number('0', true, LONGITUDE);
  const lat = position.number('1', true, LATITUDE);
  const props =
    typeof properties === 'object' && properties !== null && !Array.isArray(properties)
      ? (properties as Record<string, unknown>)
      : {};
  const read = new FieldReader(props, [...at, 'properties']);
  const timestamp = read.time('timestamp');
  const accuracy = knownNonNegative(read.number('horizontal_accuracy'));
  const speed = knownNonNegative(read.number('speed'));
  const course = heading(read.number('course'));
  const verticalAccuracy = read.number('vertical_accuracy');
  const altitude =
    verticalAccuracy !== undefined && verticalAccuracy < 0 ? null : (read.number('altitude') ?? null);
  const deviceExternalId = read.text('device_id');
  const issues = [...position.issues, ...read.issues];
  if (lat === undefined || lng === undefined) return { fixes: [], issues };
  return {
    fixes: [
      {
        deviceExternalId,
        deviceLoc: read.loc('device_id'),
        lat,
        lng,
        timestamp,
        accuracy,
        speed,
        heading: course,
        altitude,
        metadata: extras(props, MAPPED),
        locs: {
          lng: [...at, 'geometry', 'coordinates', 0],
          lat: [...at, 'geometry', 'coordinates', 1],
          timestamp: read.loc('timestamp'),
          metadata: [...at, 'properties'],
        },
      },
    ],
    issues,
  };
}

/** App events, visits (`action`) and trips (`type: "trip"`) travel in the same array as fixes. */
function isFix(properties: unknown): boolean {
  if (typeof properties !== 'object' || properties === null) return true;
  const p = properties as { action?: unknown; type?: unknown };
  return p.action === undefined && p.type !== 'trip';
}
