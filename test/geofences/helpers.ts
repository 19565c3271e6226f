/** Shared pieces of the geofence tests: the record type, shapes, and HTTP shortcuts. */
import type { TestApp } from '../helpers/app.ts';
import { type CallOptions, call, expectStatus, type Page } from '../helpers/identity.ts';

export type Position = [number, number];

export interface GeofenceOut {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  external_id: string | null;
  geometry:
    | { type: 'Polygon'; coordinates: Position[][] }
    | { type: 'Circle'; coordinates: Position; radius: number };
  metadata: Record<string, unknown>;
  enabled: boolean;
  bbox: [number, number, number, number];
  created_at: string;
  updated_at: string;
}

export type Credentials = Pick<CallOptions, 'token' | 'apiKey'>;

/** An axis-aligned rectangle as a closed counter-clockwise ring. */
export function rect(west: number, south: number, east: number, north: number): Position[] {
  return [
    [west, south],
    [east, south],
    [east, north],
    [west, north],
    [west, south],
  ];
}

export function polygon(...rings: Position[][]) {
  return { type: 'Polygon' as const, coordinates: rings };
}

export function circle(lng: number, lat: number, radius: number) {
  return { type: 'Circle' as const, coordinates: [lng, lat] as Position, radius };
}

/** A deterministic PRNG (LCG) so that failures are reproducible. */
export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** A simple star-shaped ring around (cx, cy): angles strictly increasing, so never self-intersecting. */
export function starRing(
  rand: () => number,
  cx: number,
  cy: number,
  maxR: number,
  vertices: number,
): Position[] {
  const ring: Position[] = [];
  for (let k = 0; k < vertices; k++) {
    const a = ((k + 0.8 * rand()) * 2 * Math.PI) / vertices;
    const r = maxR * (0.3 + 0.7 * rand());
    ring.push([cx + r * Math.cos(a), cy + r * Math.sin(a)]);
  }
  ring.push(ring[0] as Position);
  return ring;
}

export async function createGeofence(
  t: TestApp,
  credentials: Credentials,
  body: Record<string, unknown>,
): Promise<GeofenceOut> {
  const res = await call(t, '/geofences', { ...credentials, body });
  return expectStatus<GeofenceOut>(res, 201, `create geofence ${JSON.stringify(body.name)}`);
}

export async function containing(
  t: TestApp,
  credentials: Credentials,
  lng: number,
  lat: number,
  extra: Record<string, string> = {},
): Promise<Page<GeofenceOut>> {
  const res = await call(t, '/geofences/contains', {
    ...credentials,
    query: { lng: String(lng), lat: String(lat), limit: '200', ...extra },
  });
  return expectStatus<Page<GeofenceOut>>(res, 200, `contains ${lng},${lat}`);
}

/** The ids of `contains`, sorted (the endpoint orders newest first; tests compare sets). */
export async function containingIds(
  t: TestApp,
  credentials: Credentials,
  lng: number,
  lat: number,
): Promise<string[]> {
  return (await containing(t, credentials, lng, lat)).results.map((g) => g.id).sort();
}
