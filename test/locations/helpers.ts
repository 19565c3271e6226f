/** Shared pieces of the location-pipeline tests: record types and HTTP shortcuts. */
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type Page } from '../helpers/identity.ts';

export interface PointOut {
  type: 'Point';
  coordinates: [number, number];
}

export interface DeviceOut {
  id: string;
  workspace_id: string;
  name: string;
  external_id: string | null;
  user_id: string | null;
  metadata: Record<string, unknown>;
  last_location: { point: PointOut; timestamp: string; accuracy: number | null } | null;
  last_seen_at: string | null;
  inside_geofence_ids: string[];
  created_at: string;
  updated_at: string;
}

export interface LocationOut {
  id: string;
  device_id: string;
  session_id: string | null;
  point: PointOut;
  timestamp: string;
  accuracy: number | null;
  speed: number | null;
  heading: number | null;
  altitude: number | null;
  metadata: Record<string, unknown>;
  out_of_order: boolean;
  received_at: string;
}

export interface EventOut {
  id: string;
  event_id: string;
  event_type: 'enter' | 'exit' | 'dwell';
  event: 'geofence.enter' | 'geofence.exit' | 'geofence.dwell';
  device_id: string;
  user_id: string;
  geofence_id: string;
  geofence_name: string;
  point: PointOut;
  location_id: string;
  session_id: string | null;
  occurred_at: string;
  created_at: string;
  metadata: { geofence_metadata: Record<string, unknown>; event_metadata: Record<string, unknown> };
}

export interface SessionOut {
  id: string;
  device_id: string;
  status: 'active' | 'completed';
  started_at: string;
  ended_at: string | null;
  metadata: Record<string, unknown>;
  summary: {
    location_count: number;
    distance_m: number;
    duration_s: number;
    event_count: number;
    geofence_ids_visited: string[];
  };
}

export interface BatchOut {
  accepted: number;
  rejected: Array<{
    index: number;
    detail: string | Array<{ type: string; loc: Array<string | number>; msg: string }>;
  }>;
  events: EventOut[];
}

export type Credentials = { token?: string; apiKey?: string };

export async function createDevice(
  t: TestApp,
  credentials: Credentials,
  body: Record<string, unknown> = {},
): Promise<DeviceOut> {
  const res = await call(t, '/devices', { ...credentials, body: { name: 'device', ...body } });
  return expectStatus<DeviceOut>(res, 201, 'create device');
}

export async function getDevice(t: TestApp, credentials: Credentials, id: string): Promise<DeviceOut> {
  return expectStatus<DeviceOut>(await call(t, `/devices/${id}`, credentials), 200, 'get device');
}

/** Base time of the scenario walks: an hour before the test clock, one step per 10 s. */
export const WALK_START = Date.parse('2026-03-10T11:00:00.000Z');
export function at(step: number): string {
  return new Date(WALK_START + step * 10_000).toISOString();
}

export async function postLocation(
  t: TestApp,
  credentials: Credentials,
  deviceId: string,
  body: Record<string, unknown>,
): Promise<{ location: LocationOut; events: EventOut[] }> {
  const res = await call(t, `/devices/${deviceId}/locations`, { ...credentials, body });
  return expectStatus(res, 201, `location ${JSON.stringify(body)}`);
}

/** Posts `[lng, lat]` at `at(step)` and returns the events as `type:geofence-label` strings. */
export function walker(t: TestApp, credentials: Credentials, deviceId: string, labels: Map<string, string>) {
  let step = 0;
  return async (lng: number, lat: number, options: { step?: number } = {}): Promise<string[]> => {
    const s = options.step ?? step++;
    const { events } = await postLocation(t, credentials, deviceId, {
      coordinates: [lng, lat],
      timestamp: at(s),
    });
    return events.map((e) => describeEvent(e, labels));
  };
}

export function describeEvent(
  e: Pick<EventOut, 'event_type' | 'geofence_id'>,
  labels: Map<string, string>,
): string {
  return `${e.event_type}:${labels.get(e.geofence_id) ?? e.geofence_id}`;
}

export async function listAll<T>(
  t: TestApp,
  credentials: Credentials,
  path: string,
  query: Record<string, string> = {},
): Promise<T[]> {
  const out: T[] = [];
  for (let offset = 0; ; offset += 200) {
    const res = await call(t, path, {
      ...credentials,
      query: { ...query, limit: '200', offset: String(offset) },
    });
    const body = expectStatus<Page<T>>(res, 200, `list ${path}`);
    out.push(...body.results);
    if (!body.pagination.has_more) return out;
  }
}

/** Every event of a device, oldest first (the API lists newest first). */
export async function deviceEvents(
  t: TestApp,
  credentials: Credentials,
  deviceId: string,
): Promise<EventOut[]> {
  return (await listAll<EventOut>(t, credentials, '/events', { device_id: deviceId })).reverse();
}
