/**
 * Shared pieces of the tests of contract §4.5 (dwell, exit buffer, accuracy gate): distances in
 * metres along a meridian (exact for the haversine distance and for a distance to an east-west
 * edge, whatever metric the service uses across short distances), the geofence record with its
 * rules, and a track walker that labels each event with the fix that produced it.
 */
import type { GeofenceOut } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import { type Credentials, type EventOut, postLocation } from './helpers.ts';

/** Metres per degree of latitude on the contract's mean Earth radius (6,371,008.8 m). */
export const M_PER_DEG_LAT = (6_371_008.8 * Math.PI) / 180;

/** The latitude `metres` north of `lat` (south when negative). */
export function northOf(lat: number, metres: number): number {
  return lat + metres / M_PER_DEG_LAT;
}

export interface FenceRulesOut {
  dwell_seconds: number | null;
  exit_buffer_m: number | null;
  max_accuracy_m: number | null;
}

export type RuledGeofenceOut = GeofenceOut & FenceRulesOut;

export const NULL_RULES: FenceRulesOut = { dwell_seconds: null, exit_buffer_m: null, max_accuracy_m: null };

export async function createRuledGeofence(
  t: TestApp,
  credentials: Credentials,
  body: Record<string, unknown>,
): Promise<RuledGeofenceOut> {
  const res = await call(t, '/geofences', { ...credentials, body });
  return expectStatus<RuledGeofenceOut>(res, 201, `create geofence ${JSON.stringify(body.name)}`);
}

export async function patchGeofence(
  t: TestApp,
  credentials: Credentials,
  id: string,
  body: Record<string, unknown>,
): Promise<RuledGeofenceOut> {
  const res = await call(t, `/geofences/${id}`, { ...credentials, method: 'PATCH', body });
  return expectStatus<RuledGeofenceOut>(res, 200, `patch geofence ${JSON.stringify(body)}`);
}

export interface Fix {
  lng: number;
  lat: number;
  accuracy?: number;
}

/**
 * Posts fixes of one device, 10 s apart from `start`, and answers each event as
 * `<type>:<label>@<fix number>`, in the order the POST answers gave them.
 */
export function trackWalker(
  t: TestApp,
  credentials: Credentials,
  deviceId: string,
  labels: ReadonlyMap<string, string>,
  start: number,
) {
  let n = 0;
  const all: EventOut[] = [];
  return {
    events: all,
    async walk(fixes: readonly Fix[]): Promise<string[]> {
      const out: string[] = [];
      for (const fix of fixes) {
        const k = n++;
        const { events } = await postLocation(t, credentials, deviceId, {
          coordinates: [fix.lng, fix.lat],
          timestamp: new Date(start + k * 10_000).toISOString(),
          ...(fix.accuracy === undefined ? {} : { accuracy: fix.accuracy }),
        });
        all.push(...events);
        for (const e of events)
          out.push(`${e.event_type}:${labels.get(e.geofence_id) ?? e.geofence_id}@${k}`);
      }
      return out;
    },
  };
}
