/**
 * The checks on a location that its JSON schema cannot state: exactly one of `point` and
 * `coordinates`, the range of each position member, and a timestamp from 1970 up to 10 minutes
 * ahead of the server clock. (Text and number rules, contract §1, are checked before: on the whole
 * body for one location, item by item for a batch.) Shared by
 * the single and the batch endpoint; problems come back as the contract's 422 issues so the single
 * endpoint answers them as a schema failure and the batch reports them per item.
 */
import type { ValidationIssue } from '../http/validation-errors.ts';
import { isoText } from '../shared/iso-time.ts';

/** The location fields after schema validation (both endpoints share them). */
export interface LocationFields {
  point?: { type: 'Point'; coordinates: number[] } | undefined;
  coordinates?: number[] | undefined;
  timestamp?: string | null | undefined;
  accuracy?: number | null | undefined;
  speed?: number | null | undefined;
  heading?: number | null | undefined;
  altitude?: number | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface ParsedLocation {
  lng: number;
  lat: number;
  /** The location's own time; the receive time when the client sent none. */
  recordedAt: Date;
  /** `recordedAt` as ISO 8601 text, made once (shared/iso-time.ts): it is written several times. */
  recordedAtIso: string;
  accuracy: number | null;
  speed: number | null;
  heading: number | null;
  altitude: number | null;
  metadata: Record<string, unknown>;
}

/**
 * How far ahead of the server clock a timestamp may be. A device clock far in the future would
 * otherwise make every later (correct) location out of order until real time caught up.
 */
export const MAX_FUTURE_SKEW_MS = 10 * 60_000;

/**
 * Contract §4.2: no location before 1970. Older fixes are a device clock that was never set; stored,
 * such a point would sort before every real one and be reported out of order forever after.
 */
export const EARLIEST_TIMESTAMP_MS = Date.UTC(1970, 0, 1);

export type ParseResult = { ok: true; location: ParsedLocation } | { ok: false; issues: ValidationIssue[] };

function rangeIssues(
  value: number,
  min: number,
  max: number,
  loc: Array<string | number>,
  out: ValidationIssue[],
): void {
  if (value < min) {
    out.push({ type: 'greater_than_equal', loc, msg: `Input should be greater than or equal to ${min}` });
  } else if (value > max) {
    out.push({ type: 'less_than_equal', loc, msg: `Input should be less than or equal to ${max}` });
  }
}

/**
 * `prefix` is where the fields sit in the request, e.g. `['body']` or `['body', 'locations', 3]`.
 * `receivedIso` is `receivedAt` as ISO text when the caller has it (a batch makes it once).
 */
export function parseLocation(
  fields: LocationFields,
  receivedAt: Date,
  prefix: Array<string | number>,
  receivedIso?: string,
): ParseResult {
  const issues: ValidationIssue[] = [];
  let position: number[] | undefined;
  let positionLoc: Array<string | number> = prefix;
  if (fields.point !== undefined && fields.coordinates !== undefined) {
    issues.push({
      type: 'value_error',
      loc: prefix,
      msg: 'Give either point or coordinates, not both',
    });
  } else if (fields.point !== undefined) {
    position = fields.point.coordinates;
    positionLoc = [...prefix, 'point', 'coordinates'];
  } else if (fields.coordinates !== undefined) {
    position = fields.coordinates;
    positionLoc = [...prefix, 'coordinates'];
  } else {
    issues.push({ type: 'missing', loc: [...prefix, 'point'], msg: 'Field required (point or coordinates)' });
  }
  const lng = position?.[0] ?? 0;
  const lat = position?.[1] ?? 0;
  if (position) {
    rangeIssues(lng, -180, 180, [...positionLoc, 0], issues);
    rangeIssues(lat, -90, 90, [...positionLoc, 1], issues);
  }
  let recordedAt = receivedAt;
  if (typeof fields.timestamp === 'string') {
    recordedAt = new Date(fields.timestamp);
    if (Number.isNaN(recordedAt.getTime())) {
      issues.push({
        type: 'value_error',
        loc: [...prefix, 'timestamp'],
        msg: 'Input should be a valid date-time',
      });
    } else if (recordedAt.getTime() < EARLIEST_TIMESTAMP_MS) {
      issues.push({
        type: 'value_error',
        loc: [...prefix, 'timestamp'],
        msg: 'Timestamp is before 1970-01-01T00:00:00Z',
      });
    } else if (recordedAt.getTime() > receivedAt.getTime() + MAX_FUTURE_SKEW_MS) {
      issues.push({
        type: 'value_error',
        loc: [...prefix, 'timestamp'],
        msg: `Timestamp is more than ${MAX_FUTURE_SKEW_MS / 60_000} minutes in the future`,
      });
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  const recordedAtIso =
    typeof fields.timestamp === 'string'
      ? isoText(fields.timestamp, recordedAt)
      : (receivedIso ?? receivedAt.toISOString());
  return {
    ok: true,
    location: {
      lng,
      lat,
      recordedAt,
      recordedAtIso,
      accuracy: fields.accuracy ?? null,
      speed: fields.speed ?? null,
      heading: fields.heading ?? null,
      // A GeoJSON position's optional third member is its altitude.
      altitude: fields.altitude ?? fields.point?.coordinates[2] ?? null,
      metadata: fields.metadata ?? {},
    },
  };
}
