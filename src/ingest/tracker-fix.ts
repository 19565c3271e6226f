/**
 * One location as a tracker sent it, mapped onto the location input (contract §4.6): the adapters
 * (owntracks.ts, osmand.ts, overland.ts) produce these; ingest.service.ts checks and stores them
 * through the same path as the JSON routes. Units are already the contract's (speed m/s, heading
 * degrees, accuracy and altitude metres); `locs` says where each value stood in the client's
 * payload, so a problem found later (a latitude of 91, a time in 2099) names the client's field.
 */
import type { ValidationIssue } from '../http/validation-errors.ts';
import type { Loc } from './tracker-fields.ts';

export interface TrackerFix {
  /** The device the payload names by its external id; a device token's own device wins over it. */
  deviceExternalId: string | undefined;
  /** Where the payload names (or would name) its device, for the problem of a missing one. */
  deviceLoc: Loc;
  lng: number;
  lat: number;
  /** ISO 8601; absent = the receive time. */
  timestamp: string | undefined;
  accuracy: number | null;
  speed: number | null;
  heading: number | null;
  altitude: number | null;
  /** The client's other fields (battery, motion, tracker id, …), kept as the location's metadata. */
  metadata: Record<string, unknown>;
  locs: { lng: Loc; lat: Loc; timestamp: Loc; metadata: Loc };
}

/** What an adapter read from one request: its fixes, or the problems that stop it being stored. */
export interface TrackerPayload {
  fixes: TrackerFix[];
  issues: ValidationIssue[];
}

/** CoreLocation and the Android location API say "unknown" with a negative number. */
export function knownNonNegative(value: number | undefined): number | null {
  return value === undefined || value < 0 ? null : value;
}

/** A heading in degrees, 0 ≤ h < 360 (360 is north again); a negative one is "unknown". */
export function heading(value: number | undefined): number | null {
  if (value === undefined || value < 0) return null;
  return value % 360;
}

/** The fields not mapped onto the location's own columns, in the order the client sent them. */
export function extras(
  source: Readonly<Record<string, unknown>>,
  mapped: ReadonlySet<string>,
): Record<string, unknown> {
  // fromEntries defines each key as an own property: a client's `__proto__` stays a plain key.
  return Object.fromEntries(
    Object.entries(source).filter(([key, value]) => !mapped.has(key) && value !== undefined),
  );
}
